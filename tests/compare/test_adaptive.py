"""Adaptive trials end to end on the toy domain: dispatch order, decisions, what the
result reports, a normal stored run."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import assay
from assay.compare.adaptive import default_round, run_until_decided
from assay.compare.dispatch import dispatch_order
from assay.compare.fixed import fixed_rate_trials
from assay.compare.spending import Designs, SpendingPaired, design_power
from assay.errors import AssayError
from assay.report.markdown import adaptive_markdown
from assay.runner.api import Run
from assay.store import Store

AGENT = "python:tests.toyagents:DepositAgent"
SUITE = """\
name: bank
domain: toy
defaults: {trials: 4}
tasks:
  - {id: dep, template: deposit, instances: 10}
"""


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Store, str]:
    (tmp_path / "suite.yaml").write_text(SUITE)
    store = Store(tmp_path / "a.db")
    base = assay.run(str(tmp_path), agent=AGENT, trials=8, seed=3, store=store, run_id="base")
    return tmp_path, store, base.run_id


def test_paired_pairs_trials_and_stops_within_a_round(setup: tuple[Path, Store, str]) -> None:
    _, store, base = setup
    rounds = []
    result = run_until_decided(
        None,
        agent=AGENT,
        against=base,
        store=store,
        params={"skip_confirm": 1.0},  # fails every task the baseline passes
        mde=0.5,
        run_id="cand",
        concurrency=4,
        round_size=4,
        on_round=rounds.append,
    )
    assert result.verdict == "worse" and result.state.better == "a" and result.state.reason == "upper"
    assert result.round_size == 4 and 0 <= result.trials_run - result.trials_needed < 4
    # the decision is the spending test's on the same pairs, read in dispatch order
    order = dispatch_order(Run.load(base, store).info.task_ids, 8, 3)
    offline = SpendingPaired(Designs(0.5, 0.05, 0.8, 80))
    while (state := offline.read([1] * 80, [0] * 80)).decision == "continue" and offline.needs:
        offline.designs.make(offline.needs)
    assert result.trials_needed == state.observations and result.state == state
    run = Run.load("cand", store)  # a normal stored run: the baseline's tasks and seed
    baseline = {r.key: r for r in Run.load(base, store).results}
    assert run.info.seed == 3 and run.info.task_ids == Run.load(base, store).info.task_ids
    assert {r.key for r in run.results} == set(order[: result.trials_run])
    assert all(r.seed == baseline[r.key].seed for r in run.results)  # same instance, same user
    assert run.info.status == "finished" and rounds[-1].state.decision == "reject_h0"
    doc = result.to_dict()
    assert doc["schema"] == "assay.adaptive/2" and doc["trials_needed"] == state.observations
    assert doc["discordance"]["observed"] == 1.0 and doc["discordance"]["design"] == 1.0
    # ψ estimated: the designs are made for a power raised from the one asked, which the
    # result reports as asked (and the fixed design uses)
    assert doc["power"] == 0.8 and doc["design_power"] == 0.83 == design_power(0.8)
    assert result.design is not None and result.design.beta == pytest.approx(0.17)
    assert "(designed for power 0.83, 0.8 asked: estimating the discordance costs power)" in (
        adaptive_markdown(result)
    )
    assert result.fixed is not None and result.fixed.n is not None
    assert (
        "--discordance 1.000" in result.fixed.basis and result.saved == 1 - result.trials_run / result.fixed.n
    )


def test_paired_accepts_when_the_runs_never_disagree(setup: tuple[Path, Store, str]) -> None:
    _, store, base = setup
    result = run_until_decided(None, agent=AGENT, against=base, store=store, mde=0.2, round_size=3)
    # SPRT of ψ ≥ 0.2 vs 0.05: each agreeing pair adds log(0.95/0.8); log(20) after 18
    assert result.verdict == "no_difference" and result.state.reason == "discordance"
    assert result.trials_needed == 18 and 18 <= result.trials_run < 21
    assert "disagree on only 0 of 18 pairs" in result.line
    assert result.fixed is not None and result.fixed.n is None and result.saved is None


def test_msprt_method_is_always_valid(setup: tuple[Path, Store, str]) -> None:
    _, store, base = setup
    result = run_until_decided(
        None, agent=AGENT, against=base, store=store, params={"skip_confirm": 1.0}, method="msprt"
    )
    assert result.method == "msprt" and result.design is None and result.verdict == "worse"
    # Beta(1, 1) mixture after m lost pairs: Λ = 2^m / (m + 1), first ≥ 1/alpha = 20 at m = 8
    assert result.state.observations == 8 and result.trials_needed == 8 and result.state.reason == "upper"
    assert result.always_valid_p is not None and result.always_valid_p <= 0.05
    assert result.to_dict()["design"] is None and result.to_dict()["design_power"] is None
    with pytest.raises(AssayError, match="method msprt needs against"):
        run_until_decided("x", agent=AGENT, threshold=0.5, method="msprt", store=store)


def test_a_budget_too_small_for_the_sprt_hands_over_to_the_mixture(setup: tuple[Path, Store, str]) -> None:
    _, store, base = setup
    result = run_until_decided(
        None, agent=AGENT, against=base, store=store, params={"skip_confirm": 1.0}, round_size=2
    )
    assert result.fallback is not None and "needs more pairs than the 80 the baseline offers" in result.line
    # all pairs lost: after the 10 read before a design is needed, the Beta(1, 1) mixture
    # Λ = 2^10 / 11 is already past 1/alpha: the decision is taken at the hand-over
    assert result.verdict == "worse" and result.trials_needed == 10 and result.trials_run < 12
    assert "mixture SPRT took over" in result.line and result.to_dict()["fallback"] == result.fallback


def test_rate_threshold_and_budget(setup: tuple[Path, Store, str]) -> None:
    suite, store, _ = setup
    above = run_until_decided(str(suite), agent=AGENT, threshold=0.5, mde=0.3, store=store, round_size=5)
    assert above.verdict == "above" and above.mode == "rate" and above.design is not None
    # every trial passes: the log-LR grows by log(0.8/0.5) a trial until it reaches the upper boundary
    assert above.trials_needed == math.ceil(above.design.upper / math.log(0.8 / 0.5)) == 6
    assert 6 <= above.trials_run < 6 + 5
    assert above.fixed is not None and above.fixed.n == fixed_rate_trials(0.5, 0.8, 0.05, 0.8)
    assert above.saved == 1 - above.trials_run / above.fixed.n
    assert above.power == above.design_power == 0.8 and above.design.beta == pytest.approx(0.2)
    capped = run_until_decided(
        str(suite),
        agent=AGENT,
        threshold=0.5,
        mde=0.3,
        store=store,
        max_trials=25,
        params={"skip_confirm": 0.5},
        seed=1,
    )
    assert capped.budget == 25 and capped.trials_run <= 25 and capped.design is not None
    assert capped.design.max_steps == 25
    assert capped.run.info.trials_per_task == 3  # ceil(25 / 10 tasks)


def test_default_round_is_the_concurrency_within_five_percent_of_the_fixed_design() -> None:
    assert default_round(8, None) == 8 and default_round(8, 1000) == 8
    assert default_round(8, 82) == 4 and default_round(8, 5) == 1 and default_round(2, 82) == 2


def test_adaptive_errors(setup: tuple[Path, Store, str]) -> None:
    suite, store, base = setup
    with pytest.raises(AssayError, match="exactly one of against"):
        run_until_decided(str(suite), agent=AGENT, store=store)
    with pytest.raises(AssayError, match="cannot use more"):
        run_until_decided(None, agent=AGENT, against=base, trials=9, store=store)
    with pytest.raises(AssayError, match="cannot design the sequential test"):
        run_until_decided(str(suite), agent=AGENT, threshold=0.95, mde=0.1, store=store)
    with pytest.raises(AssayError, match=r"12 steps cannot reach power 0.80 .* \(--max-trials\)"):
        run_until_decided(str(suite), agent=AGENT, threshold=0.5, mde=0.3, max_trials=12, store=store)
    with pytest.raises(AssayError, match=r"decide\.max_trials: Input should be greater than or equal"):
        run_until_decided(str(suite), agent=AGENT, threshold=0.5, max_trials=0, store=store)
    with pytest.raises(AssayError, match="cannot design the sequential test"):
        run_until_decided(None, agent=AGENT, against=base, discordance=0.04, mde=0.05, store=store)
