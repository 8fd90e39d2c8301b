"""Running a suite: ``run`` / ``run_async`` and the :class:`Run` they return."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..agents.specs import agent_factory
from ..core.results import Config, RunInfo, TaskMeta, TrialResult
from ..core.task import Limits, Suite, Task
from ..core.transcript import Transcript
from ..envs.faults import FaultPlan, load_fault_plan
from ..errors import AssayError, ResumeError
from ..llm.cassette import Cassette, use_cassette
from ..llm.spec import PROVIDERS, parse_spec
from ..metrics.frame import TrialFrame
from ..metrics.rag_summary import RAG_STAGES, rag_summary
from ..metrics.summary import summarize_frame
from ..store.store import Store, now_iso
from ..suites.instantiate import instantiate, iter_instances
from ..suites.loader import load_suite
from ..users.specs import user_factory
from .executor import Executor, LocalExecutor
from .orchestrator import TrialJob
from .plan import plan_trials, task_filter
from .provenance import git_commit, new_run_id, versions
from .writer import TrialWriter

Progress = Callable[[TrialResult, int, int], None]


class Run:
    """The results of one configuration on one suite version, in the store.

    ``results`` (every trial's full record, without transcripts) loads on first use;
    ``summary()`` and ``frame()`` read columns and SQL aggregates instead, so they stay
    fast on runs of any size."""

    def __init__(self, info: RunInfo, tasks: list[TaskMeta], results: list[TrialResult] | None, store: Store):
        self.info, self.tasks, self.store = info, tasks, store
        self._results = results
        self._frame: TrialFrame | None = None

    @property
    def run_id(self) -> str:
        return self.info.run_id

    @property
    def results(self) -> list[TrialResult]:
        if self._results is None:
            self._results = self.store.load_results(self.run_id)
        return self._results

    @classmethod
    def load(cls, run_id: str, store: Store | str | None = None) -> Run:
        st = store if isinstance(store, Store) else Store(store)
        return cls(st.get_run(run_id), st.load_tasks(run_id), None, st)

    def frame(self) -> TrialFrame:
        """The run's trials as columns (see :class:`assay.metrics.TrialFrame`); kept
        once the run is finished."""
        if self._frame is not None:
            return self._frame
        frame = self.store.load_frame(self.run_id)
        if self.info.status == "finished":
            self._frame = frame
        return frame

    def transcript(self, task_id: str, trial_index: int = 0) -> Transcript | None:
        return self.store.load_transcript(self.run_id, task_id, trial_index)

    def summary(self) -> dict[str, Any]:
        """The run's summary: the same content ``assay run --json`` prints (with a
        ``rag`` section when the suite has RAG graders: :func:`rag_summary`)."""
        info = self.info
        frame = self.frame()
        rag = rag_summary(self.store.load_grade_rows(self.run_id, RAG_STAGES))
        return {
            "schema": "assay.run-summary/1",
            "run": {
                "run_id": info.run_id,
                "status": info.status,
                "created_at": info.created_at,
                "finished_at": info.finished_at,
                "suite": {
                    "name": info.suite_name,
                    "version": info.suite_version,
                    "hash": info.suite_hash,
                    "source": info.suite_source,
                },
                "config": {**info.config.model_dump(mode="json"), "hash": info.config_hash},
                "seed": info.seed,
                "trials_per_task": info.trials_per_task,
                "planned_trials": info.planned_trials,
                "completed_trials": len(frame),
                "filters": info.filters,
                "git_commit": info.git_commit,
                "versions": info.versions,
            },
            **summarize_frame(frame, self.store.load_extras(self.run_id), self.tasks, info.trials_per_task),
            **({"rag": rag} if rag is not None else {}),
        }


def pick_trial(results: list[TrialResult], run_id: str, task_id: str, trial: int | None) -> TrialResult:
    """The trial of a task to show: the one asked for, else the first failure, else the
    first; AssayError (one sentence) when there is none."""
    if not results:
        raise AssayError(f"run {run_id} has no trials of task {task_id!r}")
    if trial is None:
        return next((r for r in results if r.reward == 0), results[0])
    for r in results:
        if r.trial_index == trial:
            return r
    raise AssayError(f"task {task_id!r} of run {run_id} has no trial {trial}")


def _jsonable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(value)


def _resolve_suite(suite: Suite | str | Path) -> tuple[Suite, str]:
    if isinstance(suite, Suite):
        return suite, str(suite.path or suite.name)
    loaded = load_suite(suite)
    source = str(suite) if not Path(str(suite)).exists() else str(Path(str(suite)).resolve())
    return loaded, source


TaskSource = Callable[[], Iterable[Task]]


def _task_source(suite: Suite, seed: int, keep: Callable[[Task], bool]) -> TaskSource:
    """The run's concrete tasks, again for each pass: kept in memory for ordinary
    suites, streamed from disk (memory stays flat) for suites with JSONL files."""
    if not suite._streamed:
        tasks = [t for t in instantiate(suite, seed) if keep(t)]
        return lambda: tasks
    return lambda: (t for t in iter_instances(suite, seed) if keep(t))


def _jobs(info: RunInfo, suite: Suite, tasks: TaskSource, done: set[tuple[str, int]]) -> Iterator[TrialJob]:
    override = info.settings.get("limits") or {}
    cache: dict[str, Limits] = {}

    def limits_of(task: Task) -> Limits:  # most tasks share the suite's limits: build them once
        key = repr(task.limits)
        if key not in cache:
            cache[key] = suite.limits_for(task).merged(override)
        return cache[key]

    for task, trial in plan_trials(tasks, info.trials_per_task, info.seed, done):
        yield TrialJob(
            run_id=info.run_id,
            task=task,
            trial=trial,
            limits=limits_of(task),
            config=info.config,
            suite_name=info.suite_name,
            suite_version=info.suite_version,
            suite_hash=info.suite_hash,
            domain=suite.domain,
            git_commit=info.git_commit,
            options=dict(info.settings.get("model_options", {})),
            task_hash=task.input_hash(),
            judges=tuple(info.settings.get("judges", ())),
            judge_options=dict(info.settings.get("judge_options", {})),
            faults=info.settings.get("faults"),
        )


def _model_of(spec: str) -> str | None:
    """The model id of an LLM-backed spec (``openai:gpt-4o`` -> itself), else None."""
    kind = spec.partition(":")[0]
    return spec if kind in PROVIDERS else None


async def run_async(
    suite: Suite | str | Path,
    agent: str = "builtin:retail-careful",
    trials: int | None = 4,
    concurrency: int = 8,
    seed: int = 0,
    store: Store | str | None = None,
    *,
    user: str = "scripted",
    split: str | None = None,
    tags: Iterable[str] = (),
    task_ids: Iterable[str] = (),
    run_id: str | None = None,
    resume: str | None = None,
    params: dict[str, Any] | None = None,
    model_options: dict[str, Any] | None = None,
    cassette: Cassette | None = None,
    limits: dict[str, Any] | None = None,
    judges: Iterable[str] = (),
    judge_options: dict[str, Any] | None = None,
    faults: FaultPlan | dict[str, Any] | str | Path | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    on_start: Callable[[RunInfo], None] | None = None,
) -> Run:
    """Run every selected task ``trials`` times (``None``: the suite's default) and
    store each finished trial as it ends. ``resume=RUN_ID`` continues an interrupted
    run with its own suite, config, seed and plan, running only missing trials.

    ``params`` are the config's parameters (part of what is tested: temperature,
    agent options). ``model_options`` are settings of model clients that do not change
    what is tested (``cache``, ``pricing`` file, ``base_url``...). ``cassette`` records
    or replays every model exchange of the run. ``limits`` override the suite's
    per-trial limits (``max_cost_usd``, ``max_tokens``, ``max_turns``...). ``judges``
    are the model specs of LLM judges (several make a panel) with ``judge_options``
    for their clients; judge graders without one report ``skipped``. ``faults`` is a
    fault plan (a FaultPlan, a file, or a spec such as ``get_order_details:timeout@0.3``;
    default: the suite's ``defaults.faults``; ``"none"``: no faults) injected into the
    agent's tool calls by a seeded schedule (docs/robustness.md)."""
    st = store if isinstance(store, Store) else Store(store)
    if resume is not None:
        info = st.get_run(resume)
        loaded, _ = _resolve_suite(info.suite_source if isinstance(suite, (str, Path)) else suite)
        if loaded.hash != info.suite_hash:
            raise ResumeError(
                f"run {resume} was made with suite {info.suite_name} hash {info.suite_hash}, but "
                f"{info.suite_source} now has hash {loaded.hash}; start a new run instead"
            )
        wanted = set(info.task_ids)
        tasks = _task_source(loaded, info.seed, lambda t: t.id in wanted)
        done = st.completed_keys(info.run_id)
        st.set_status(info.run_id, "running")
        info.status = "running"
    else:
        loaded, source = _resolve_suite(suite)
        tasks = _task_source(loaded, seed, task_filter(split, tags, task_ids))
        metas = [t.meta() for t in tasks()]
        if not metas:
            raise AssayError(f"no task of suite {loaded.name} matches the filters given")
        config = Config(agent=agent, user=user, model=_model_of(agent), params=params or {})
        if limits:
            Limits.model_validate(limits)  # bad overrides fail now
        agent_factory(config.agent)  # fail now, with a clear message, on a bad spec
        for judge in judges:
            parse_spec(judge)
        plan = load_fault_plan(faults if faults is not None else loaded.defaults.faults)
        user_factory(config.user)
        rid = run_id or new_run_id(loaded.name)
        if st.has_run(rid):
            raise ResumeError(f"run {rid} already exists in {st.url}; resume it with --resume {rid}")
        info = RunInfo(
            run_id=rid,
            created_at=now_iso(),
            suite_name=loaded.name,
            suite_version=loaded.version,
            suite_hash=loaded.hash,
            suite_source=source,
            config=config,
            config_hash=config.hash,
            seed=seed,
            trials_per_task=trials or loaded.defaults.trials,
            task_ids=[m.task_id for m in metas],
            filters={"split": split, "tags": sorted(tags), "task_ids": sorted(task_ids)},
            settings={
                "model_options": {k: _jsonable(v) for k, v in (model_options or {}).items()},
                "limits": dict(limits or {}),
                "judges": list(judges),
                "judge_options": {k: _jsonable(v) for k, v in (judge_options or {}).items()},
                "faults": plan.model_dump(mode="json") if plan else None,
            },
            git_commit=git_commit(),
            versions=versions(),
        )
        st.create_run(info, metas)
        del metas
        done = set()
    if on_start is not None:
        on_start(info)
    total = info.planned_trials
    finished = len(done)

    def written(result: TrialResult) -> None:
        nonlocal finished
        finished += 1
        if progress is not None:
            progress(replace(result, transcript=None), finished, total)

    writer = TrialWriter(st, on_written=written)
    flusher = asyncio.create_task(writer.run())
    runner = executor or LocalExecutor(concurrency)
    try:
        with use_cassette(cassette):
            await runner.execute(_jobs(info, loaded, tasks, done), writer.add)
    except BaseException:
        writer.close()  # what finished is kept
        st.set_status(info.run_id, "interrupted")
        raise
    finally:
        flusher.cancel()
    writer.close()
    st.set_status(info.run_id, "finished")
    return Run.load(info.run_id, st)


def run(
    suite: Suite | str | Path,
    agent: str = "builtin:retail-careful",
    trials: int | None = 4,
    concurrency: int = 8,
    seed: int = 0,
    store: Store | str | None = None,
    **options: Any,
) -> Run:
    """Synchronous twin of :func:`run_async`."""
    return asyncio.run(run_async(suite, agent, trials, concurrency, seed, store, **options))
