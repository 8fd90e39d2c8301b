"""Grader kinds by name, building a task's graders, checking grader specs, grading."""

from __future__ import annotations

import inspect
import weakref
from typing import Any

from pydantic import ValidationError

from ..core.registry import Registry
from ..core.results import GradeResult, Outcome
from ..core.task import GraderSpec, Task
from ..core.transcript import Transcript
from ..envs.environment import Domain
from ..errors import HarnessError
from .base import Grader, GraderSettings, PathKey

GRADERS: Registry[type[Grader[Any]]] = Registry(
    "grader kind",
    "GRADERS",
    {
        "state": "assay.graders.state:StateGrader",
        "communicate": "assay.graders.communicate:CommunicateGrader",
        "actions": "assay.graders.actions:ActionsGrader",
        "env_assert": "assay.graders.env_assert:EnvAssertGrader",
        "text": "assay.graders.text:TextGrader",
        "judge": "assay.graders.judge:JudgeGrader",
        "trajectory": "assay.graders.agent:TrajectoryGrader",
        "tool_selection": "assay.graders.agent:ToolSelectionGrader",
        "error_recovery": "assay.graders.agent:ErrorRecoveryGrader",
        "skill_routing": "assay.graders.routing:SkillRoutingGrader",
        "safety": "assay.graders.routing:SafetyGrader",
        "structured": "assay.graders.structured:StructuredGrader",
        "retrieval": "assay.graders.rag:RetrievalGrader",
        "citations": "assay.graders.rag:CitationsGrader",
        "groundedness": "assay.graders.rag_generation:GroundednessGrader",
        "faithfulness": "assay.graders.rag_generation:FaithfulnessGrader",
        "answer_correctness": "assay.graders.rag_generation:AnswerCorrectnessGrader",
        "tests": "assay.graders.tests:TestsGrader",
        "replay": "assay.graders.replay:ReplayGrader",
    },
)


def is_judge_kind(kind: str) -> bool:
    """Whether grades of ``kind`` come from an LLM judge (``judge`` and kinds built on
    it, such as ``faithfulness``): those are labelled by humans and calibrated."""
    from .judge import JudgeGrader

    try:
        cls = GRADERS.get(kind)
    except (KeyError, ImportError, AttributeError):
        return False
    return isinstance(cls, type) and issubclass(cls, JudgeGrader)


#: Graders that may grade every trial (``Grader.shared``), by (class, spec object,
#: domain object), held weakly on the spec: the k trials of a task share theirs.
_BUILT: dict[
    tuple[type[Any], int, int], tuple[weakref.ref[GraderSpec], Domain, GraderSettings, Grader[Any]]
] = {}


def build_grader(spec: GraderSpec, domain: Domain, settings: GraderSettings | None = None) -> Grader[Any]:
    """The grader a spec describes, for a domain, with the run's grader settings."""
    cls = GRADERS.get(spec.kind)
    if not vars(cls).get("shared", False):  # declared by the class itself, not inherited
        return cls(spec, domain, settings)
    settings = settings or GraderSettings()
    key = (cls, id(spec), id(domain))
    hit = _BUILT.get(key)
    if hit is not None and hit[0]() is spec and hit[1] is domain and hit[2] == settings:
        return hit[3]
    grader = cls(spec, domain, settings)

    def forget(_: object) -> None:
        _BUILT.pop(key, None)

    _BUILT[key] = (weakref.ref(spec, forget), domain, settings, grader)
    return grader


def check_grader_spec(spec: GraderSpec, domain: Domain, task: Task) -> list[tuple[PathKey, str]]:
    """Problems of one grader spec as (path inside its params, message)."""
    if spec.kind not in GRADERS:
        return [((), f"unknown grader kind {spec.kind!r}; known: {', '.join(GRADERS.names())}")]
    cls = GRADERS.get(spec.kind)
    try:
        params = cls.parse(spec.params)
    except ValidationError as exc:
        return [
            (
                tuple(err["loc"]),
                "unknown field"
                if err["type"] == "extra_forbidden"
                else err["msg"].removeprefix("Value error, "),
            )
            for err in exc.errors()
        ]
    problems = list(cls.check(params, domain, task))
    tools = set(domain.toolkit.names())
    for path, name in cls.tool_refs(params):
        if name not in tools:
            known = ", ".join(sorted(tools)) or "none"
            problems.append((path, f"unknown tool {name!r} for domain {domain.name!r}; tools: {known}"))
    return problems


async def grade_trial(
    graders: list[Grader[Any]], task: Task, transcript: Transcript, outcome: Outcome
) -> list[GradeResult]:
    """Run every grader. A grader that crashes yields a skipped result saying why:
    a grader bug never passes a trial, and never crashes the run. A
    :class:`~assay.errors.HarnessError` (the sandbox a grader needs cannot start) is
    raised: the trial is then a harness error, not a grading one."""
    results = []
    for grader in graders:
        try:
            result = grader.grade(task, transcript, outcome)
            if not isinstance(result, GradeResult) and inspect.isawaitable(result):
                result = await result
        except HarnessError:
            raise
        except Exception as exc:
            result = GradeResult.skip(
                grader.name, grader.kind, f"grader crashed: {exc!r}", gating=grader.gating
            )
            result.category = "grader_error"
        results.append(result)
    return results
