"""The grader base class (typed parameters) and the run settings graders receive."""

from __future__ import annotations

import weakref
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, cast

from pydantic import BaseModel, ConfigDict

from ..core.results import GradeResult, Outcome
from ..core.task import GraderSpec, Task
from ..core.transcript import Transcript
from ..envs.environment import Domain

PathKey = tuple[str | int, ...]

#: Parsed parameters by (grader class, spec object), held weakly: a task's graders are
#: built for each of its trials, their parameters validated once.
_PARAMS: dict[tuple[type[Any], int], tuple[weakref.ref[GraderSpec], Any]] = {}


def _parsed(cls: type[Grader[Any]], spec: GraderSpec) -> Any:
    key = (cls, id(spec))
    hit = _PARAMS.get(key)
    if hit is not None and hit[0]() is spec:
        return hit[1]
    params = cls.parse(spec.params)

    def forget(_: object) -> None:
        _PARAMS.pop(key, None)

    _PARAMS[key] = (weakref.ref(spec, forget), params)
    return params


@dataclass(frozen=True)
class GraderSettings:
    """Run-level settings graders may need: the judge models (model specs, e.g.
    ``openai:gpt-4o``; several make a panel) and options for their clients (cache,
    pricing, base_url...). Empty ``judges``: judge graders report ``skipped``."""

    judges: tuple[str, ...] = ()
    judge_options: dict[str, Any] = field(default_factory=dict)


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


P = TypeVar("P", bound=BaseModel)


class Grader(Generic[P]):
    """A grader kind: typed parameters (its ``Params`` model), and ``grade`` turning
    (task, transcript, outcome) into a GradeResult (it may be async).

    Subclass it as ``class MyGrader(Grader[MyParams])`` with ``kind`` and ``Params``
    set; override :meth:`coerce` to accept a short form of the parameters,
    :meth:`tool_refs` to name the tools they mention and :meth:`check` for other
    problems (both used by ``assay validate``), and implement :meth:`grade`.
    Register the class under its kind (``GRADERS``, or a plugin's ``GRADERS`` dict).
    """

    kind: ClassVar[str]
    Params: ClassVar[type[BaseModel]] = Params
    version: ClassVar[str] = "1"
    shared: ClassVar[bool] = False
    """Whether one grader may grade every trial of a task: ``grade`` keeps nothing on
    it (``build_grader`` then builds it once per spec, domain and settings). Declared
    by each class itself: a subclass is not shared unless it says so."""
    params: P

    def __init__(self, spec: GraderSpec, domain: Domain, settings: GraderSettings | None = None):
        self.spec = spec
        self.name = spec.label
        self.gating = spec.gating
        self.domain = domain
        self.settings = settings or GraderSettings()
        self.params = _parsed(type(self), spec)

    @classmethod
    def parse(cls, raw: Any) -> P:
        """The typed parameters of a spec's raw ``params`` (pydantic ValidationError if bad)."""
        return cast(P, cls.Params.model_validate(cls.coerce(raw)))

    @classmethod
    def coerce(cls, raw: Any) -> Any:
        """Turn the short form of the parameters into the ``Params`` mapping."""
        return {} if raw is None else raw

    @classmethod
    def tool_refs(cls, params: P) -> list[tuple[PathKey, str]]:
        """(path in params, tool name) for every tool the parameters name."""
        return []

    @classmethod
    def check(cls, params: P, domain: Domain, task: Task) -> list[tuple[PathKey, str]]:
        """Problems of valid parameters that only the suite can reveal (a missing rubric)."""
        return []

    def result(self, passed: bool | None, reason: str, **fields: Any) -> GradeResult:
        return GradeResult(
            grader=self.name,
            kind=self.kind,
            passed=passed,
            reason=reason,
            gating=self.gating,
            version=self.version,
            score=fields.pop("score", None if passed is None else float(passed)),
            **fields,
        )

    def skip(self, reason: str) -> GradeResult:
        return GradeResult.skip(self.name, self.kind, reason, gating=self.gating)

    def grade(
        self, task: Task, transcript: Transcript, outcome: Outcome
    ) -> GradeResult | Awaitable[GradeResult]:
        raise NotImplementedError


def named_tools(params: BaseModel, *sections: str) -> list[tuple[PathKey, str]]:
    """(path, tool name) of the tools listed in ``sections`` of typed parameters: lists
    of names or of patterns/actions with a ``name``."""
    refs: list[tuple[PathKey, str]] = []
    for section in sections:
        for i, item in enumerate(getattr(params, section) or []):
            if isinstance(item, str):
                refs.append(((section, i), item))
            elif isinstance(getattr(item, "name", None), str):
                refs.append(((section, i, "name"), item.name))
    return refs
