"""Scoring profiles: YAML loading, validation with file:line problems, content hash."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.box import MetricSpec, ScoringProfile, load_profile, profile_from_yaml
from assay.errors import AssayError, SuiteError

GOOD = """\
name: support-agent
version: 3
description: Budget from finance, latency from the UX study.
metrics:
  cost_usd: {tau: 0.10, direction: lower, k: 2, weight: 1}
  latency_s: {tau: 5.0, direction: lower}
  accuracy:
    tau: 0.80
    direction: higher_is_better
    k: 4
    weight: 2
    note: below this, humans redo the work
"""


def test_loads_good_profile_with_defaults_and_aliases(tmp_path: Path) -> None:
    path = tmp_path / "box.yaml"
    path.write_text(GOOD)
    profile = load_profile(path)
    assert profile.name == "support-agent"
    assert profile.version == "3"
    assert profile.metrics["latency_s"] == MetricSpec(tau=5.0, direction="lower")
    assert profile.metrics["latency_s"].k == 2.0 and profile.metrics["latency_s"].weight == 1.0
    assert profile.metrics["accuracy"].direction == "higher"


def test_hash_is_stable_and_covers_scoring_content_only() -> None:
    profile = profile_from_yaml(GOOD)
    assert profile.hash == profile_from_yaml(GOOD).hash
    assert len(profile.hash) == 16
    reordered = GOOD.replace("  cost_usd: {tau: 0.10, direction: lower, k: 2, weight: 1}\n", "").replace(
        "metrics:\n", "metrics:\n  cost_usd: {weight: 1, k: 2, direction: lower, tau: 0.1}\n"
    )
    assert profile_from_yaml(reordered).hash == profile.hash
    reworded = GOOD.replace("humans redo the work", "people redo it").replace("UX", "user")
    assert profile_from_yaml(reworded).hash == profile.hash
    for old, new in (
        ("tau: 5.0", "tau: 6.0"),
        ("version: 3", "version: 4"),
        ("weight: 2", "weight: 3"),
        ("k: 4", "k: 5"),
        ("name: support-agent", "name: other"),
    ):
        changed = GOOD.replace(old, new)
        assert changed != GOOD
        assert profile_from_yaml(changed).hash != profile.hash, old


def test_with_metric_revalidates() -> None:
    profile = profile_from_yaml(GOOD)
    heavier = profile.with_metric("cost_usd", weight=1.2)
    assert heavier.metrics["cost_usd"].weight == 1.2
    assert heavier.hash != profile.hash
    with pytest.raises(ValueError):
        profile.with_metric("accuracy", tau=1.0)
    with pytest.raises(KeyError):
        profile.with_metric("nope", weight=1.0)


def _problems(text: str) -> list[str]:
    with pytest.raises(SuiteError) as info:
        profile_from_yaml(text, file="box.yaml")
    assert isinstance(info.value, AssayError)
    return [str(p) for p in info.value.problems]


def test_bad_values_are_located_by_line() -> None:
    text = """\
name: support
version: 1
metrics:
  cost_usd: {tau: 0.10, direction: lower}
  latency_s:
    tau: -5
    direction: lower
  accuracy: {tau: 0.8, direction: higher, k: 0, colour: red}
"""
    problems = _problems(text)
    assert "box.yaml:5: metrics.latency_s: tau must be > 0 for a lower-is-better metric, got -5.0" in problems
    assert any(p.startswith("box.yaml:8: metrics.accuracy.k:") for p in problems)
    assert "box.yaml:8: metrics.accuracy.colour: unknown field" in problems


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: x\nversion: 1\n", "box.yaml:1: metrics: required field is missing"),
        ("name: x\nversion: 1\nmetrics: {}\n", "box.yaml:3: metrics:"),
        ("- just\n- a list\n", "box.yaml:1: a scoring profile must be a YAML mapping"),
        ("name: [unclosed\n", "box.yaml:2: YAML syntax error"),
        (
            "name: x\nversion: 1\nmetrics:\n  acc: {tau: 1.2, direction: higher}\n",
            "box.yaml:4: metrics.acc: tau must be < 1",
        ),
        (
            "name: x\nversion: 1\nmetrics:\n  acc: {tau: 0.5, direction: up}\n",
            "box.yaml:4: metrics.acc.direction: unknown direction 'up'",
        ),
        (
            "name: x\nversion: 1\nmetrics:\n  a: {tau: 1, direction: lower, weight: 0}\n",
            "box.yaml:1: at least one metric needs a weight > 0",
        ),
    ],
)
def test_profile_errors(text: str, expected: str) -> None:
    problems = _problems(text)
    assert any(p.startswith(expected) for p in problems), problems


def test_missing_file_is_a_suite_error(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match=r"missing\.yaml: cannot read: No such file"):
        load_profile(tmp_path / "missing.yaml")


def test_profile_model_is_frozen() -> None:
    profile = ScoringProfile(name="p", version="1", metrics={"m": MetricSpec(tau=1.0, direction="lower")})
    with pytest.raises(ValueError):
        profile.name = "q"  # type: ignore[misc]
