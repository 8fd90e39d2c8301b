"""Resolving a run spec: load its suite, fill in the suite's defaults, check every spec
string before the first trial, and compute the configuration (and its hash).

A run that cannot start fails here with one clear sentence, before anything is stored.
"""

from __future__ import annotations

import os
import pickle
import tempfile
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from ..agents.specs import agent_factory, declared_prompt_version
from ..core.results import Config
from ..core.sources import ProblemError, parse_yaml, validation_problems
from ..core.spec import RunSpec
from ..core.task import Task
from ..envs.faults import FaultPlan, load_fault_plan
from ..envs.perturb import load_perturbations
from ..envs.registry import get_domain
from ..errors import SpecError
from ..llm.spec import PROVIDERS, parse_spec
from ..suites.instantiate import iter_instances
from ..suites.loaded import LoadedSuite
from ..suites.loader import load_suite
from ..users.specs import user_factory
from .plan import task_filter
from .variants import check_evidence, load_probe, variant_source

TaskSource = Callable[[], Iterable[Task]]


def spec_error(
    exc: ValidationError, where: str = "run spec", name: Callable[[str], str] | None = None
) -> SpecError:
    """A spec's first validation problem as one sentence naming the field (or, with
    ``name``, what the user wrote for it: a command-line option)."""
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "spec"
    if name is not None:
        field = name(field)
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = f"unknown field; a run spec has {', '.join(RunSpec.model_fields)}"
    return SpecError(f"{where}: {field}: {message}")


def make_spec(suite: str, **fields: Any) -> RunSpec:
    """A :class:`RunSpec` from keyword arguments (the API's way in); bad values raise
    :class:`SpecError` naming the field."""
    plan = fields.get("faults")
    if isinstance(plan, FaultPlan):
        fields["faults"] = plan.model_dump(mode="json")
    try:
        return RunSpec(suite=suite, **fields)
    except ValidationError as exc:
        raise spec_error(exc) from None


_MERGED = ("params", "flags", "flag_matrix", "model_options", "judge_options", "limits")


def merge_spec(
    base: dict[str, Any],
    given: dict[str, Any],
    source: str = "options",
    name: Callable[[str], str] | None = None,
) -> RunSpec:
    """A spec from ``base`` (a spec file's fields) overridden by ``given`` (options
    given on the command line or as arguments); mappings merge key by key. ``name``
    says how a problem names a field (see :func:`spec_error`)."""
    merged = {**base, **given}
    for key in _MERGED:
        if isinstance(base.get(key), dict) and isinstance(given.get(key), dict):
            merged[key] = {**base[key], **given[key]}
    if not merged.get("suite"):
        raise SpecError("give a SUITE to run (or `suite:` in the --spec file)")
    try:
        return RunSpec.model_validate(merged)
    except ValidationError as exc:
        raise spec_error(exc, source, name) from None


def load_spec_file(path: str | Path) -> dict[str, Any]:
    """The fields of a run spec YAML file, checked (problems as ``file:line: field``)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read the run spec {file}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data, located = parse_yaml(text, str(file))
    except ProblemError as exc:
        raise SpecError(str(exc.problems[0])) from None
    if not isinstance(data, dict):
        raise SpecError(f"{file}:1: a run spec is a mapping of fields (suite, agent, trials, ...)")
    try:
        RunSpec.model_validate({"suite": "-", **data})
    except ValidationError as exc:
        raise SpecError(str(validation_problems(exc, located)[0])) from None
    return data


@dataclass
class Resolved:
    """A spec made concrete: the loaded suite, the configuration under test, the fault
    plan and the run's tasks."""

    spec: RunSpec
    suite: LoadedSuite
    source: str
    config: Config
    fault_plan: FaultPlan | None
    tasks: TaskSource
    evidence_checks: list[dict[str, Any]] = field(default_factory=list)
    """The probe track's checks of the tasks' evidence (empty on the snapshot track)."""

    @property
    def trials_per_task(self) -> int:
        return self.spec.trials or self.suite.defaults.trials

    @property
    def made_first(self) -> bool:
        """Whether the run makes its tasks before its first trial (see :func:`made_first`)."""
        return made_first(self.suite)


def load_source(source: str | Path | LoadedSuite) -> tuple[LoadedSuite, str]:
    """The loaded suite and how the run records where it came from (an absolute
    folder path, or a built-in name)."""
    if isinstance(source, LoadedSuite):
        return source, str(source.path or source.name)
    loaded = load_suite(source)
    path = Path(str(source))
    return loaded, str(path.resolve()) if path.exists() else str(source)


def task_source(suite: LoadedSuite, seed: int, keep: Callable[[Task], bool]) -> TaskSource:
    """The run's concrete tasks, again for each pass, made once per run as the passes
    ask (:class:`MadeOnce`): kept in memory for ordinary suites; for suites with JSONL
    files or more than :data:`IN_MEMORY_TASKS` tasks, kept pickled in a temporary file
    (memory stays flat)."""
    return MadeOnce(lambda: (t for t in iter_instances(suite, seed) if keep(t)), spill=spills(suite))


def spills(suite: LoadedSuite) -> bool:
    """Whether a run keeps the suite's tasks in a temporary file rather than in memory."""
    return suite.streamed or sum(spec.instances for spec in suite.tasks) > IN_MEMORY_TASKS


def made_first(suite: LoadedSuite) -> bool:
    """Whether a run makes all the suite's tasks before its first trial rather than as
    the trials ask: a suite kept on disk (reading it whole would hold the first results
    back from the store, 1.2 s for 25,000 tasks) or one with templates (they run the
    suite's own code, which may be slow or fail: better before any trial, and a loop
    waiting for a task would delay the trials under way). Copies of a task
    (``instances: N``) are cheap and cannot fail: they are made as the run asks."""
    return spills(suite) or any(spec.template is not None for spec in suite.tasks)


#: Suites of at most this many concrete tasks keep them in memory during a run; larger
#: ones (and suites with JSONL files) keep them in a temporary file (about 2 kB a task).
IN_MEMORY_TASKS = 10_000


class MadeOnce:
    """A run's tasks, made once, on first demand, and kept for every later pass: in
    memory, or (``spill``) pickled in an unnamed temporary file, so that memory stays
    flat however many tasks a suite has.

    A pass reads the tasks made so far and makes the next one itself when it gets there
    first. A run's first trials may start while its tasks are still being made (copies
    of a task, see :func:`made_first`), and then two passes run at once in two threads
    (the event loop taking the trials' tasks, the store's writer thread taking every
    task's metadata for the run's rows), so the making is locked: it happens once, in
    suite order, whichever pass does it. A pass given up half-way leaves what it made
    for the next. An error while making a task is raised to every pass that reaches it.
    The temporary file goes with the object."""

    def __init__(self, make: TaskSource, spill: bool = False):
        self._make = make
        self._source: Iterator[Task] | None = None
        self._lock = threading.Lock()
        self._ended = False
        self._error: BaseException | None = None
        self._made: list[Task] = []  # in memory
        self._file: IO[bytes] | None = None  # spilled: the tasks, one pickle after another,
        self._offsets = array("q", [0]) if spill else None  # ... and where each one starts and ends

    def __call__(self) -> Iterator[Task]:
        i = 0
        while True:
            if i < self._count():
                yield self._read(i)
            else:
                task = self._make_next(i)
                if task is None:
                    return
                yield task
            i += 1

    def _count(self) -> int:
        return len(self._made) if self._offsets is None else len(self._offsets) - 1

    def _read(self, i: int) -> Task:
        if self._offsets is None:
            return self._made[i]
        assert self._file is not None
        start, end = self._offsets[i], self._offsets[i + 1]
        return pickle.loads(os.pread(self._file.fileno(), end - start, start))

    def _make_next(self, i: int) -> Task | None:
        """The task after the first ``i``, made now unless another pass has; None at the end."""
        with self._lock:
            if i < self._count():
                return self._read(i)
            if self._error is not None:
                raise self._error
            if self._ended:
                return None
            try:
                if self._source is None:
                    self._source = iter(self._make())
                task = next(self._source)
                if self._offsets is None:
                    self._made.append(task)
                else:
                    self._spill(task)
            except StopIteration:
                self._ended = True
                return None
            except BaseException as exc:
                self._error = exc
                raise
            return task

    def _spill(self, task: Task) -> None:
        assert self._offsets is not None
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="assay-tasks-", buffering=0)  # noqa: SIM115 (kept for the run)
        data = pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)
        os.pwrite(self._file.fileno(), data, self._offsets[-1])  # passes read with pread: no shared position
        self._offsets.append(self._offsets[-1] + len(data))


def _model_of(spec: str) -> str | None:
    """The model id of an LLM-backed spec (``openai:gpt-4o`` -> itself), of a replayed
    recording (``recorded:gpt-4.1`` -> ``gpt-4.1``), else None."""
    kind, _, rest = spec.partition(":")
    if kind == "recorded":
        return rest or None
    return spec if kind in PROVIDERS else None


def _checked_faults(spec: RunSpec, suite: LoadedSuite) -> FaultPlan | None:
    """The run's fault plan; every tool it names must exist in the suite's domain."""
    plan = load_fault_plan(spec.faults if spec.faults is not None else suite.defaults.faults)
    if plan:
        tools = set(get_domain(suite.domain_ref).toolkit.names())
        for rule in plan.rules:
            if rule.tool != "*" and rule.tool not in tools:
                known = ", ".join(sorted(tools)) or "none"
                raise SpecError(
                    f"faults: unknown tool {rule.tool!r} for domain {suite.domain!r}; tools: {known}"
                )
    return plan


def resolve(spec: RunSpec, suite: LoadedSuite | None = None) -> Resolved:
    """Load the spec's suite (or use ``suite``), fill in defaults and check everything a
    run needs, so that a bad spec fails before the first trial and stores nothing."""
    loaded, source = load_source(suite if suite is not None else spec.suite)
    agent = spec.agent or loaded.defaults.agent
    if agent is None:
        raise SpecError(f"suite {loaded.name} names no default agent (defaults.agent); give --agent SPEC")
    user = spec.user or loaded.defaults.user
    factory = agent_factory(agent)  # fail now, with a clear message, on a bad spec
    user_factory(user)
    for judge in spec.judges:
        parse_spec(judge)
    spec = spec.model_copy(update={"agent": agent, "user": user, "seed": spec.seed or 0})
    config = Config(
        agent=agent,
        user=user,
        model=_model_of(agent),
        prompt_version=spec.prompt_version or declared_prompt_version(factory),
        flags=dict(spec.flags),
        params=dict(spec.params),
    )
    plan = _checked_faults(spec, loaded)
    perturbations = load_perturbations(spec.perturb)
    if perturbations:  # stored resolved: a resumed run perturbs the same way
        spec = spec.model_copy(update={"perturb": perturbations.model_dump(mode="json")})
    keep = task_filter(spec.split, spec.tags, spec.task_ids)
    tasks = task_source(loaded, spec.seed or 0, keep)
    checks = check_evidence(tasks(), load_probe(spec.probe)) if spec.probe else []
    tasks = variant_source(tasks, perturbations, spec.seed or 0, checks if spec.probe else None)
    return Resolved(spec, loaded, source, config, plan, tasks, checks)
