"""Scoring and ranking configurations against a profile."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.box import (
    MetricSpec,
    ScoringProfile,
    rank_configs,
    score_config,
    trial_breakdown,
    trial_losses,
)
from assay.errors import AssayError

PROFILE = ScoringProfile(
    name="support",
    version="1",
    metrics={
        "cost": MetricSpec(tau=0.10, direction="lower", k=2, weight=1),
        "latency": MetricSpec(tau=5.0, direction="lower", k=2, weight=1),
        "accuracy": MetricSpec(tau=0.80, direction="higher", k=4, weight=2),
    },
)

# Two trials, computed by hand:
# trial 1: cost .05 → b .5 → softplus(-1)² = .098133; latency 5 → b 1 → (ln 2)² = .480453;
#          accuracy .9 → b .5 → softplus(4·(-.5))² = .016111, ×2 = .032221 → total .610807
# trial 2: cost .15 → b 1.5 → softplus(1)² = 1.724656; latency 2.5 → b .5 → .098133;
#          accuracy .7 → b 1.5 → softplus(2)² = 4.523823, ×2 = 9.047646 → total 10.870435
# RMSLoss = sqrt((log(1.610807)² + log(11.870435)²)/2) = sqrt((.476736² + 2.474045²)/2) = 1.781601
TWO_TRIALS = {"cost": [0.05, 0.15], "latency": [5.0, 2.5], "accuracy": [0.9, 0.7]}


def test_trial_losses_hand_values() -> None:
    losses = trial_losses(TWO_TRIALS, PROFILE)
    assert losses.tolist() == pytest.approx([0.6108073388, 10.8704346731])
    breakdown = trial_breakdown(TWO_TRIALS, PROFILE)
    assert breakdown.weighted["accuracy"].tolist() == pytest.approx([0.0322214400, 9.0476455283])
    assert breakdown.badness["cost"].tolist() == pytest.approx([0.5, 1.5])
    # trial 1 sits exactly on the latency threshold (badness 1): still inside the box
    assert breakdown.outside.tolist() == [False, True]


def test_score_config_hand_values() -> None:
    score = score_config(TWO_TRIALS, PROFILE, config="big-model", n_resamples=200)
    assert score.rms_loss == pytest.approx(1.7816009990)
    assert score.median_loss == pytest.approx((0.6108073388 + 10.8704346731) / 2)
    assert score.mean_loss == pytest.approx(5.7406210059)
    assert score.tail_share == 0.5
    assert score.metric_tail_share == {"cost": 0.5, "latency": 0.0, "accuracy": 0.5}
    assert score.metric_loss["accuracy"] == pytest.approx((0.0322214400 + 9.0476455283) / 2)
    assert score.n_trials == 2 and score.n_tasks is None
    assert (score.profile_name, score.profile_version, score.profile_hash) == (
        "support",
        "1",
        PROFILE.hash,
    )
    assert score.config == "big-model"
    # with two trials the bootstrap can only see {t1,t1}, {t1,t2}, {t2,t2}
    assert score.low == pytest.approx(math.log1p(0.6108073388), rel=1e-9)
    assert score.high == pytest.approx(math.log1p(10.8704346731), rel=1e-9)


def _config(
    rng: np.random.Generator, n_tasks: int, k: int, acc_a: float, acc_b: float, cost: float
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    n = n_tasks * k
    values = {
        "cost": rng.gamma(4, cost / 4, n),
        "latency": rng.gamma(4, 0.8, n),
        "accuracy": rng.beta(acc_a, acc_b, n),
    }
    return values, np.repeat([f"task-{i}" for i in range(n_tasks)], k)


def test_score_config_interval_and_task_clustering() -> None:
    rng = np.random.default_rng(0)
    values, tasks = _config(rng, 40, 4, 8, 2, 0.06)
    # make trials of a task alike, as they are in practice
    task_shift = np.repeat(rng.normal(0, 0.08, 40), 4)
    values["accuracy"] = np.clip(values["accuracy"] + task_shift, 0, 1)
    clustered = score_config(values, PROFILE, task_ids=tasks, n_resamples=1000, seed=1)
    plain = score_config(values, PROFILE, n_resamples=1000, seed=1)
    assert clustered.rms_loss == plain.rms_loss
    assert clustered.low < clustered.rms_loss < clustered.high
    assert clustered.n_tasks == 40
    assert score_config(values, PROFILE, task_ids=tasks, n_resamples=1000, seed=1) == clustered
    assert (clustered.high - clustered.low) > (plain.high - plain.low)


def test_rank_configs_orders_by_rms_loss() -> None:
    rng = np.random.default_rng(2)
    good, tasks = _config(rng, 30, 3, 9, 1, 0.05)
    bad, _ = _config(rng, 30, 3, 5, 3, 0.12)
    ranked = rank_configs({"bad": bad, "good": good}, PROFILE, task_ids={"good": tasks}, n_resamples=300)
    assert [s.config for s in ranked] == ["good", "bad"]
    assert ranked[0].rms_loss < ranked[1].rms_loss
    assert ranked[0].n_tasks == 30 and ranked[1].n_tasks is None
    # ties are broken by name
    tied = rank_configs({"b": TWO_TRIALS, "a": TWO_TRIALS}, PROFILE, n_resamples=50)
    assert [s.config for s in tied] == ["a", "b"]


def test_extra_metrics_are_ignored() -> None:
    values = {**TWO_TRIALS, "tokens": [100.0, 200.0]}
    assert trial_losses(values, PROFILE).tolist() == trial_losses(TWO_TRIALS, PROFILE).tolist()


def test_score_errors() -> None:
    with pytest.raises(AssayError, match=r"needs metrics \['accuracy'\]"):
        score_config({"cost": [0.1], "latency": [1.0]}, PROFILE)
    with pytest.raises(ValueError, match="one value per trial"):
        score_config({"cost": [0.1, 0.2], "latency": [1.0], "accuracy": [0.9]}, PROFILE)
    with pytest.raises(ValueError, match="NaN"):
        score_config({"cost": [math.nan], "latency": [1.0], "accuracy": [0.9]}, PROFILE)
    with pytest.raises(ValueError, match="no trials"):
        score_config({"cost": [], "latency": [], "accuracy": []}, PROFILE)
    with pytest.raises(ValueError, match="task_ids"):
        score_config(TWO_TRIALS, PROFILE, task_ids=["t1"])
    with pytest.raises(ValueError, match="no configurations"):
        rank_configs({}, PROFILE)
