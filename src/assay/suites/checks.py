"""Checks of a suite's tasks that the task model does not make: a safe id and seeds
that fit the store; and, against the suite's domain, a template that exists and makes
a valid task, graders that are known and name existing tools, and a world the domain
can build."""

from __future__ import annotations

import re

from ..core.sources import Located, PathKey, ProblemError
from ..core.task import Task
from ..envs.registry import get_domain
from ..errors import Problem
from .loaded import LoadedSuite
from .templates import TemplateFn

#: Task ids: a letter, digit, underscore or ``[``, then letters, digits, ``_ . : - [ ] |``
#: (tau2-bench's telecom ids look like ``[mobile_data_issue]airplane_mode_on|bad_vpn[PERSONA:Easy]``;
#: output escapes them, URLs quote them).
SAFE_ID = re.compile(r"[\w\[][\w.:\[\]|-]{0,299}")
#: Seeds are stored as 64-bit integers.
SEED_RANGE = (-(2**63), 2**63 - 1)


def task_problem(task: Task) -> tuple[PathKey, str] | None:
    """Checks a run depends on that the task model does not make: a safe id (it is
    printed, stored and used in URLs) and seeds that fit the store."""
    if not SAFE_ID.fullmatch(task.id):
        return ("id",), (
            f"task id {task.id!r}: use letters, digits and _ . : - [ ] | "
            "(starting with a letter, digit, _ or [), at most 300 characters"
        )
    seed = task.initial_state.seed
    if not SEED_RANGE[0] <= seed <= SEED_RANGE[1]:
        return ("initial_state", "seed"), f"seed {seed} does not fit in 64 bits"
    return None


def _check_task(
    suite: LoadedSuite, spec: Task, located: Located, prefix: PathKey, templates: dict[str, TemplateFn]
) -> list[Problem]:
    """Semantic checks of one task: its template exists and produces a valid task; its
    graders are known and name existing tools."""
    from .instantiate import instantiate_task

    if spec.template is not None and spec.template not in templates:
        known = ", ".join(sorted(templates)) or "none"
        return [located.problem(("template",), f"unknown template {spec.template!r}; known: {known}", prefix)]
    try:
        concrete = instantiate_task(suite, spec, 0, 0, where=(located, prefix))
    except ProblemError as exc:
        return exc.problems
    return _check_graders(suite, spec, concrete, located, prefix) + _check_world(
        suite, spec, concrete, located, prefix
    )


def _check_world(
    suite: LoadedSuite, spec: Task, task: Task, located: Located, prefix: PathKey
) -> list[Problem]:
    """Records written into a task must make a world the domain can build (known tables,
    the keys the domain needs), or every trial of it would fail as a harness error."""
    if not spec.initial_state.records:
        return []
    from .instantiate import DEFAULT_AS_OF

    domain = get_domain(suite.domain_ref)
    try:
        env = domain.environment(task, task.as_of or DEFAULT_AS_OF)
        env.reset(task.initial_state.seed)
    except Exception as exc:  # the domain's own message says what is wrong
        message = f"the {domain.name} domain cannot build this task's world: {type(exc).__name__}: {exc}"
        return [located.problem(located.written(("initial_state", "records")), message, prefix)]
    return []


def _check_graders(
    suite: LoadedSuite, spec: Task, task: Task, located: Located, prefix: PathKey
) -> list[Problem]:
    from ..graders.registry import check_grader_spec

    domain = get_domain(suite.domain_ref)
    problems = []
    from_template = spec.template is not None and "graders" not in spec.model_fields_set
    for i, grader in enumerate(task.graders):
        for subpath, message in check_grader_spec(grader, domain, task):
            if from_template:
                path: PathKey = ("template",)
                message = f"template {spec.template!r} made grader {grader.label!r} with a problem: {message}"
            else:
                short = (*located.base, "graders", i, grader.kind) in located.lines
                path = located.written(("graders", i, grader.kind if short else "params", *subpath))
            problems.append(located.problem(path, message, prefix))
    return problems
