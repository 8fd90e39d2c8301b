"""``communicate``: required facts appear in the agent's messages (normalised), and
forbidden ones (another user's data, say) do not."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..core.results import GradeResult, Outcome
from ..core.task import Task
from ..core.transcript import Transcript
from .base import Grader, Params
from .matching import normalize_text


class CommunicateParams(Params):
    required: list[str] = Field(default_factory=list)
    forbidden: list[str] = Field(default_factory=list)


class CommunicateGrader(Grader[CommunicateParams]):
    kind = "communicate"
    Params = CommunicateParams

    @classmethod
    def coerce(cls, raw: Any) -> Any:
        if isinstance(raw, str):
            return {"required": [raw]}
        if isinstance(raw, list):
            return {"required": raw}
        return {} if raw is None else raw

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        said = normalize_text(" \n ".join(transcript.agent_texts()))
        missing = [r for r in self.params.required if normalize_text(str(r)) not in said]
        leaked = [f for f in self.params.forbidden if normalize_text(str(f)) in said]
        if leaked:
            return self.result(
                False,
                f"the agent said what it must not: {', '.join(map(repr, leaked))}",
                category="disclosure",
                veto=False,
            )
        if missing:
            return self.result(
                False,
                f"the agent never said {', '.join(map(repr, missing))}",
                category="missing_information",
                score=1 - len(missing) / len(self.params.required),
            )
        return self.result(True, f"all {len(self.params.required)} required facts were communicated")
