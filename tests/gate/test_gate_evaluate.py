"""Gate evaluation: absolute thresholds, relative checks with margins, high-risk, error cap."""

from __future__ import annotations

import pytest

from assay.errors import AssayError
from assay.gate import evaluate, policy_from_yaml
from assay.stats import noninferiority_paired
from tests.compare.fakes import make_run

STRATA = {"h1": "high_risk", "h2": "high_risk"}


def rewards(n: int, high_risk: tuple[list[int | None], list[int | None]] = ([1, 1], [1, 1]), **over) -> dict:
    table: dict[str, list[int | None]] = {f"t{i:02d}": [1, 1] for i in range(n)}
    table["h1"], table["h2"] = list(high_risk[0]), list(high_risk[1])
    table.update(over)
    return table


def test_absolute_checks_and_k_alias() -> None:
    policy = policy_from_yaml(
        "absolute:\n"
        "  - {metric: overall.success_rate, min: 0.9}\n"
        "  - {metric: by_stratum.high_risk.pass_hat_k.k, min: 1.0}\n"
        "  - {metric: by_split.holdout.success_rate, min: 0.5}\n"
        "  - {metric: usage.cost_usd.mean, max: 0.1}\n",
        file="g.yaml",
    )
    run = make_run("R", rewards(8, ([1, 0], [1, 1])), strata=STRATA)
    v = evaluate(run, policy)
    status = {c.name: (c.status, c.value) for c in v.checks}
    assert status["overall.success_rate"] == ("pass", pytest.approx(19 / 20))
    assert status["by_stratum.high_risk.pass_hat_k.k"] == ("fail", pytest.approx(0.5))
    assert status["by_split.holdout.success_rate"][0] == "fail"
    holdout = next(c for c in v.checks if c.name == "by_split.holdout.success_rate")
    assert (
        holdout.reason == "cannot check by_split.holdout.success_rate: the run has no task in split 'holdout'"
    )
    cost = next(c for c in v.checks if c.name == "usage.cost_usd.mean")
    assert cost.status == "fail" and "nothing measured it" in cost.reason
    assert not v.passed and v.exit_code == 1 and v.checks[0].where == "g.yaml:2"


def test_high_risk_gate_is_not_diluted_by_the_average() -> None:
    policy = policy_from_yaml(
        "absolute: [{metric: overall.success_rate, min: 0.9}]\n"
        "high_risk: {stratum: high_risk, each_task_min_pass_hat_k: 1.0}\n"
    )
    good = evaluate(make_run("G", rewards(40), strata=STRATA), policy)
    assert (
        good.passed and good.checks[1].reason == "stratum high_risk: all 2 task(s) hold (4/4 trials passed)"
    )
    one_slip = evaluate(make_run("B", rewards(40, ([1, 0], [1, 1])), strata=STRATA), policy)
    assert one_slip.checks[0].status == "pass"  # 83/84 overall
    hr = one_slip.checks[1]
    assert hr.status == "fail" and hr.reason.startswith("stratum high_risk: 1 of 2 task(s) fail pass^2: h1")
    failing = hr.details["failing_tasks"]
    assert failing[0]["task_id"] == "h1" and failing[0]["reasons"] == ["trial 1: state: end state differs"]
    none_there = evaluate(make_run("N", {"t": [1]}), policy)
    assert none_there.checks[1].status == "fail" and "fewer than the 1" in none_there.checks[1].reason
    run = make_run("T", {"a": [1, 1], "b": [1, 0], "c": [0, 0]}, tags={"a": ["money"], "b": ["money"]})
    by_tag = policy_from_yaml("high_risk: {stratum: null, tags: [money], min_success_rate: 0.75}\n")
    check = evaluate(run, by_tag).checks[0]  # every task must still pass^k by default: b does not
    assert check.status == "fail" and check.value == pytest.approx(0.75) and "1 of 2 task(s)" in check.reason
    rate_only = policy_from_yaml(
        "high_risk: {stratum: null, tags: [money], min_success_rate: 0.75, each_task_min_pass_hat_k: null}\n"
    )
    assert evaluate(run, rate_only).passed


def test_harness_error_cap() -> None:
    policy = policy_from_yaml("max_harness_error_share: 0.05\n")
    run = make_run("H", {"a": [1, None], "b": [1, 1], "c": [1, 1]})
    check = evaluate(run, policy).checks[0]
    assert check.status == "fail" and check.value == pytest.approx(1 / 6)
    assert "1 of 6 trials (16.7%)" in check.reason and check.details["by_termination"] == {"harness_error": 1}


def test_relative_quality_regression_needs_a_real_drop_beyond_the_margin() -> None:
    base = make_run("A", {f"t{i:02d}": [1] for i in range(60)})
    small = make_run("B", {f"t{i:02d}": [0 if i < 2 else 1] for i in range(60)})  # -3.3 pts
    big = make_run("C", {f"t{i:02d}": [0 if i < 15 else 1] for i in range(60)})  # -25 pts
    regression = policy_from_yaml("relative: [{metric: quality, margin: 0.05}]\n")
    assert evaluate(small, regression, base).passed
    failed = evaluate(big, regression, base).checks[0]
    assert failed.status == "fail" and "a drop beyond the margin is shown" in failed.reason
    assert failed.details["p_regression"] == pytest.approx(1 - noninferiority_paired(0, 15, 60, 0.05).p_value)
    assert "tasks solved 100.0% → 75.0% (25.0 pts worse; allowed 5.0 pts)" in failed.reason
    strict = policy_from_yaml("relative: [{metric: quality, margin: 0.05, test: noninferiority}]\n")
    ni = evaluate(small, strict, base).checks[0]
    assert ni.status == "fail" and "non-inferiority is not shown" in ni.reason  # 60 tasks cannot show it
    assert ni.details["p_noninferior"] == pytest.approx(noninferiority_paired(0, 2, 60, 0.05).p_value)
    same = evaluate(base, strict, make_run("A0", {f"t{i:02d}": [1] for i in range(60)}))
    assert same.checks[0].status == "pass"


def test_relative_continuous_with_percent_margin_and_holm() -> None:
    tasks = {f"t{i:02d}": [1, 1] for i in range(20)}
    base = make_run("A", tasks, latency=lambda t, i: 1.0 + 0.01 * int(t[1:]))
    slower = make_run("B", tasks, latency=lambda t, i: 1.6 + 0.01 * int(t[1:]))
    policy = policy_from_yaml(
        "relative:\n  - {metric: latency_s, margin_pct: 20}\n  - {metric: success_rate, margin: 0.05}\n"
    )
    v = evaluate(slower, policy, base)
    latency, success = v.checks
    assert latency.status == "fail" and latency.details["margin"] == pytest.approx(0.2 * 1.095)
    assert latency.details["p_adjusted"] >= latency.details["p_regression"]
    assert "(holm)" in latency.reason and success.status == "pass"
    relaxed = policy_from_yaml("relative: [{metric: latency_s, margin_pct: 100}]\n")
    assert evaluate(slower, relaxed, base).passed


def test_a_margin_and_a_percent_margin_allow_the_larger() -> None:
    """Milliseconds: 4 times slower by 5 ms fails 50% alone, passes with a 0.5 s floor;
    a slowdown past both still fails."""
    tasks = {f"t{i:02d}": [1, 1] for i in range(20)}
    base = make_run("A", tasks, latency=lambda t, i: 0.0015 + 0.0001 * int(t[1:]))
    noisy = make_run("B", tasks, latency=lambda t, i: 0.0065 + 0.0001 * int(t[1:]))
    slow = make_run("C", tasks, latency=lambda t, i: 0.9 + 0.0001 * int(t[1:]))
    pct = policy_from_yaml("relative: [{metric: latency_s, margin_pct: 50}]\n")
    both = policy_from_yaml("relative: [{metric: latency_s, margin_pct: 50, margin: 0.5}]\n")
    assert not evaluate(noisy, pct, base).passed
    verdict = evaluate(noisy, both, base)
    assert verdict.passed and verdict.checks[0].details["margin"] == 0.5
    assert "margin 0.5 or 50% (the larger)" in (verdict.checks[0].threshold or "")
    assert not evaluate(slow, both, base).passed
    big_base = make_run("D", tasks, latency=lambda t, i: 4.0 + 0.01 * int(t[1:]))
    assert evaluate(big_base, both, big_base).checks[0].details["margin"] == pytest.approx(0.5 * 4.095)


def test_relative_checks_without_baseline_and_unknown_direction() -> None:
    policy = policy_from_yaml("relative: [{metric: quality, margin: 0.05}]\n", file="g.yaml")
    v = evaluate(make_run("A", {"t": [1]}), policy)
    assert v.passed and v.checks[0].status == "skip" and v.skipped and "skipped" in v.notes[0]
    strict = policy_from_yaml(
        "require_baseline: true\nrelative: [{metric: quality, margin: 0.05}]\n", file="g.yaml"
    )
    with pytest.raises(AssayError, match=r"g.yaml:2: policy 'gate' has relative checks"):
        evaluate(make_run("A", {"t": [1]}), strict)
    turns = policy_from_yaml("relative: [{metric: turns, margin: 1}]\n", file="g.yaml")
    run = make_run("A", {"t": [1], "u": [1]}, metrics=lambda t, i: {"turns": 3.0})
    with pytest.raises(AssayError, match=r"g.yaml:1: relative\[0\].direction: .* add direction: higher"):
        evaluate(run, turns, run)
    missing = policy_from_yaml("relative: [{metric: cost_usd, margin: 0.01}]\n")
    check = evaluate(run, missing, run).checks[0]
    assert check.status == "fail" and "cannot check cost_usd" in check.reason


def test_verdict_document() -> None:
    policy = policy_from_yaml("name: p\nversion: 3\nabsolute: [{metric: overall.success_rate, min: 0.5}]\n")
    doc = evaluate(make_run("A", {"t": [1]}), policy).to_dict()
    assert doc["schema"] == "assay.gate/1" and doc["passed"] and doc["exit_code"] == 0
    assert doc["policy"]["version"] == "3" and doc["counts"] == {"pass": 1, "fail": 0, "skip": 0}


def test_partial_runs_use_the_trials_they_have() -> None:
    run = make_run("P", {"a": [1, 1], "b": [1, 0]})
    run.info = run.info.model_copy(update={"trials_per_task": 4})  # e.g. an adaptive run stopped early
    v = evaluate(run, policy_from_yaml("absolute: [{metric: overall.pass_hat_k.k, min: 0.5}]\n"))
    assert v.passed and v.checks[0].value == pytest.approx(0.5)
    assert v.notes == ["run P is finished with 4 of 8 planned trials; pass^k paths use k = 2"]
