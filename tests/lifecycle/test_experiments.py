"""Rollout experiments: a flag matrix over two flags gives four arms and main effects
with intervals (cross-checked against least squares); a gate with a guardrail fails a
candidate that improves the primary metric but drops a guardrail beyond its margin."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from assay.core.results import TrialResult
from assay.gate import evaluate, policy_from_yaml
from assay.gate.policy import PolicyError
from assay.lifecycle.factorial import arms_of, factorial_effects, reference_level
from assay.runner.api import Run
from assay.store import Store
from tests.support.cli import assay_main


def cli(db: Path, *args: str, code: int = 0) -> str:
    result = assay_main(*args, "--store", str(db))
    assert result.code == code, f"exit {result.code}\n{result.stdout}\n{result.stderr}"
    return result.stdout if code in (0, 1) else result.err


def synthetic(levels: dict, rng: np.random.Generator, tasks: int = 40) -> list[TrialResult]:
    """Rewards with known effects: base 0.4, a +0.3, b +0.1, a:b interaction +0.1 (each ±1 coded half)."""
    xa = 1 if levels["a"] == "on" else -1
    xb = 1 if levels["b"] == "on" else -1
    p = 0.55 + 0.15 * xa + 0.05 * xb + 0.05 * xa * xb
    return [
        TrialResult("r", f"t{t}", i, 0, "h", int(rng.random() < p), "user_stop")  # type: ignore[arg-type]
        for t in range(tasks)
        for i in range(3)
    ]


def test_factorial_effects_match_least_squares() -> None:
    statsmodels = pytest.importorskip("statsmodels.api")
    factors = {"a": ["off", "on"], "b": ["on", "off"]}
    assert [reference_level(v) for v in factors.values()] == ["off", "off"]
    rng = np.random.default_rng(0)
    arms = [(lv, synthetic(lv, rng)) for lv in arms_of(factors)]
    result = factorial_effects(factors, arms, n_resamples=500)
    assert len(result["arms"]) == 4 and result["tasks"] == 40
    rows, y = [], []
    for lv, results in arms:
        rates: dict[str, list[int]] = {}
        for r in results:
            rates.setdefault(r.task_id, []).append(r.reward or 0)
        for task, values in rates.items():
            xa, xb = (1 if lv["a"] == "on" else -1), (1 if lv["b"] == "on" else -1)
            rows.append([1, xa, xb, xa * xb, *[task == f"t{t}" for t in range(1, 40)]])
            y.append(np.mean(values))
    fit = statsmodels.OLS(np.array(y, dtype=float), np.array(rows, dtype=float)).fit()
    effects = {t["term"]: t for t in [*result["main_effects"], *result["interactions"]]}
    for i, term in ((1, "a"), (2, "b"), (3, "a:b")):
        assert effects[term]["effect"] == pytest.approx(2 * fit.params[i], abs=1e-4)
        low, high = effects[term]["ci"]
        assert low < effects[term]["effect"] < high
        ols_low, ols_high = 2 * fit.conf_int()[i]
        assert abs(low - ols_low) < 0.05 and abs(high - ols_high) < 0.05  # bootstrap ≈ normal theory here
    assert effects["a"]["ci"][0] > 0.15 and effects["a"]["p_value"] < 0.01
    with pytest.raises(ValueError, match="lacks arm"):
        factorial_effects(factors, arms[:3])


def test_three_level_flags_get_one_effect_per_level() -> None:
    factors = {"mode": ["fast", "slow", "off"], "b": ["off", "on"]}
    rng = np.random.default_rng(1)
    arms = []
    for lv in arms_of(factors):
        p = {"off": 0.5, "fast": 0.8, "slow": 0.6}[lv["mode"]]
        arms.append(
            (
                lv,
                [TrialResult("r", f"t{t}", 0, 0, "h", int(rng.random() < p), "user_stop") for t in range(60)],
            )
        )  # type: ignore[arg-type]
    result = factorial_effects(factors, arms, n_resamples=300)
    assert [t["term"] for t in result["main_effects"]] == ["mode=fast", "mode=slow", "b"]
    assert result["interactions"] == [] and "no interactions with mode" in result["notes"][0]


@pytest.fixture(scope="module")
def experiment(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    db = tmp_path_factory.mktemp("exp") / "e.db"
    out = cli(
        db,
        "run",
        "retail",
        "-a",
        "builtin:retail-flagged",
        "--flag-matrix",
        "confirm=on,off",
        "--flag-matrix",
        "identity=off,on",
        "-k",
        "1",
        "--run-id",
        "exp",
        "--json",
    )
    return db, json.loads(out)


def test_two_flags_give_four_arms_and_main_effects_with_intervals(experiment: tuple[Path, dict]) -> None:
    db, doc = experiment
    assert doc["schema"] == "assay.experiment/1" and len(doc["arms"]) == 4
    assert doc["spec"]["flag_matrix"] == {"confirm": ["on", "off"], "identity": ["off", "on"]}
    runs = [Run.load(a["run_id"], Store(db)) for a in doc["arms"]]
    assert len({r.info.config_hash for r in runs}) == 4  # each arm its own configuration
    assert runs[0].info.config.flags == {"confirm": "on", "identity": "off"}
    a = doc["analysis"]
    effects = {t["term"]: t for t in [*a["main_effects"], *a["interactions"]]}
    assert set(effects) == {"confirm", "identity", "confirm:identity"}
    for term in effects.values():
        assert term["ci"][0] <= term["effect"] <= term["ci"][1] and term["tasks"] == 52
    assert effects["confirm"]["ci"][0] > 0.1 and effects["identity"]["ci"][0] > 0.1  # both checks matter
    best = next(r for r in a["arms"] if r["arm"] == "confirm=on,identity=on")
    assert best["success_rate"] == 1.0
    shown = json.loads(cli(db, "experiment", "show", "exp", "--json"))
    assert shown["analysis"]["main_effects"] == a["main_effects"]
    assert json.loads(cli(db, "experiment", "list", "--json"))[0]["arms"] == 4


def test_flag_with_levels_crosses_like_flag_matrix(experiment: tuple[Path, dict]) -> None:
    """``--flag a=on/off --flag b=off/on`` is the matrix ``--flag-matrix a=on,off ...``:
    the same four arms (same configurations, same flags) and the same analysis."""
    db, matrix = experiment
    doc = json.loads(
        cli(
            db,
            "run",
            "retail",
            "-a",
            "builtin:retail-flagged",
            "--flag",
            "confirm=on/off",
            "--flag",
            "identity=off/on",
            "-k",
            "1",
            "--run-id",
            "exp-slash",
            "--json",
        )
    )
    assert doc["schema"] == "assay.experiment/1" and len(doc["arms"]) == 4
    assert doc["spec"]["flag_matrix"] == matrix["spec"]["flag_matrix"] and doc["spec"]["flags"] == {}
    assert [(a["flags"], a["config_hash"]) for a in doc["arms"]] == [
        (a["flags"], a["config_hash"]) for a in matrix["arms"]
    ]
    assert doc["analysis"] == matrix["analysis"]
    assert doc["arms"][0]["run_id"] == "exp-slash-confirm_on-identity_off"
    # a fixed flag next to crossed ones is set in every arm
    mixed = json.loads(
        cli(db, "run", "retail", "-a", "builtin:retail-flagged", "--flag", "confirm=on/off", "--flag",
            "identity=off", "--task", "cancel-pending", "-k", "1", "--run-id", "exp-mixed", "--json")
    )  # fmt: skip
    assert [a["flags"] for a in mixed["arms"]] == [{"confirm": "on"}, {"confirm": "off"}]
    runs = [Run.load(a["run_id"], Store(db)) for a in mixed["arms"]]
    assert [r.info.config.flags for r in runs] == [
        {"identity": "off", "confirm": "on"},
        {"identity": "off", "confirm": "off"},
    ]


def test_flag_matrix_errors(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    assert "expected NAME=LEVEL,LEVEL" in cli(db, "run", "retail", "--flag-matrix", "x=on", code=2)
    assert "both fixed (flags) and crossed" in cli(
        db, "run", "retail", "--flag", "x=1", "--flag-matrix", "x=0,1", code=2
    )
    err = cli(
        db,
        "robustness",
        "retail",
        "--flag-matrix",
        "x=0,1",
        "--faults",
        "get_order_details:timeout@0.3",
        code=2,
    )
    assert "plain assay run" in err
    assert "a level is empty" in cli(db, "run", "retail", "--flag", "x=on/", code=2)
    assert "already crossed" in cli(
        db, "run", "retail", "--flag", "x=on/off", "--flag-matrix", "x=0,1", code=2
    )
    assert "both fixed (flags) and crossed" in cli(
        db, "run", "retail", "--flag", "x=1", "--flag", "y=1", "--flag-matrix", "x=a,b", code=2
    )
    err = cli(
        db, "robustness", "retail", "--flag", "x=0/1", "--faults", "get_order_details:timeout@0.3", code=2
    )
    assert "plain assay run" in err
    assert "no experiment 'nope'" in cli(db, "experiment", "show", "nope", code=2)


ROLLOUT = """
name: rollout
primary: {metric: quality}
guardrails:
  - {metric: redundant_calls, margin: 0.25}
  - {metric: success_rate, margin: 0.05}
"""


@pytest.fixture(scope="module")
def rollout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("rollout") / "g.db"
    cli(db, "run", "retail", "-a", "builtin:retail-flaky", "-p", "slip=0.2", "-k", "2", "--run-id", "control")
    cli(
        db,
        "run",
        "retail",
        "-a",
        "builtin:retail-flagged",
        "--flag",
        "double_check=on",
        "-k",
        "2",
        "--run-id",
        "chatty",
    )
    cli(db, "run", "retail", "-a", "builtin:retail-flagged", "-k", "2", "--run-id", "clean")
    return db


def test_guardrail_fails_a_candidate_that_improves_the_primary(rollout: Path, tmp_path: Path) -> None:
    policy = tmp_path / "rollout.yaml"
    policy.write_text(ROLLOUT)
    doc = json.loads(
        cli(rollout, "gate", "chatty", "--policy", str(policy), "--baseline", "control", "--json", code=1)
    )
    checks = {c["name"]: c for c in doc["checks"]}
    primary = checks["primary: quality improves"]
    assert primary["kind"] == "primary" and primary["status"] == "pass" and primary["value"] > 0.3
    guard = checks["guardrail: redundant_calls"]
    assert guard["kind"] == "guardrail" and guard["status"] == "fail"
    assert guard["details"]["b"] > 0.9 and guard["details"]["margin"] == 0.25
    assert "non-inferiority is not shown" in guard["reason"] and guard["where"].endswith("rollout.yaml:5")
    assert checks["guardrail: success_rate"]["status"] == "pass"
    clean = json.loads(
        cli(rollout, "gate", "clean", "--policy", str(policy), "--baseline", "control", "--json")
    )
    assert clean["passed"] and [c["status"] for c in clean["checks"]] == ["pass", "pass", "pass"]
    same = json.loads(
        cli(rollout, "gate", "clean", "--policy", str(policy), "--baseline", "clean", "--json", code=1)
    )
    assert same["checks"][0]["status"] == "fail"  # no improvement shown over itself
    skipped = evaluate(Run.load("clean", Store(rollout)), policy_from_yaml(ROLLOUT))
    assert [c.status for c in skipped.checks] == ["skip", "skip", "skip"] and skipped.passed


def test_rollout_policy_errors() -> None:
    with pytest.raises(PolicyError, match="a guardrail is a non-inferiority check"):
        policy_from_yaml("guardrails: [{metric: cost_usd, margin: 0.1, test: regression}]\n")
    with pytest.raises(
        PolicyError, match=r"<policy>:1: guardrails\[0\]: give margin \(in the metric.s units\), margin_pct"
    ):
        policy_from_yaml("guardrails: [{metric: cost_usd}]\n")
    with pytest.raises(PolicyError, match="superiority"):
        policy_from_yaml("primary: {metric: quality, min_improvement: 0.1}\n")
    assert policy_from_yaml("primary: {metric: latency_s, min_improvement: 0.5}\n").primary is not None
