"""Sensitivity of the box ranking to ±20% changes of weights and thresholds."""

from __future__ import annotations

import pytest

from assay.box import MetricSpec, ScoringProfile, sensitivity

PROFILE = ScoringProfile(
    name="p",
    version="1",
    metrics={
        "cost": MetricSpec(tau=0.10, direction="lower", k=2, weight=1.0),
        "accuracy": MetricSpec(tau=0.80, direction="higher", k=2, weight=1.05),
    },
)
# "cheap" breaks the accuracy limit, "pricey" the cost limit, by the same 50%:
# loss(cheap) = 1.05·1.7247 + 0.0981, loss(pricey) = 1.0·1.7247 + 1.05·0.0981 → pricey wins
# narrowly; +20% on the cost weight makes pricey's loss 1.2·1.7247 + ... → cheap wins.
CHEAP = {"cost": [0.05], "accuracy": [0.70]}
PRICEY = {"cost": [0.15], "accuracy": [0.90]}


def test_close_call_flips_and_is_reported() -> None:
    report = sensitivity({"cheap": CHEAP, "pricey": PRICEY}, PROFILE)
    assert report.ranking == ["pricey", "cheap"]
    assert not report.stable
    flipped = {(p.metric, p.parameter, p.factor) for p in report.flips}
    assert ("cost", "weight", 1.2) in flipped
    assert ("accuracy", "weight", 0.8) in flipped
    unchanged = next(
        p for p in report.perturbations if (p.metric, p.parameter, p.factor) == ("cost", "weight", 0.8)
    )
    assert not unchanged.winner_changed and unchanged.ranking == ["pricey", "cheap"]
    # 2 metrics × 2 parameters × 2 directions
    assert len(report.perturbations) == 8


def test_clear_winner_is_stable() -> None:
    best = {"cost": [0.04], "accuracy": [0.95]}
    report = sensitivity(
        {"best": best, "cheap": CHEAP, "pricey": PRICEY}, PROFILE, parameters=("weight", "tau", "k")
    )
    assert all(p.ranking[0] == "best" for p in report.perturbations)
    assert not any(p.winner_changed for p in report.perturbations)
    assert len(report.perturbations) == 12


def test_thresholds_of_higher_metrics_scale_the_allowance() -> None:
    report = sensitivity({"cheap": CHEAP, "pricey": PRICEY}, PROFILE, parameters=("tau",))
    values = {(p.metric, p.factor): p.value for p in report.perturbations}
    assert values[("accuracy", 0.8)] == pytest.approx(1 - 0.2 * 0.8)  # 0.84
    assert values[("accuracy", 1.2)] == pytest.approx(1 - 0.2 * 1.2)  # 0.76
    assert values[("cost", 1.2)] == pytest.approx(0.12)


def test_verdict_flips() -> None:
    report = sensitivity({"cheap": CHEAP, "pricey": PRICEY}, PROFILE, max_rms_loss=1.05)
    assert report.verdicts is not None
    assert any(p.verdict_flips for p in report.perturbations)
    assert all(set(p.verdict_flips) <= {"cheap", "pricey"} for p in report.perturbations)


def test_sensitivity_errors() -> None:
    with pytest.raises(ValueError, match="relative"):
        sensitivity({"a": CHEAP}, PROFILE, relative=1.5)
    with pytest.raises(ValueError, match="unknown parameters"):
        sensitivity({"a": CHEAP}, PROFILE, parameters=("colour",))
    with pytest.raises(ValueError, match="no configurations"):
        sensitivity({}, PROFILE)
