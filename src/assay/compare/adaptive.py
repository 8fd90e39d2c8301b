"""Adaptive trials: run a candidate until a sequential test decides.

One stored run, created by :func:`assay.runner.api.run_async` with a
:class:`.dispatch.SequentialDispatch` executor: trials go out in a seeded random order
(every task once, then every task again...), at most one round (``round_size``, default
the concurrency) beyond what the test has read; the test reads results in that order as
they arrive, and once it decides nothing more is dispatched. Trials in flight then finish
and are stored; they are reported as run, not as needed.

- ``against=RUN_ID`` (paired): the candidate runs the baseline's tasks with the
  baseline's seed, so every trial pairs with the baseline trial of the same task and
  index (same task instance, same simulated user); only keys the baseline counted are
  dispatched. Two-sided SPRT on discordant pairs, designed after a pilot that measures
  the discordance (:mod:`.monitors`), or at ``discordance`` when given, or the
  always-valid mixture SPRT with ``method="msprt"``.
- ``threshold=RATE``: one-sided SPRT of the success rate, H0 ``p ≤ threshold`` against
  H1 ``p ≥ threshold + mde``.

The run stops at the first decision or when ``max_trials`` are spent. Trials planned but
never run stay missing: ``assay run --resume RUN_ID`` completes the full design if wanted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..core.spec import DecideSpec, RunSpec
from ..errors import AssayError
from ..runner.api import Progress, Run, run_async
from ..runner.executor import Executor
from ..runner.plan import named_by, require_named, select_tasks
from ..runner.ray_executor import make_executor
from ..runner.resolve import make_spec
from ..stats import discordant_msprt
from ..store.store import Store
from ..suites.instantiate import instantiate
from ..suites.loader import load_suite
from .adaptive_result import AdaptiveResult, verdict_paired, verdict_rate
from .dispatch import Key, Monitor, RoundReport, SequentialDispatch, dispatch_order
from .fixed import fixed_paired, fixed_rate
from .monitors import PairedMonitor, RateMonitor
from .planning import plan
from .sequential import SequentialDesign, design_rate

__all__ = ["AdaptiveResult", "RoundReport", "run_until_decided", "run_until_decided_async"]


def _rate_design(decide: DecideSpec) -> SequentialDesign:
    assert decide.threshold is not None
    try:
        return design_rate(
            decide.threshold,
            decide.threshold + decide.mde,
            decide.alpha,
            decide.power,
            max_steps=decide.max_trials,
        )
    except ValueError as exc:
        raise AssayError(f"cannot design the sequential test: {exc}") from None


def paired_spec(spec: RunSpec, baseline: Run) -> tuple[RunSpec, list[str]]:
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
    chosen = [t for t in base.task_ids if not wanted or named_by(wanted, t)]
    require_named(spec.task_ids, chosen, f"{loaded.name} in baseline run {base.run_id}")
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
    return spec.model_copy(update=update), chosen


def rate_spec(spec: RunSpec, design: SequentialDesign, max_trials: int | None) -> tuple[RunSpec, list[str]]:
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
    require_named(spec.task_ids, chosen, loaded.name)
    k = spec.trials or -(-(max_trials or design.max_steps) // len(chosen))
    return spec.model_copy(update={"trials": k}), chosen


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
    """Run ``spec`` until its sequential test (``spec.decide``) decides or
    ``max_trials`` are spent. ``spec`` may also be a suite (or None with ``against``)
    with the spec's and the decide settings' fields as keyword arguments.

    ``decide.against`` (a baseline run id: paired test of a difference of ``mde``) or
    ``decide.threshold`` (rate test of ``threshold`` vs ``threshold + mde``), at
    ``alpha`` and ``power``; ``round_size`` (default: the concurrency, at most 5% of the
    fixed design's trials) bounds the trials run past the decision. The result holds a
    normal stored :class:`Run` and what the decision cost against the fixed design.
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
    monitor: Monitor
    if baseline is not None:
        spec, chosen = paired_spec(spec, baseline)
        base = {r.key: r.reward for r in baseline.results if r.reward is not None}
        order = dispatch_order(chosen, spec.trials or 1, spec.seed or 0, keep=lambda key: key in base)
        monitor = _paired_monitor(decide, [base[key] for key in order])
    else:
        design = _rate_design(decide)
        spec, chosen = rate_spec(spec, design, decide.max_trials)
        order = dispatch_order(chosen, spec.trials or 1, spec.seed or 0)
        monitor = RateMonitor(design)
    budget = min(decide.max_trials or len(order), len(order))
    inner = executor or make_executor(spec.executor, spec.concurrency, spec.ray_address)
    window = decide.round_size or default_round(spec.concurrency, _planned_fixed_n(decide, baseline))
    dispatch = SequentialDispatch(inner, order, monitor, window=window, budget=budget, on_round=on_round)
    shown = None if progress is None else (lambda r, done, total: progress(r, done, budget))
    try:
        run = await run_async(spec, store=st, executor=dispatch, progress=shown)
    finally:
        if executor is None:
            getattr(inner, "close", lambda: None)()
    return _result(run, decide, dispatch, monitor, order, baseline, budget, window)


def default_round(concurrency: int, fixed_n: int | None) -> int:
    """Trials per round by default: the concurrency, but at most 5% of the trials the
    fixed design would run (a round is what may be run past the decision)."""
    if fixed_n is None:
        return concurrency
    return max(1, min(concurrency, round(fixed_n / 20)))


def _planned_fixed_n(decide: DecideSpec, baseline: Run | None) -> int | None:
    """The fixed design's trials as known before the run: for a rate test exactly; for
    a paired one as ``assay plan --paired`` says without a discordance (it assumes
    independent outcomes, so it errs on the large side)."""
    if baseline is None:
        assert decide.threshold is not None
        return fixed_rate(decide.threshold, decide.threshold + decide.mde, decide.alpha, decide.power).n
    counted = [r.reward for r in baseline.results if r.reward is not None]
    if not counted:
        return None
    rate = min(sum(counted) / len(counted), 1 - decide.mde)
    try:
        return plan(rate, decide.mde, alpha=decide.alpha, power=decide.power, paired=True).tasks_needed
    except AssayError:
        return None


def _paired_monitor(decide: DecideSpec, baseline: list[int]) -> PairedMonitor:
    try:
        return PairedMonitor(
            baseline,
            mde=decide.mde,
            alpha=decide.alpha,
            power=decide.power,
            method=decide.method,
            discordance=decide.discordance,
        )
    except ValueError as exc:
        raise AssayError(f"cannot design the sequential test: {exc}") from None


def _result(
    run: Run,
    decide: DecideSpec,
    dispatch: SequentialDispatch,
    monitor: Monitor,
    order: list[Key],
    baseline: Run | None,
    budget: int,
    window: int,
) -> AdaptiveResult:
    assert dispatch.reading is not None
    state, needed = dispatch.reading.state, dispatch.reading.needed
    run_n = len(run.results)
    result = AdaptiveResult(
        run=run,
        mode="rate" if baseline is None else "paired",
        method=decide.method,
        state=state,
        trials_run=run_n,
        trials_needed=needed if needed is not None else run_n,
        budget=budget,
        round_size=window,
        rounds=dispatch.rounds,
        mde=decide.mde,
        power=decide.power,
        design_power=decide.power,
    )
    if isinstance(monitor, RateMonitor):
        result.design = monitor.design
        result.fixed = fixed_rate(monitor.design.p0, monitor.design.p1, decide.alpha, decide.power)
        result.verdict, result.line = verdict_rate(state, monitor.design.p0, monitor.design.p1, result.spent)
        return result
    assert isinstance(monitor, PairedMonitor) and baseline is not None
    result.baseline = baseline.run_id
    result.design, result.design_power = monitor.design, monitor.design_power
    result.discordance_given = decide.discordance is not None
    result.discordance_design = decide.discordance if result.discordance_given else monitor.discordance
    rewards = {r.key: r.reward for r in run.results}
    base = {r.key: r.reward for r in baseline.results}
    read = order[: result.trials_needed]  # what the test read: the same whatever was in flight
    pairs = [(base[key], rewards[key]) for key in read if rewards.get(key) is not None]
    discordant = sum(a != b for a, b in pairs)
    result.pairs, result.discordant = len(pairs), discordant
    counted = [r for r in base.values() if r is not None]
    rate = sum(counted) / len(counted) if counted else 0.5
    result.fixed = fixed_paired(rate, decide.mde, decide.alpha, decide.power, discordant, len(pairs))
    result.verdict, result.line = verdict_paired(state, decide.mde, result.spent)
    result.fallback = monitor.fallback
    if result.fallback is not None:
        result.line += (
            f"; {result.fallback}, so the always-valid mixture SPRT took over with the alpha left "
            "(it can show a difference, not its absence)"
        )
    used = [key for key in order if rewards.get(key) is not None]
    used = used[: state.observations] if state.decision != "continue" else used
    result.always_valid_p = (
        discordant_msprt([rewards[k] or 0 for k in used], [base[k] or 0 for k in used]).p_value
        if used
        else 1.0
    )
    return result


def run_until_decided(spec: RunSpec | str | None, **options: Any) -> AdaptiveResult:
    """Synchronous twin of :func:`run_until_decided_async`."""
    return asyncio.run(run_until_decided_async(spec, **options))
