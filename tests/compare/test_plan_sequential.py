"""Planning (sample sizes, detectable differences, ICC) and calibrated sequential designs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.compare.planning import design_effect, plan, task_icc
from assay.compare.sequential import (
    design_paired,
    design_rate,
    operating_characteristic,
    paired_path,
    rate_path,
    theta_for,
)
from assay.errors import AssayError
from assay.stats import mde_mcnemar, sample_size_mcnemar, sample_size_two_proportions
from tests.compare.fakes import make_run


def test_two_proportion_plan_in_tasks_by_trials() -> None:
    p = plan(0.7, 0.03, k=4, icc=0.5, suite_tasks=57)
    n = sample_size_two_proportions(0.73, 0.70)
    assert p.trials_per_arm == n == 3554
    assert p.tasks_needed == math.ceil(n * design_effect(4, 0.5) / 4) == 2222
    assert (3554, 1) in p.options and (2222, 4) in p.options
    assert p.detectable is not None and 0.15 < p.detectable < 0.25  # 57 tasks x 4 trials ≈ 91 independent
    assert plan(0.7, 0.03, k=4, icc=0.0).tasks_needed == math.ceil(3554 / 4)
    assert plan(0.7, 0.03, k=4, icc=1.0).tasks_needed == 3554  # fully correlated trials add nothing
    assert plan(0.9, -0.05).target == pytest.approx(0.85)


def test_paired_plan_uses_connor_and_the_discordance() -> None:
    p = plan(0.70, 0.05, paired=True, discordance=0.15, suite_tasks=200)
    assert p.tasks_needed == sample_size_mcnemar(0.10, 0.05) == 469
    assert p.detectable == pytest.approx(mde_mcnemar(200, 0.15))
    default = plan(0.70, 0.05, paired=True)
    assert default.discordance == pytest.approx(0.7 * 0.25 + 0.75 * 0.3)
    assert any("independent task outcomes" in n for n in default.notes)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"baseline": 1.2, "mde": 0.1}, "--baseline must be between"),
        ({"baseline": 0.95, "mde": 0.1}, "must be non-zero and stay within"),
        ({"baseline": 0.7}, "give --mde"),
        ({"baseline": 0.7, "mde": 0.1, "paired": True, "discordance": 0.05}, "must be at least |--mde|"),
        ({"baseline": 0.7, "mde": 0.1, "k": 0}, "-k"),
    ],
)
def test_plan_errors_name_the_option(kwargs: dict, message: str) -> None:
    with pytest.raises(AssayError, match=message.replace("|", r"\|")):
        plan(**kwargs)


def test_task_icc_one_way_anova() -> None:
    # two tasks always pass, two always fail: all variance is between tasks
    perfect = make_run("A", {"a": [1, 1, 1], "b": [1, 1, 1], "c": [0, 0, 0], "d": [0, 0, 0]})
    assert task_icc(perfect.results) == pytest.approx(1.0)
    # hand-computed: groups [1,1,0], [1,0,0]: MSB = 1/6, MSW = 1/3, k0 = 3 → (1/6 - 1/3)/(1/6 + 2/3) < 0 → 0
    assert task_icc(make_run("B", {"a": [1, 1, 0], "b": [1, 0, 0]}).results) == 0.0
    groups = {"a": [1, 1, 1, 0], "b": [0, 0, 0, 1], "c": [1, 1, 1, 1]}
    y = [np.array(v, float) for v in groups.values()]
    grand = np.concatenate(y).mean()
    msb = sum(4 * (g.mean() - grand) ** 2 for g in y) / 2
    msw = sum(((g - g.mean()) ** 2).sum() for g in y) / 9
    assert task_icc(make_run("C", groups).results) == pytest.approx((msb - msw) / (msb + 3 * msw))
    assert task_icc(make_run("D", {"a": [1]}).results) is None


def test_calibrated_designs_hold_alpha_and_power_exactly() -> None:
    paired = design_paired(theta_for(0.05, 0.15), 0.05, 0.8)
    assert paired.p1 == pytest.approx(2 / 3)
    assert 0.045 < paired.exact_alpha <= 0.05 and 0.8 <= paired.exact_power < 0.82
    assert paired.asn_h0 < 0.6 * paired.fixed_steps and paired.asn_h1 < 0.7 * paired.fixed_steps
    rate = design_rate(0.8, 0.9, 0.05, 0.8)
    assert rate.exact_alpha <= 0.05 and rate.exact_power >= 0.8
    assert rate.lower < 0 < rate.upper < math.log(1 / 0.05)  # tighter than Ville, valid by construction
    rej, _ = operating_characteristic("rate", 0.8, 0.9, rate.upper, rate.lower, [0.8, 0.9], rate.max_steps)
    assert rej == pytest.approx([rate.exact_alpha, rate.exact_power])
    with pytest.raises(ValueError, match="cannot reach power"):
        design_rate(0.8, 0.9, max_steps=10)


def test_operating_characteristic_matches_simulation() -> None:
    d = design_rate(0.6, 0.8, 0.05, 0.8)
    rng = np.random.default_rng(0)
    for p in (0.6, 0.8):
        sims = [rate_path(rng.random(d.max_steps) < p, d) for _ in range(3000)]
        rejected = np.mean([s.decision == "reject_h0" for s in sims])
        expected, asn = operating_characteristic("rate", 0.6, 0.8, d.upper, d.lower, [p], d.max_steps)
        assert rejected == pytest.approx(expected[0], abs=0.025)
        assert np.mean([s.steps for s in sims]) == pytest.approx(asn[0], rel=0.06)


def test_rate_path_llr_is_walds() -> None:
    d = design_rate(0.5, 0.7)
    outcomes = [1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    state = rate_path(outcomes, d)
    assert state.decision == "reject_h0" and state.reason == "upper"
    s = sum(outcomes[: state.steps])
    wald = s * math.log(0.7 / 0.5) + (state.steps - s) * math.log(0.3 / 0.5)  # Wald's LLR
    assert state.log_lr == pytest.approx(wald)
    assert rate_path([0] * 20, d).decision == "accept_h0"
    assert rate_path([1, 0], d).decision == "continue"


def test_paired_path_sides_and_low_discordance() -> None:
    d = design_paired(2 / 3, mde=0.05)
    b_better = paired_path([0] * 30, [1] * 30, d)
    assert (
        b_better.decision == "reject_h0" and b_better.better == "b" and b_better.successes == b_better.steps
    )
    a_better = paired_path([1] * 30, [0] * 30, d)
    assert a_better.better == "a" and a_better.observations == b_better.observations
    identical = paired_path([1] * 200, [1] * 200, d)
    assert identical.decision == "accept_h0" and identical.reason == "discordance" and identical.steps == 0
    assert identical.observations == math.ceil(math.log(20) / math.log((1 - 0.0125) / 0.95))
    assert paired_path([1] * 20, [1] * 20, d).decision == "continue"
    no_rule = design_paired(2 / 3)
    assert paired_path([1] * 500, [1] * 500, no_rule).decision == "continue"
    with pytest.raises(ValueError, match="pair up"):
        paired_path([1], [1, 0], d)
