"""Resolving a run spec: load its suite, fill in the suite's defaults, check every spec
string before the first trial, and compute the configuration (and its hash).

A run that cannot start fails here with one clear sentence, before anything is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from ..suites.instantiate import instantiate, iter_instances
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


def load_source(source: str | Path | LoadedSuite) -> tuple[LoadedSuite, str]:
    """The loaded suite and how the run records where it came from (an absolute
    folder path, or a built-in name)."""
    if isinstance(source, LoadedSuite):
        return source, str(source.path or source.name)
    loaded = load_suite(source)
    path = Path(str(source))
    return loaded, str(path.resolve()) if path.exists() else str(source)


def task_source(suite: LoadedSuite, seed: int, keep: Callable[[Task], bool]) -> TaskSource:
    """The run's concrete tasks, again for each pass: kept in memory for ordinary
    suites, streamed from disk (memory stays flat) for suites with JSONL files."""
    if not suite.streamed:
        tasks = [t for t in instantiate(suite, seed) if keep(t)]
        return lambda: tasks
    return lambda: (t for t in iter_instances(suite, seed) if keep(t))


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
