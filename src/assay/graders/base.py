"""The Grader protocol and the base class of the rule graders."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from ..core.results import GradeResult, Outcome
from ..core.task import GraderSpec, Task
from ..core.transcript import Transcript
from ..envs.environment import Domain

PathKey = tuple[str | int, ...]


@runtime_checkable
class Grader(Protocol):
    """Turns (task, transcript, outcome) into a GradeResult; may be async."""

    name: str
    kind: str
    gating: bool

    def grade(
        self, task: Task, transcript: Transcript, outcome: Outcome
    ) -> GradeResult | Awaitable[GradeResult]: ...


@dataclass(frozen=True)
class GraderSettings:
    """Run-level settings graders may need: the judge models (model specs, e.g.
    ``openai:gpt-4o``; several make a panel) and options for their clients (cache,
    pricing, base_url...). Empty ``judges``: judge graders report ``skipped``."""

    judges: tuple[str, ...] = ()
    judge_options: dict[str, Any] = field(default_factory=dict)


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RuleGrader:
    """Base of graders configured by a pydantic ``Params`` model.

    Subclasses set ``kind`` and ``Params``, may override :meth:`coerce` to accept a
    short form of their parameters, :meth:`tool_refs` to name the tools their
    parameters mention (checked by ``assay validate``), and implement :meth:`grade`.
    """

    kind: ClassVar[str]
    Params: ClassVar[type[BaseModel]] = Params
    version: ClassVar[str] = "1"

    def __init__(self, spec: GraderSpec, domain: Domain, settings: GraderSettings | None = None):
        self.spec = spec
        self.name = spec.label
        self.gating = spec.gating
        self.domain = domain
        self.settings = settings or GraderSettings()
        self.params: Any = self.Params.model_validate(self.coerce(spec.params))

    @classmethod
    def coerce(cls, raw: Any) -> Any:
        """Turn the short form of the parameters into the ``Params`` mapping."""
        return {} if raw is None else raw

    @classmethod
    def tool_refs(cls, params: Any) -> list[tuple[PathKey, str]]:
        """(path in params, tool name) for every tool the parameters name."""
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

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        raise NotImplementedError
