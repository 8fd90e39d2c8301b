"""Paired comparison of runs: pairing, tests, multiplicity, slices, flips, box, decision."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

from assay.box import profile_from_yaml
from assay.compare import compare_runs, pair_runs, task_passed
from assay.errors import AssayError
from tests.compare.fakes import make_run, tasks_with


def test_task_outcome_rules() -> None:
    assert task_passed([1, 1, 1]) and not task_passed([1, 1, 0])  # default: all trials (pass^k)
    assert task_passed([1, 1, 0], "majority") and not task_passed([1, 0], "majority")  # a tie fails
    assert task_passed([0, 0, 1], "any") and not task_passed([0, 0], "any")
    with pytest.raises(ValueError):
        task_passed([])


def test_quality_is_mcnemar_exact_on_task_outcomes_with_newcombe_ci() -> None:
    a, b = tasks_with(20, 2, 9, 9, k=2)
    cmp = compare_runs([make_run("A", a), make_run("B", b)], box=False)
    q = cmp.pairs[0].quality
    assert q.extra == {"both": 20, "only_b": 9, "only_a": 2, "neither": 9}
    assert q.p_value == pytest.approx(binomtest(2, 11, 0.5).pvalue)
    assert q.a == pytest.approx(22 / 40) and q.b == pytest.approx(29 / 40)
    assert q.delta == pytest.approx(7 / 40)
    assert q.low is not None and q.low < q.delta < q.high  # type: ignore[operator]
    assert "McNemar exact" in q.test and "pass^k" in q.label


def test_pairs_by_trial_when_asked() -> None:
    a = {"t1": [1, 0, 1], "t2": [1, 1, 1]}
    b = {"t1": [1, 1, 0], "t2": [0, 1, 1]}
    pairing = pair_runs(make_run("A", a), make_run("B", b), match="trial")
    assert len(pairing.units) == 6 and len(pairing.task_units) == 2
    assert [(u.task_id, u.trial_index, u.a_pass, u.b_pass) for u in pairing.units][:3] == [
        ("t1", 0, True, True),
        ("t1", 1, False, True),
        ("t1", 2, True, False),
    ]


def test_different_suite_versions_are_refused_unless_common_only() -> None:
    a = make_run("A", {"t1": [1], "t2": [0], "t3": [1]}, suite_hash="v1")
    b = make_run("B", {"t1": [1], "t2": [1], "t4": [1]}, suite_hash="v2", task_hashes={"t2": "changed"})
    with pytest.raises(AssayError, match=r"different suite versions; pass --common-only") as info:
        compare_runs([a, b])
    assert "\n" not in str(info.value)
    pairing = pair_runs(a, b, common_only=True)
    assert [u.task_id for u in pairing.units] == ["t1"]  # t2 changed content, t3/t4 not shared
    assert any("differ in content" in n for n in pairing.notes)
    assert pairing.only_a == ["t3"] and pairing.only_b == ["t4"]


def test_excluded_trials_are_left_out_and_no_common_task_is_an_error() -> None:
    a = make_run("A", {"t1": [1, None], "t2": [None, None]})
    b = make_run("B", {"t1": [1, 1], "t2": [1, 1]})
    pairing = pair_runs(a, b)
    assert [u.task_id for u in pairing.units] == ["t1"] and pairing.units[0].a_trials == (1, 1)
    assert any("no counted trial" in n for n in pairing.notes)
    with pytest.raises(AssayError, match="share no task"):
        pair_runs(make_run("A", {"x": [1]}), make_run("B", {"y": [1]}), common_only=True)
    with pytest.raises(AssayError, match="given twice"):
        compare_runs([a, a])
    with pytest.raises(AssayError, match="--adjust"):
        compare_runs([a, b], adjust="sidak")


def test_continuous_metrics_paired_by_task_with_skips() -> None:
    rewards = {f"t{i}": [1, 1] for i in range(12)}
    a = make_run("A", rewards, latency=lambda t, i: 2.0 + int(t[1:]) * 0.1, cost=lambda t, i: 0.01)
    b = make_run("B", rewards, latency=lambda t, i: 1.0 + int(t[1:]) * 0.1, metrics=lambda t, i: {"turns": 3})
    rows = {r.metric: r for r in compare_runs([a, b]).pairs[0].rows}  # default box: latency is primary
    lat = rows["latency_s"]
    assert lat.delta == pytest.approx(-1.0) and lat.low == pytest.approx(-1.0)
    assert lat.p_value == pytest.approx(2 / 2**12)  # exact sign flip: all 12 tasks moved the same way
    assert lat.improved is True and lat.family == "primary" and lat.relative == pytest.approx(-1 / 2.55)
    assert rows["cost_usd"].skipped == "only A measured it"
    assert rows["turns"].skipped == "only B measured it" and rows["turns"].direction is None
    assert rows["turns"].family == "secondary"
    no_box = {r.metric: r for r in compare_runs([a, b], box=False).pairs[0].rows}
    assert no_box["latency_s"].family == "secondary"  # without a box only quality is primary


def test_holm_default_and_other_adjustments_match_statsmodels() -> None:
    rng = np.random.default_rng(3)
    base = {f"t{i}": [int(rng.random() < 0.6)] for i in range(40)}
    runs = [make_run("A", base)]
    for name, p in (("B", 0.9), ("C", 0.6)):
        runs.append(make_run(name, {t: [int(rng.random() < p)] for t in base}, agent=f"python:x:{name}"))
    for method, sm in (("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")):
        cmp = compare_runs(runs, adjust=method, box=False)
        primary = [r for p in cmp.pairs for r in p.rows if r.family == "primary" and r.p_value is not None]
        expected = multipletests([r.p_value for r in primary], method=sm)[1]
        assert [r.p_adjusted for r in primary] == pytest.approx(list(expected))
        assert cmp.tests["primary"] == len(primary)
    assert compare_runs(runs, box=False).adjust_name == "Holm"


def test_slices_and_flipped_tasks() -> None:
    a = {"n1": [1], "n2": [1], "h1": [1], "h2": [0], "e1": [0]}
    b = {"n1": [1], "n2": [0], "h1": [0], "h2": [1], "e1": [0]}
    strata = {"h1": "high_risk", "h2": "high_risk", "e1": "edge"}
    tags = {"n2": ["refund"], "h1": ["refund"]}
    pair = compare_runs(
        [make_run("A", a, strata=strata, tags=tags), make_run("B", b, strata=strata, tags=tags)], box=False
    ).pairs[0]
    assert sorted(f.task_id for f in pair.broken) == ["h1", "n2"] and [f.task_id for f in pair.fixed] == [
        "h2"
    ]
    groups = {(g.by, g.group): g for g in pair.groups}
    assert groups[("stratum", "high_risk")].only_a == 1 and groups[("stratum", "high_risk")].only_b == 1
    assert groups[("tag", "refund")].delta == -1.0
    assert all(g.p_adjusted is not None and g.p_adjusted >= g.p_value for g in pair.groups)


def test_decision_lines() -> None:
    a, b = tasks_with(30, 0, 15, 15)
    fast = dict(latency=lambda t, i: 1.0)
    better = compare_runs([make_run("A", a, **fast), make_run("B", b, agent="python:x:b", **fast)])
    d = better.pairs[0].decision
    assert d.verdict == "switch"
    assert d.line.startswith(
        "python:x:b is better on quality (+25.0 pts, p<0.001) and within the latency box"
    )
    assert "(cost not measured)" in d.line and d.line.endswith("; switch")
    worse = compare_runs([make_run("B", b), make_run("A", a, agent="python:x:a")]).pairs[0].decision
    assert worse.verdict == "do_not_switch" and "is worse on quality (-25.0 pts" in worse.line
    same = compare_runs([make_run("A", a), make_run("A2", a)]).pairs[0].decision
    assert same.verdict == "no_difference"
    assert same.line.startswith(
        "difference within noise (+0.0 pts, p=1.00); do not switch; the suite can detect ≥"
    )


def test_trade_off_when_outside_the_box_and_its_sensitivity() -> None:
    a, b = tasks_with(30, 0, 15, 15)
    profile = profile_from_yaml(
        "name: p\nversion: 1\nmetrics:\n  failure: {tau: 0.2, direction: lower, weight: 2}\n"
        "  latency_s: {tau: 5.0, direction: lower}\n"
    )
    slow = make_run("B", b, agent="python:x:b", latency=lambda t, i: 5.5)
    cmp = compare_runs([make_run("A", a, latency=lambda t, i: 1.0), slow], profile=profile)
    pair = cmp.pairs[0]
    assert pair.decision.verdict == "trade_off"
    assert "but outside the latency box (latency mean 5.5 > τ 5)" in pair.decision.line
    # τ + 20% = 6 s puts B back in the box: the verdict flips, and the report says so
    assert [(s["metric"], s["factor"], s["verdict"]) for s in pair.sensitivity] == [
        ("latency_s", 1.2, "switch")
    ]
    assert cmp.box is not None and {s.config for s in cmp.box.scores} == {"A", "B"}
    assert cmp.box.skipped == {}


def test_box_scores_skip_unmeasured_metrics_and_rank() -> None:
    a, b = tasks_with(10, 0, 0, 10)
    cmp = compare_runs([make_run("A", a, cost=lambda t, i: 0.01), make_run("B", b)])
    assert cmp.box is not None
    assert set(cmp.box.skipped) == {"cost_usd"} and "missing in B" in cmp.box.skipped["cost_usd"]
    assert cmp.box.scored is not None and set(cmp.box.scored.metrics) == {"failure", "latency_s"}
    assert cmp.box.profile.name == "assay-default"
    doc = cmp.to_dict()
    assert doc["schema"] == "assay.compare/1" and doc["box"]["skipped"]["cost_usd"]
    assert doc["comparisons"][0]["metrics"][0]["metric"] == "quality"


def test_runs_of_different_k_are_compared_on_the_smaller_k() -> None:
    # the candidate fails only on trials 3 and 4, which the baseline (k=2) does not have
    base = make_run("k2", {f"t{i}": [1, 1] for i in range(6)})
    cand = make_run("k4", {f"t{i}": [1, 1, 0, 0] for i in range(6)})
    pairing = pair_runs(base, cand)
    assert all(u.a_pass and u.b_pass for u in pairing.units)  # pass^2 against pass^2
    assert "k2 has 2 trials per task and k4 has 4: both are compared on the first 2" in pairing.notes[0]
    result = compare_runs([base, cand], box=False)
    assert result.pairs[0].quality.p_value == 1.0


def test_box_scores_of_fewer_resamples_taken_from_a_comparison_are_those_scored_anew() -> None:
    """A report shows the box section of 1,000 resamples after a comparison of 2,000: the
    section taken from the comparison's scores is the one scored anew, interval for interval."""
    from assay.compare import RunData, default_profile, score_runs

    rng = np.random.default_rng(5)
    a, b = tasks_with(23, 4, 6, 8, k=3)
    runs = [
        make_run("A", a, latency=lambda t, i: float(rng.lognormal(1, 0.4))),
        make_run("B", b, latency=lambda t, i: float(rng.lognormal(1.1, 0.5))),
    ]
    data = [RunData.of(r) for r in runs]
    profile = default_profile()
    many = score_runs(data, profile, n_resamples=2000)
    for n in (1000, 999, 257, 256, 1, 2000):
        anew = score_runs(data, profile, n_resamples=n)
        taken = score_runs(data, default_profile(), n_resamples=n, reuse=many)
        assert taken is not anew and taken.to_dict() == anew.to_dict()
        assert [s.replicates.tolist() for s in taken.scores] == [s.replicates.tolist() for s in anew.scores]  # type: ignore[union-attr]
    # nothing is taken from scores of other runs, another seed or fewer resamples
    assert many.with_resamples(data, profile, 1000, seed=1, relative=0.2) is None
    assert many.with_resamples(data, profile, 1000, seed=0, relative=0.1) is None
    assert many.with_resamples([RunData.of(r) for r in runs], profile, 1000, seed=0, relative=0.2) is None
    assert many.with_resamples(data, profile, 2001, seed=0, relative=0.2) is None
    other = profile_from_yaml("name: p\nversion: 1\nmetrics:\n  failure: {tau: 0.2, direction: lower}\n")
    assert many.with_resamples(data, other, 1000, seed=0, relative=0.2) is None
    assert score_runs(data, other, n_resamples=1000, reuse=many).profile.name == "p"
