"""Running a suite: ``run`` / ``run_async`` (a new run from a spec), ``resume`` /
``resume_async`` (the missing and harness-error trials of a stored run); they return a
:class:`~assay.runner.stored.Run`."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core.collector import paused_gc, run_collector
from ..core.results import RunInfo, TaskMeta, TrialResult
from ..core.spec import REDACTED, RunSpec, run_id_problem
from ..core.task import Limits, Task
from ..envs.perturb import load_perturbations
from ..envs.sandbox import UNSAFE_ENV
from ..errors import AssayError, ResumeError, SpecError
from ..llm.cassette import Cassette, use_cassette
from ..store.evidence import load_checks, write_checks
from ..store.holdout import holdout_tasks, log_holdout
from ..store.store import Store, now_iso
from ..suites.loaded import LoadedSuite
from .breaker import Breaker
from .executor import Executor
from .orchestrator import RunContext, TrialJob
from .plan import plan_trials, require_named
from .preflight import check_models as check_models_of
from .provenance import git_commit, new_run_id, versions
from .ray_executor import make_executor
from .resolve import Resolved, TaskSource, load_source, make_spec, resolve, task_source
from .stored import Run
from .variants import variant_source
from .writer import TrialWriter

Progress = Callable[[TrialResult, int, int], None]


def _jobs(
    info: RunInfo,
    context: RunContext,
    suite: LoadedSuite,
    tasks: TaskSource,
    done: set[tuple[str, int]],
) -> Iterator[TrialJob]:
    """The run's trial jobs; a task is hashed once per run, not once per trial (tasks
    read back from disk are new objects at each pass)."""
    override = info.spec.limits
    cache: dict[str, Limits] = {}
    hashes: dict[str, str] = {}

    def limits_of(task: Task) -> Limits:  # most tasks share the suite's limits: build them once
        key = repr(task.limits)
        if key not in cache:
            cache[key] = suite.limits_for(task).merged(override)
        return cache[key]

    for task, trial in plan_trials(tasks, info.trials_per_task, info.seed, done):
        if task.id not in hashes:
            hashes[task.id] = task.input_hash()
        yield TrialJob(context, task, trial, limits_of(task), hashes[task.id])


def _context(info: RunInfo, spec: RunSpec, suite: LoadedSuite) -> RunContext:
    """What every trial of the run shares. ``spec`` is the spec as given (with its
    credentials, which the stored ``info.spec`` does not hold)."""
    return RunContext(
        run_id=info.run_id,
        config=info.config,
        suite_name=info.suite_name,
        suite_version=info.suite_version,
        suite_hash=info.suite_hash,
        domain=suite.domain_ref,
        git_commit=info.git_commit,
        model_options=spec.model_option_values(),
        judges=tuple(spec.judges),
        judge_options=dict(spec.judge_options),
        faults=info.fault_plan,
        secrets=tuple(spec.secrets()),
        config_hash=info.config.hash,
    )


def _new_info(resolved: Resolved, store: Store) -> RunInfo:
    """A new run's identity and provenance. Its task list is left empty: it is filled
    in with the run's rows, from :func:`_task_metas`, made in the store's writer thread
    while the first trials run, or before them for a suite whose tasks are made first
    (``Resolved.made_first``). Tasks named with ``--task`` are checked here, before them."""
    spec, suite = resolved.spec, resolved.suite
    if spec.task_ids:
        require_named(spec.task_ids, (t.id for t in resolved.tasks()), suite.name)
    run_id = spec.run_id or new_run_id(suite.name)
    # a store made just now holds no run (one another process creates meanwhile with this
    # id is refused when the run's rows are written: one wins, the other is told)
    if not store.fresh and store.has_run(run_id):
        raise ResumeError(f"run {run_id} already exists in {store.url}; resume it with --resume {run_id}")
    return RunInfo(
        run_id=run_id,
        created_at=now_iso(),
        suite_name=suite.name,
        suite_version=suite.version,
        suite_hash=suite.hash,
        suite_source=resolved.source,
        config=resolved.config,
        config_hash=resolved.config.hash,
        seed=spec.seed or 0,
        trials_per_task=resolved.trials_per_task,
        task_ids=[],
        spec=spec.redacted(),
        fault_plan=resolved.fault_plan.model_dump(mode="json") if resolved.fault_plan else None,
        git_commit=git_commit(),
        versions=versions(),
    )


def _task_metas(resolved: Resolved) -> list[TaskMeta]:
    """Every task's metadata (made with the collector paused: they live through the run)."""
    with paused_gc():
        metas = [t.meta() for t in resolved.tasks()]
    if not metas:
        raise AssayError(f"no task of suite {resolved.suite.name} matches the filters given")
    return metas


async def run_async(
    suite: RunSpec | LoadedSuite | str | Path,
    *,
    store: Store | str | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    on_start: Callable[[RunInfo], None] | None = None,
    **fields: Any,
) -> Run:
    """Run every selected task k times and store each finished trial as it ends.

    ``suite`` is a :class:`RunSpec`, or a suite (folder, ``suite.yaml``, built-in name or
    loaded suite) with the spec's fields as keyword arguments (``agent``, ``trials``,
    ``seed``, ``params``, ``judges``, ``faults``... see :class:`assay.core.RunSpec` and
    docs/run-spec.md). ``store`` (a Store or a location) and ``executor`` (an Executor
    object) override the spec's; ``progress(result, done, total)`` is called as trials
    are stored; ``on_start(info)`` once the run is created. Both are called from the
    store's writer thread: the run's rows are written there while its first trials run."""
    loaded: LoadedSuite | None = suite if isinstance(suite, LoadedSuite) else None
    if isinstance(suite, RunSpec):
        spec = suite if not fields else suite.model_copy(update=fields)
    else:
        source = str(suite.path or suite.name) if isinstance(suite, LoadedSuite) else str(suite)
        spec = make_spec(source, **fields)
    problem = None if spec.run_id is None else run_id_problem(spec.run_id)
    if problem is not None:  # before anything is resolved, probed or stored
        raise SpecError(problem)
    with run_collector():  # the run's long-lived objects, frozen again when its trials start (_execute)
        resolved = resolve(spec, loaded)
        await check_models_of(resolved.spec)  # a missing key or a dead endpoint: fail now, store nothing
        cassette = _cassette(spec)  # a cassette that cannot be read: the same
        st = store if isinstance(store, Store) else Store(store if store is not None else spec.store)
        st.check_writable()  # a read-only or corrupt store is refused before anything is written
        info = _new_info(resolved, st)
        read_first = _task_metas(resolved) if resolved.made_first else None  # templates, big suites

        def create() -> None:  # in the store's writer thread, while the first trials run
            metas = read_first if read_first is not None else _task_metas(resolved)
            info.task_ids = [m.task_id for m in metas]
            st.create_run(info, metas)
            write_checks(st, info.run_id, resolved.evidence_checks)
            log_holdout(st, info, "run", holdout_tasks(metas))  # every look at the holdout is logged

        context = _context(info, resolved.spec, resolved.suite)
        jobs = _jobs(info, context, resolved.suite, resolved.tasks, set())
        await _execute(info, spec, st, jobs, 0, executor, progress, on_start, cassette, create)
    return Run(info, None, None, st)  # as stored: its rows and final status were written from it


async def resume_async(
    run_id: str,
    *,
    store: Store | str | None = None,
    retry_errors: bool = False,
    secrets: dict[str, dict[str, Any]] | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    on_start: Callable[[RunInfo], None] | None = None,
    check_models: bool | None = None,
    breaker: int | None = None,
) -> Run:
    """Continue a stored run with its own suite, configuration, seed and plan: its
    missing trials run, and its harness-error trials run again (their failed attempts
    are kept in the store). A run that finished with every planned trial is left as it
    is unless ``retry_errors`` (then its harness-error trials run again).
    ``secrets`` gives again the credential options the store did not keep
    (``{"model_options": {"api_key": ...}, "judge_options": {...}}``); ``check_models``
    and ``breaker`` override the stored spec's (how the run is carried out)."""
    st = store if isinstance(store, Store) else Store(store)
    run_id = st.resolve(run_id)
    info = st.get_run(run_id)
    loaded, _ = load_source(info.suite_source)
    if loaded.hash != info.suite_hash:
        raise ResumeError(
            f"run {run_id} was made with suite {info.suite_name} hash {info.suite_hash}, but "
            f"{info.suite_source} now has hash {loaded.hash}; start a new run instead"
        )
    complete = len(st.completed_keys(run_id)) >= info.planned_trials
    if info.status == "finished" and complete and not retry_errors:
        return Run.load(run_id, st)  # nothing to resume (harness errors: retry_errors=True)
    spec = _with_secrets(info.spec, secrets or {})
    st.check_writable()
    carried = {"check_models": check_models, "breaker": breaker}
    spec = spec.model_copy(update={k: v for k, v in carried.items() if v is not None})
    await check_models_of(spec)
    cassette = _cassette(spec)
    st.retry_errors(run_id)
    done = st.completed_keys(run_id)
    st.set_status(run_id, "running", info)
    wanted = set(info.task_ids)
    checks = load_checks(st, run_id) if info.spec.probe else None  # no new probing on resume
    tasks = variant_source(
        task_source(loaded, info.seed, lambda t: t.id in wanted),
        load_perturbations(info.spec.perturb),
        info.seed,
        checks,
    )
    jobs = _jobs(info, _context(info, spec, loaded), loaded, tasks, done)
    await _execute(info, spec, st, jobs, len(done), executor, progress, on_start, cassette)
    return Run(info, None, None, st)


def _with_secrets(spec: RunSpec, secrets: dict[str, dict[str, Any]]) -> RunSpec:
    """The stored spec with credential options given again; only redacted ones may be.
    A redacted credential not given again is left out (the client falls back to its
    environment variable, e.g. ``OPENAI_API_KEY``)."""
    update: dict[str, Any] = {}
    for group in ("model_options", "judge_options"):
        given = secrets.get(group) or {}
        stored: dict[str, Any] = getattr(spec, group)
        for key, value in given.items():
            if stored.get(key) != REDACTED and stored.get(key) != value:
                raise ResumeError(
                    f"--resume keeps the run's own settings; {group} {key!r} can be given again only "
                    "when it is a credential the store did not keep"
                )
        kept = {k: v for k, v in stored.items() if v != REDACTED}
        update[group] = {**kept, **given}
    return spec.model_copy(update=update)


@contextmanager
def _sandbox_choice(unsafe: bool) -> Iterator[None]:
    """``unsafe_no_sandbox``: the sandboxes of code tasks (built inside environments and
    graders, and in Ray workers, which get ``ASSAY_*`` variables) run commands on the host."""
    if not unsafe:
        yield
        return
    previous = os.environ.get(UNSAFE_ENV)
    os.environ[UNSAFE_ENV] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(UNSAFE_ENV, None)
        else:
            os.environ[UNSAFE_ENV] = previous


def _cassette(spec: RunSpec) -> Cassette | None:
    if spec.record:
        return Cassette(spec.record, "record")
    return Cassette(spec.replay, "replay") if spec.replay else None


async def _execute(
    info: RunInfo,
    spec: RunSpec,
    st: Store,
    jobs: Iterator[TrialJob],
    finished: int,
    executor: Executor | None,
    progress: Progress | None,
    on_start: Callable[[RunInfo], None] | None,
    cassette: Cassette | None = None,
    create: Callable[[], None] | None = None,
) -> None:
    """Run the jobs, store each result as it ends, and set the run's status (the store
    is checkpointed, so its file alone holds the run, whatever stopped it). ``create``
    (a new run's rows) and then ``on_start`` run in the writer's thread while the first
    trials run: no trial is stored before them, and a failure stops the run at once."""
    made = threading.Event()

    def begin() -> None:
        if create is not None:
            create()
        made.set()
        if on_start is not None:
            on_start(info)

    live = _live_traces(spec, info)

    def written(result: TrialResult) -> None:
        nonlocal finished
        if live is not None:
            live.add(result)  # in the writer's thread: off the event loop
        finished += 1
        if progress is not None:  # the run exists: its task list is complete
            progress(replace(result, transcript=None), finished, info.planned_trials)

    runner = executor or make_executor(spec.executor, spec.concurrency, spec.ray_address)
    writer = TrialWriter(st, on_written=written)
    breaker = Breaker(spec.breaker, info.run_id)

    def finished_trial(result: TrialResult) -> Awaitable[None] | None:
        waiting = writer.add(result)  # awaited by the trial's worker: the writer's backpressure
        try:
            breaker.see(result)  # an endpoint that stays down stops the run here
        except BaseException:
            if inspect.iscoroutine(waiting):
                waiting.close()
            raise
        return waiting

    writer.begin(begin)
    flusher = asyncio.create_task(writer.run())
    try:
        with use_cassette(cassette), _sandbox_choice(spec.unsafe_no_sandbox), run_collector():
            await writer.unless_creation_fails(runner.execute(writer.draining(jobs), finished_trial))
        writer.close()
    except BaseException:
        writer.settle()
        if not made.is_set():  # the run's rows are not there (or not ours)
            with contextlib.suppress(Exception):
                writer.close()
            raise
        _stop(writer, st, info.run_id)  # what finished is kept; the run is marked interrupted
        if live is not None:
            with contextlib.suppress(Exception):
                live.close(st.get_run(info.run_id))
        raise
    finally:
        flusher.cancel()
        if executor is None:
            getattr(runner, "close", lambda: None)()  # a Ray started for this run stops with it
    st.set_status(info.run_id, "finished", info)
    if live is not None:
        live.close(info)


def _live_traces(spec: RunSpec, info: RunInfo) -> Any:
    """The live trace export of a run with ``otel_endpoint`` (None without one)."""
    if not spec.otel_endpoint:
        return None
    from ..traces.export import LiveTraces

    return LiveTraces(spec.otel_endpoint, info, secrets=spec.secrets())


def _stop(writer: TrialWriter, st: Store, run_id: str) -> None:
    """After a failure: mark the run interrupted, then commit what can be committed, even
    when the store itself failed; the original error is what the user sees.

    The status goes first: on a full disk the small update fits in the space the failed
    batch left when it was rolled back, and flushing the trials still queued would fill
    that space (under load many are queued) and leave the run marked running. So the
    writer is halted first: a batch it had been handed would otherwise be written into
    the room the status was given."""
    writer.halt()
    marked = _mark_interrupted(st, run_id, attempts=1)
    with contextlib.suppress(Exception):
        writer.close()
    if not marked:
        _mark_interrupted(st, run_id, attempts=3)


def _mark_interrupted(st: Store, run_id: str, attempts: int) -> bool:
    for _ in range(attempts):
        try:
            st.set_status(run_id, "interrupted")
            return True
        except Exception:
            with contextlib.suppress(Exception):
                st.checkpoint()  # free the write-ahead log, then try again
    return False


def run(suite: RunSpec | LoadedSuite | str | Path, **fields: Any) -> Run:
    """Synchronous twin of :func:`run_async`."""
    return asyncio.run(run_async(suite, **fields))


def resume(run_id: str, **options: Any) -> Run:
    """Synchronous twin of :func:`resume_async`."""
    return asyncio.run(resume_async(run_id, **options))
