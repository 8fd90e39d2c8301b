"""Adaptive trials: run a candidate in rounds until a sequential test decides.

One stored run grows round by round: the first round creates it through
:func:`assay.runner.api.run_async`, later rounds resume it, each executing only the next
``round_size`` trials of its plan (trial index outer, task inner, so a round of one trial
per task spreads over every task). After each round the trials so far are replayed, in
plan order, through a calibrated SPRT (:mod:`.sequential`):

- ``against=RUN_ID`` (paired): the candidate runs the baseline's tasks with the
  baseline's seed, so every trial pairs with the baseline trial of the same task and
  index (same task instance, same simulated user). Two-sided SPRT on discordant pairs.
- ``threshold=RATE``: one-sided SPRT of the success rate, H0 ``p ≤ threshold`` against
  H1 ``p ≥ threshold + mde``.

The run stops at the first decision or when ``max_trials`` are spent. Trials planned but
never run stay missing: ``assay run --resume RUN_ID`` completes the full design if wanted.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..core.spec import DecideSpec, RunSpec
from ..errors import AssayError
from ..runner.api import Progress, Run, resume_async, run_async
from ..runner.executor import Executor, OnResult
from ..runner.orchestrator import TrialJob
from ..runner.plan import select_tasks
from ..runner.ray_executor import make_executor
from ..runner.resolve import make_spec
from ..stats import discordant_msprt
from ..store.store import Store
from ..suites.instantiate import instantiate
from ..suites.loader import load_suite
from .sequential import (
    SequentialDesign,
    SequentialState,
    design_paired,
    design_rate,
    msprt_path,
    paired_path,
    rate_path,
    theta_for,
)

Method = Literal["sprt", "msprt"]


@dataclass(frozen=True)
class RoundReport:
    """The state of the test after one round."""

    round: int
    trials: int
    state: SequentialState


@dataclass
class AdaptiveResult:
    """The stored run, the design, where the test stopped and what it means."""

    run: Run
    mode: Literal["paired", "rate"]
    design: SequentialDesign | None
    state: SequentialState
    budget: int
    verdict: str
    line: str
    baseline: str | None = None
    always_valid_p: float | None = None
    rounds: list[RoundReport] = field(default_factory=list)
    method: Method = "sprt"

    @property
    def trials_run(self) -> int:
        return len(self.run.results)

    @property
    def saved(self) -> float:
        """Share of the budget not spent."""
        return 1.0 - self.trials_run / self.budget if self.budget else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "assay.adaptive/1",
            "run_id": self.run.run_id,
            "baseline": self.baseline,
            "mode": self.mode,
            "method": self.method,
            "verdict": self.verdict,
            "line": self.line,
            "trials_run": self.trials_run,
            "budget": self.budget,
            "saved": self.saved,
            "always_valid_p": self.always_valid_p,
            "design": None if self.design is None else self.design.to_dict(),
            "state": self.state.to_dict(),
            "rounds": [{"round": r.round, "trials": r.trials, **r.state.to_dict()} for r in self.rounds],
        }


class _Round:
    """Executor that runs only the next ``limit`` planned trials on ``inner``."""

    def __init__(self, limit: int, inner: Executor):
        self.limit = limit
        self.inner = inner

    async def execute(self, jobs: Iterable[TrialJob], on_result: OnResult) -> None:
        await self.inner.execute(itertools.islice(jobs, self.limit), on_result)


def _plan_order(task_ids: list[str], k: int) -> list[tuple[str, int]]:
    return [(task, index) for index in range(k) for task in task_ids]


def _prefix(
    order: list[tuple[str, int]], rewards: dict[tuple[str, int], int | None]
) -> list[tuple[str, int]]:
    """Keys of the completed prefix of the plan (what the rounds so far executed)."""
    keys = []
    for key in order:
        if key not in rewards:
            break
        keys.append(key)
    return keys


def _verdict_paired(state: SequentialState, mde: float, trials: int, budget: int) -> tuple[str, str]:
    spent = f"{trials} of {budget} trials"
    if state.decision == "reject_h0":
        side = "better" if state.better == "b" else "worse"
        won = state.successes if state.better == "b" else state.steps - state.successes
        return side, (
            f"the candidate is {side} than the baseline: it {'won' if side == 'better' else 'lost'} "
            f"{won} of {state.steps} discordant pairs ({spent})"
        )
    if state.decision == "accept_h0":
        why = (
            f"they disagree on only {state.steps} of {state.observations} pairs"
            if state.reason == "discordance"
            else f"{state.successes} of {state.steps} discordant pairs won by the candidate"
        )
        return (
            "no_difference",
            f"no difference of {100 * mde:.0f} pts or more between the runs: {why} ({spent})",
        )
    return "undecided", f"the budget is spent ({spent}); neither boundary was reached"


def _verdict_rate(state: SequentialState, p0: float, p1: float, trials: int, budget: int) -> tuple[str, str]:
    spent = f"{trials} of {budget} trials"
    rate = f"{state.successes}/{state.steps} trials passed"
    if state.decision == "reject_h0":
        return "above", f"the success rate is above {p0:.0%} ({rate}; {spent})"
    if state.decision == "accept_h0":
        return "below", f"the success rate is not above {p0:.0%}, it is short of {p1:.0%} ({rate}; {spent})"
    return "undecided", f"the budget is spent ({rate}; {spent})"


def _design(decide: DecideSpec, baseline: Run | None) -> SequentialDesign:
    try:
        if baseline is not None:
            psi = decide.discordance if decide.discordance is not None else min(1.0, 3 * decide.mde)
            return design_paired(theta_for(decide.mde, psi), decide.alpha, decide.power, mde=decide.mde)
        assert decide.threshold is not None
        return design_rate(
            decide.threshold,
            decide.threshold + decide.mde,
            decide.alpha,
            decide.power,
            max_steps=decide.max_trials,
        )
    except ValueError as exc:
        raise AssayError(f"cannot design the sequential test: {exc}") from None


def paired_spec(spec: RunSpec, baseline: Run) -> tuple[RunSpec, int]:
    """A paired candidate runs the baseline's suite, tasks, seed and user unless told
    otherwise, and at most the baseline's trials per task."""
    base = baseline.info
    loaded = load_suite(spec.suite or base.suite_source)
    if loaded.hash != base.suite_hash:
        raise AssayError(
            f"suite {loaded.name} has hash {loaded.hash} but baseline run {base.run_id} used hash "
            f"{base.suite_hash}; a paired test needs the same suite version"
        )
    wanted = set(spec.task_ids)
    chosen = [t for t in base.task_ids if not wanted or t in wanted]
    k = spec.trials or base.trials_per_task
    if k > base.trials_per_task:
        raise AssayError(
            f"the baseline run has {base.trials_per_task} trials per task; a paired test cannot use more "
            f"(got {k})"
        )
    update = {
        "suite": spec.suite or base.suite_source,
        "seed": base.seed if spec.seed is None else spec.seed,
        "user": spec.user or base.config.user,
        "trials": k,
        "split": None,
        "tags": [],
        "task_ids": chosen,
    }
    return spec.model_copy(update=update), len(chosen)


def rate_spec(spec: RunSpec, design: SequentialDesign, max_trials: int | None) -> tuple[RunSpec, int]:
    """A rate test runs the spec's tasks with enough trials per task for the design."""
    loaded = load_suite(spec.suite)
    chosen = [
        t.id
        for t in select_tasks(
            instantiate(loaded, spec.seed or 0), split=spec.split, tags=spec.tags, task_ids=spec.task_ids
        )
    ]
    if not chosen:
        raise AssayError(f"no task of suite {loaded.name} matches the filters given")
    k = spec.trials or -(-(max_trials or design.max_steps) // len(chosen))
    return spec.model_copy(update={"trials": k}), len(chosen)


def adaptive_spec(suite: str | None, store: Store, **fields: Any) -> RunSpec:
    """The spec of an adaptive run from keyword arguments: run-spec fields plus the
    decide fields (``against``, ``threshold``, ``mde``, ...). With ``against`` and no
    suite, the baseline run's suite."""
    decide = {k: fields.pop(k) for k in list(fields) if k in DecideSpec.model_fields}
    if suite is None and decide.get("against") is not None:
        suite = store.get_run(decide["against"]).suite_source
    if suite is None:
        raise AssayError("give a SUITE to run (or --against RUN_ID, whose suite is then used)")
    return make_spec(suite, decide=decide, **fields)


async def run_until_decided_async(
    spec: RunSpec | str | None,
    *,
    store: Store | str | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    on_round: Callable[[RoundReport], None] | None = None,
    **fields: Any,
) -> AdaptiveResult:
    """Run ``spec`` in rounds until its sequential test (``spec.decide``) decides or
    ``max_trials`` are spent. ``spec`` may also be a suite (or None with ``against``)
    with the spec's and the decide settings' fields as keyword arguments.

    ``decide.against`` (a baseline run id: paired test of a difference of ``mde`` at
    discordance ``discordance``, default ``3·mde``) or ``decide.threshold`` (rate test of
    ``threshold`` vs ``threshold + mde``). ``alpha`` and ``power`` are exact for the
    calibrated design; ``method="msprt"`` (paired only) stops on the always-valid
    mixture SPRT instead. The result holds a normal stored :class:`Run`.
    """
    if not isinstance(spec, RunSpec):
        st = store if isinstance(store, Store) else Store(store if store is not None else fields.get("store"))
        spec = adaptive_spec(spec, st, **fields)
    else:
        st = store if isinstance(store, Store) else Store(store if store is not None else spec.store)
    decide = spec.decide
    if decide is None:
        raise AssayError("an adaptive run needs the decide settings (--against RUN_ID or --threshold RATE)")
    baseline = Run.load(decide.against, st) if decide.against is not None else None
    design = _design(decide, baseline)
    spec, n_tasks = (
        paired_spec(spec, baseline) if baseline is not None else rate_spec(spec, design, decide.max_trials)
    )
    size = decide.round_size or n_tasks
    state, rounds, pairs, run = await _rounds(spec, size, st, design, baseline, executor, progress, on_round)
    result = _result(run, design, state, _budget(spec, run), rounds, baseline, decide.mde, pairs)
    if decide.method == "msprt":
        result.design, result.method = None, "msprt"
    return result


def _budget(spec: RunSpec, run: Run) -> int:
    planned = run.info.planned_trials
    return min(spec.decide.max_trials or planned, planned) if spec.decide else planned


async def _rounds(
    spec: RunSpec,
    size: int,
    st: Store,
    design: SequentialDesign,
    baseline: Run | None,
    executor: Executor | None,
    progress: Progress | None,
    on_round: Callable[[RoundReport], None] | None,
) -> tuple[SequentialState, list[RoundReport], list[tuple[str, int]], Run]:
    """Run round after round, updating the test after each, until it decides."""
    assert spec.decide is not None
    decide = spec.decide
    inner = executor or make_executor(spec.executor, spec.concurrency, spec.ray_address)
    base = {} if baseline is None else {r.key: r.reward for r in baseline.results}
    rounds: list[RoundReport] = []
    pairs: list[tuple[str, int]] = []
    run: Run | None = None
    done, budget = 0, 0
    try:
        while True:
            if run is None:
                run = await run_async(spec, store=st, executor=_Round(size, inner), progress=progress)
                budget = _budget(spec, run)
                order = _plan_order(run.info.task_ids, run.info.trials_per_task)
            else:
                round_exec = _Round(min(size, budget - done), inner)
                await resume_async(run.run_id, store=st, executor=round_exec, progress=progress)
            rewards = {r.key: r.reward for r in st.load_results(run.run_id)}
            done = len(rewards)
            keys = _prefix(order, rewards)
            if baseline is not None:
                pairs = [key for key in keys if rewards[key] is not None and base.get(key) is not None]
                xa, xb = [base[p] or 0 for p in pairs], [rewards[p] or 0 for p in pairs]
                method = decide.method
                state = (
                    paired_path(xa, xb, design)
                    if method == "sprt"
                    else msprt_path(xa, xb, decide.alpha, decide.mde)
                )
            else:
                state = rate_path([rewards[key] or 0 for key in keys if rewards[key] is not None], design)
            report = RoundReport(len(rounds) + 1, done, state)
            rounds.append(report)
            if on_round is not None:
                on_round(report)
            if state.decision != "continue" or done >= budget:
                return state, rounds, pairs, Run.load(run.run_id, st)
    finally:
        if executor is None:
            getattr(inner, "close", lambda: None)()


def _result(
    run: Run,
    design: SequentialDesign,
    state: SequentialState,
    budget: int,
    rounds: list[RoundReport],
    baseline: Run | None,
    mde: float,
    pairs: list[tuple[str, int]],
) -> AdaptiveResult:
    trials = len(run.results)
    if baseline is None:
        verdict, line = _verdict_rate(state, design.p0, design.p1, trials, budget)
        return AdaptiveResult(run, "rate", design, state, budget, verdict, line, rounds=rounds)
    verdict, line = _verdict_paired(state, mde, trials, budget)
    rewards = {r.key: r.reward for r in run.results}
    base = {r.key: r.reward for r in baseline.results}
    used = pairs[: state.observations]
    p = (
        discordant_msprt([rewards[k] or 0 for k in used], [base[k] or 0 for k in used]).p_value
        if used
        else 1.0
    )
    return AdaptiveResult(run, "paired", design, state, budget, verdict, line, baseline.run_id, p, rounds)


def run_until_decided(spec: RunSpec | str | None, **options: Any) -> AdaptiveResult:
    """Synchronous twin of :func:`run_until_decided_async`."""
    return asyncio.run(run_until_decided_async(spec, **options))
