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
from pathlib import Path
from typing import Any, Literal

from ..core.task import Suite
from ..errors import AssayError
from ..runner.api import Progress, Run, run_async
from ..runner.executor import LocalExecutor, OnResult
from ..runner.orchestrator import TrialJob
from ..runner.plan import select_tasks
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
    """Executor that runs only the next ``limit`` planned trials."""

    def __init__(self, limit: int, concurrency: int):
        self.limit = limit
        self.inner = LocalExecutor(concurrency)

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


async def run_until_decided_async(
    suite: Suite | str | Path | None,
    agent: str,
    *,
    against: str | None = None,
    threshold: float | None = None,
    mde: float = 0.05,
    discordance: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    method: Method = "sprt",
    max_trials: int | None = None,
    trials: int | None = None,
    round_size: int | None = None,
    seed: int | None = None,
    store: Store | str | None = None,
    concurrency: int = 8,
    user: str | None = None,
    split: str | None = None,
    tags: Iterable[str] = (),
    task_ids: Iterable[str] = (),
    run_id: str | None = None,
    params: dict[str, Any] | None = None,
    progress: Progress | None = None,
    on_round: Callable[[RoundReport], None] | None = None,
    **run_options: Any,
) -> AdaptiveResult:
    """Run ``agent`` in rounds until the sequential test decides or ``max_trials`` are spent.

    Give exactly one of ``against`` (baseline run id: paired test of a difference of
    ``mde`` at discordance ``discordance``, default ``3·mde``) or ``threshold`` (rate
    test of ``threshold`` vs ``threshold + mde``). ``alpha`` and ``power`` are exact
    for the calibrated design. ``method="msprt"`` (paired only) stops instead on the
    always-valid mixture SPRT: valid under any peeking, no design alternative, more
    trials. ``user`` defaults to the baseline's simulator (paired) or ``scripted``; other
    keyword arguments (``model_options``, ``limits``, ``judges``, ...) go to
    :func:`assay.runner.api.run_async` when the run is created. The result holds a
    normal stored :class:`Run`.
    """
    if (against is None) == (threshold is None):
        raise AssayError("give exactly one of --against RUN_ID (paired test) or --threshold RATE (rate test)")
    if not 0 < mde < 1:
        raise AssayError(f"--mde must be between 0 and 1, got {mde}")
    if method not in ("sprt", "msprt") or (method == "msprt" and against is None):
        raise AssayError(f"--method must be sprt, or msprt with --against (a paired test), not {method!r}")
    if not 0 < alpha < 0.5:
        raise AssayError(f"--alpha must be between 0 and 0.5, got {alpha}")
    for name, value in (("--max-trials", max_trials), ("--round-size", round_size), ("--trials", trials)):
        if value is not None and value < 1:
            raise AssayError(f"{name} must be at least 1, got {value}")
    st = store if isinstance(store, Store) else Store(store)
    baseline: Run | None = None
    try:
        if against is not None:
            baseline = Run.load(against, st)
            psi = discordance if discordance is not None else min(1.0, 3 * mde)
            design = design_paired(theta_for(mde, psi), alpha, power, mde=mde)
        else:
            assert threshold is not None
            design = design_rate(threshold, threshold + mde, alpha, power, max_steps=max_trials)
    except ValueError as exc:
        raise AssayError(f"cannot design the sequential test: {exc}") from None
    if baseline is not None:
        source: Suite | str | Path = suite if suite is not None else baseline.info.suite_source
        loaded = source if isinstance(source, Suite) else load_suite(source)
        if loaded.hash != baseline.info.suite_hash:
            raise AssayError(
                f"suite {loaded.name} has hash {loaded.hash} but baseline run {against} used hash "
                f"{baseline.info.suite_hash}; a paired test needs the same suite version"
            )
        wanted = set(task_ids)
        chosen = [t for t in baseline.info.task_ids if not wanted or t in wanted]
        k = trials or baseline.info.trials_per_task
        if k > baseline.info.trials_per_task:
            raise AssayError(
                f"the baseline run has {baseline.info.trials_per_task} trials per task; a paired test "
                f"cannot use more (got {k})"
            )
        seed = baseline.info.seed if seed is None else seed
        user = user or baseline.info.config.user
        filters: dict[str, Any] = {"task_ids": chosen}
    else:
        if suite is None:
            raise AssayError("give a SUITE to run")
        source = suite
        loaded = suite if isinstance(suite, Suite) else load_suite(suite)
        seed = 0 if seed is None else seed
        tags, task_ids = tuple(tags), tuple(task_ids)
        chosen = [
            t.id for t in select_tasks(instantiate(loaded, seed), split=split, tags=tags, task_ids=task_ids)
        ]
        if not chosen:
            raise AssayError(f"no task of suite {loaded.name} matches the filters given")
        k = trials or -(-(max_trials or design.max_steps) // len(chosen))
        filters = {"split": split, "tags": tuple(tags), "task_ids": tuple(task_ids)}
    budget = min(max_trials or len(chosen) * k, len(chosen) * k)
    size = round_size or len(chosen)
    order = _plan_order(chosen, k)
    base = {} if baseline is None else {r.key: r.reward for r in baseline.results}
    rid: str | None = None
    rounds: list[RoundReport] = []
    pairs: list[tuple[str, int]] = []
    done = 0
    while True:
        executor = _Round(min(size, budget - done), concurrency)
        if rid is None:
            run = await run_async(
                source,
                agent,
                k,
                concurrency,
                seed,
                st,
                user=user or "scripted",
                run_id=run_id,
                params=params,
                executor=executor,
                progress=progress,
                **filters,
                **run_options,
            )
            rid = run.run_id
            if run.info.task_ids != chosen:
                raise AssayError(f"run {rid} did not plan the tasks asked for; check the suite and filters")
        else:
            await run_async(source, agent, resume=rid, store=st, executor=executor, progress=progress)
        rewards = {r.key: r.reward for r in st.load_results(rid)}
        done = len(rewards)
        keys = _prefix(order, rewards)
        if baseline is not None:
            pairs = [key for key in keys if rewards[key] is not None and base.get(key) is not None]
            xa, xb = [base[p] or 0 for p in pairs], [rewards[p] or 0 for p in pairs]
            state = paired_path(xa, xb, design) if method == "sprt" else msprt_path(xa, xb, alpha, mde)
        else:
            state = rate_path([rewards[key] or 0 for key in keys if rewards[key] is not None], design)
        report = RoundReport(len(rounds) + 1, done, state)
        rounds.append(report)
        if on_round is not None:
            on_round(report)
        if state.decision != "continue" or done >= budget:
            break
    result = _result(Run.load(rid, st), design, state, budget, rounds, baseline, mde, pairs)
    if method == "msprt":
        result.design, result.method = None, "msprt"
    return result


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


def run_until_decided(suite: Suite | str | Path | None, agent: str, **options: Any) -> AdaptiveResult:
    """Synchronous twin of :func:`run_until_decided_async`."""
    return asyncio.run(run_until_decided_async(suite, agent, **options))
