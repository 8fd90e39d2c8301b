"""Making a suite's tasks concrete for a run seed: defaults applied, instances
expanded, templates run."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from ..core.collector import paused_gc
from ..core.hashing import derive_seed, stable_hashes
from ..core.sources import ProblemError
from ..core.task import Task
from ..envs.registry import get_domain
from ..errors import SuiteError
from .loaded import LoadedSuite

#: "Now" of a task that names no as-of time, so runs never depend on the wall clock.
DEFAULT_AS_OF = datetime(2025, 1, 15, 12, 0, 0)

_SPEC_ONLY = {"template", "params", "instances", "id"}


def instance_ids(spec: Task) -> list[str]:
    return [spec.id] if spec.instances == 1 else [f"{spec.id}-{i + 1}" for i in range(spec.instances)]


def data_seed(seed: int) -> int:
    """Seed of the generated world shared by the templated tasks of a run."""
    return derive_seed(seed, "data") % (2**31)


def instantiate_task(
    suite: LoadedSuite, spec: Task, seed: int, index: int, where: tuple[Any, Any] | None = None
) -> Task:
    """The ``index``-th concrete task of ``spec`` for run seed ``seed``."""
    task_id = spec.id if spec.instances == 1 else f"{spec.id}-{index + 1}"
    as_of = spec.as_of or suite.defaults.as_of or DEFAULT_AS_OF
    timezone = spec.timezone or suite.defaults.timezone
    suite_dir = {"suite_dir": str(suite.path)} if suite.path is not None else {}
    opening = {
        name: getattr(suite.defaults, name)
        for name in ("first_speaker", "greeting")
        if name not in spec.model_fields_set
    }
    if spec.template is None:
        update: dict[str, Any] = {"id": task_id, "as_of": as_of, "timezone": timezone, **opening}
        if suite_dir and "suite_dir" not in spec.metadata:
            update["metadata"] = {**spec.metadata, **suite_dir}
        if "initial_state" not in spec.model_fields_set:
            update["initial_state"] = spec.initial_state.model_copy(update={"seed": suite.defaults.data_seed})
        return spec.model_copy(update=update)

    from .loader import locate
    from .templates import TemplateContext

    located, prefix = where or locate(suite, spec.id)
    world = data_seed(seed)
    ctx = TemplateContext(
        task_id=task_id,
        seed=derive_seed(seed, "task", task_id),
        params=dict(spec.params),
        as_of=as_of,
        timezone=timezone,
        db=get_domain(suite.domain_ref).base_state(world),
        suite_dir=suite.path,
    )
    produced = _run_template(suite, spec, ctx, located, prefix)
    explicit = spec.model_dump(include=spec.model_fields_set - _SPEC_ONLY)
    merged = {**opening, **produced, **explicit}
    merged["tags"] = sorted(set(produced.get("tags", [])) | set(spec.tags))
    records = produced.pop("records", None) or produced.get("initial_state", {}).get("records", {})
    merged.pop("records", None)
    merged.update(
        id=task_id,
        as_of=as_of,
        timezone=timezone,
        template=spec.template,
        params=spec.params,
        instances=1,
        initial_state={"seed": world, "records": records},
        metadata={**suite_dir, **produced.get("metadata", {}), **spec.metadata, "template_seed": ctx.seed},
    )
    return _validated(merged, spec, located, prefix)


def _run_template(suite: LoadedSuite, spec: Task, ctx: Any, located: Any, prefix: Any) -> dict[str, Any]:
    """What the task's template makes of ``ctx``; a template that fails is located, never a crash."""
    from .loader import suite_templates

    fn = suite_templates(suite)[str(spec.template)]
    try:
        return dict(fn(ctx))
    except (Exception, SystemExit) as exc:
        raise ProblemError(
            [located.problem(("template",), f"template {spec.template!r} failed: {exc!r}", prefix)]
        ) from None


def _validated(merged: dict[str, Any], spec: Task, located: Any, prefix: Any) -> Task:
    try:
        return Task.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        message = f"template {spec.template!r} produced an invalid task: {field}: {first['msg']}"
        raise ProblemError([located.problem(("template",), message, prefix)]) from None


def iter_instances(suite: LoadedSuite, seed: int = 0) -> Iterator[Task]:
    """Every concrete task of ``suite`` for run seed ``seed``, in suite order, one at a
    time (tasks from JSONL files are streamed)."""
    from .loader import iter_specs

    for spec in iter_specs(suite):
        try:
            yield from _instances(suite, spec, seed)
        except ProblemError as exc:
            raise SuiteError(exc.problems) from None


def _instances(suite: LoadedSuite, spec: Task, seed: int) -> Iterator[Task]:
    """The concrete tasks of one spec. The instances of a spec without a template
    differ only in their ids: the second on are the first renamed, hashed from the
    first's canonical JSON with the id put in (a 2,000-instance suite was made and hashed in 0.2 s, the
    time 200 trials of a fast agent take)."""
    if spec.template is not None or spec.instances == 1:
        for index in range(spec.instances):
            yield instantiate_task(suite, spec, seed, index)
        return
    first = instantiate_task(suite, spec, seed, 0)
    yield first
    hash_of = stable_hashes(first.hashed_data(), "id")
    for index in range(1, spec.instances):
        task_id = f"{spec.id}-{index + 1}"
        yield first.renamed(task_id, hash_of(task_id))


def instantiate(suite: LoadedSuite, seed: int = 0) -> list[Task]:
    """Every concrete task of ``suite`` for run seed ``seed``, in suite order (made with
    the collector paused: they live through the run, and full collections during their
    making took most of a 2,000-task run's set-up)."""
    with paused_gc():
        return list(iter_instances(suite, seed))
