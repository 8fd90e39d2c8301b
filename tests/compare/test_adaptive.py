"""Adaptive trials end to end on the toy domain: rounds, decisions, a normal stored run."""

from __future__ import annotations

from pathlib import Path

import pytest

import assay
from assay.compare.adaptive import run_until_decided
from assay.errors import AssayError
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
    base = assay.run(str(tmp_path), agent=AGENT, trials=4, seed=3, store=store, run_id="base")
    return tmp_path, store, base.run_id


def test_paired_stops_early_on_a_worse_agent(setup: tuple[Path, Store, str]) -> None:
    _, store, base = setup
    rounds = []
    result = run_until_decided(
        None,
        agent=AGENT,
        against=base,
        store=store,
        params={"skip_confirm": 1.0},
        run_id="cand",
        on_round=rounds.append,
    )
    assert result.verdict == "worse" and result.state.better == "a"
    assert result.trials_run == 20 and result.budget == 40 and result.saved == 0.5
    assert [r.trials for r in rounds] == [10, 20] and rounds[0].state.decision == "continue"
    assert "lost 12 of 12 discordant pairs (20 of 40 trials)" in result.line
    assert result.always_valid_p is not None and result.always_valid_p < 0.05
    run = Run.load("cand", store)  # a normal stored run: same tasks and seed as the baseline
    assert run.info.seed == 3 and run.info.task_ids == Run.load(base, store).info.task_ids
    assert len(run.results) == 20 and {r.trial_index for r in run.results} == {0, 1}
    assert run.info.status == "finished"
    doc = result.to_dict()
    assert doc["schema"] == "assay.adaptive/1" and doc["design"]["kind"] == "paired"


def test_paired_accepts_when_the_runs_never_disagree(setup: tuple[Path, Store, str]) -> None:
    _, store, base = setup
    result = run_until_decided(None, agent=AGENT, against=base, store=store, mde=0.2)
    assert result.verdict == "no_difference" and result.state.reason == "discordance"
    assert result.trials_run == 20 and "disagree on only 0 of 18 pairs" in result.line


def test_msprt_method_is_always_valid(setup: tuple[Path, Store, str]) -> None:
    _, store, base = setup
    result = run_until_decided(
        None, agent=AGENT, against=base, store=store, params={"skip_confirm": 1.0}, method="msprt"
    )
    assert result.method == "msprt" and result.design is None and result.verdict == "worse"
    # Beta(1, 1) mixture after m lost pairs: Λ = 2^m / (m + 1), first ≥ 1/alpha = 20 at m = 8
    assert result.state.observations == 8 and result.state.reason == "upper"
    assert result.always_valid_p is not None and result.always_valid_p <= 0.05
    assert result.to_dict()["design"] is None
    with pytest.raises(AssayError, match="method msprt needs against"):
        run_until_decided("x", agent=AGENT, threshold=0.5, method="msprt", store=store)


def test_rate_threshold_and_budget(setup: tuple[Path, Store, str]) -> None:
    suite, store, _ = setup
    above = run_until_decided(str(suite), agent=AGENT, threshold=0.5, mde=0.3, store=store, round_size=5)
    assert above.verdict == "above" and above.trials_run == 10 and above.mode == "rate"
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
    assert capped.budget == 25 and capped.trials_run <= 25 and capped.design.max_steps == 25
    assert capped.run.info.trials_per_task == 3  # ceil(25 / 10 tasks)


def test_adaptive_errors(setup: tuple[Path, Store, str]) -> None:
    suite, store, base = setup
    with pytest.raises(AssayError, match="exactly one of against"):
        run_until_decided(str(suite), agent=AGENT, store=store)
    with pytest.raises(AssayError, match="cannot use more"):
        run_until_decided(None, agent=AGENT, against=base, trials=5, store=store)
    with pytest.raises(AssayError, match="cannot design the sequential test"):
        run_until_decided(str(suite), agent=AGENT, threshold=0.95, mde=0.1, store=store)
    with pytest.raises(AssayError, match=r"12 steps cannot reach power 0.80 .* \(--max-trials\)"):
        run_until_decided(str(suite), agent=AGENT, threshold=0.5, mde=0.3, max_trials=12, store=store)
    with pytest.raises(AssayError, match=r"decide\.max_trials: Input should be greater than or equal"):
        run_until_decided(str(suite), agent=AGENT, threshold=0.5, max_trials=0, store=store)
