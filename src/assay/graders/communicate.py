"""``communicate``: required facts appear in the agent's messages, and forbidden ones
(another user's data, say) do not.

Two rules (``mode``): ``normalized`` (default) looks in all the agent's messages at once,
normalised (case, NFKC, dashes, thousands separators, ``$``, trailing ``.00``);
``tau2`` is tau2-bench's rule: each string, lower-cased, must occur in one agent
message, lower-cased with its commas removed (a required string with a comma never
matches, as in tau2). The grade's ``metrics`` give ``met[i]`` (1/0) for each required
string, in order.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..core.results import GradeResult, Outcome
from ..core.task import Task
from ..core.transcript import Transcript
from .base import Grader, Params
from .matching import normalize_text


class CommunicateParams(Params):
    required: list[str] = Field(default_factory=list)
    forbidden: list[str] = Field(default_factory=list)
    mode: Literal["normalized", "tau2"] = "normalized"


def said_tau2(fact: str, texts: list[str]) -> bool:
    """tau2's communicate rule for one string (see the module docstring)."""
    needle = fact.lower()
    return any(needle in text.lower().replace(",", "") for text in texts)


class CommunicateGrader(Grader[CommunicateParams]):
    kind = "communicate"
    Params = CommunicateParams
    shared = True

    @classmethod
    def coerce(cls, raw: Any) -> Any:
        if isinstance(raw, str):
            return {"required": [raw]}
        if isinstance(raw, list):
            return {"required": raw}
        return {} if raw is None else raw

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        p: CommunicateParams = self.params
        texts = [t for t in transcript.agent_texts() if t.strip()]
        if p.mode == "tau2":
            met = [said_tau2(str(r), texts) for r in p.required]
            leaked = [f for f in p.forbidden if said_tau2(str(f), texts)]
        else:
            said = normalize_text(" \n ".join(texts))
            met = [normalize_text(str(r)) in said for r in p.required]
            leaked = [f for f in p.forbidden if normalize_text(str(f)) in said]
        missing = [r for r, ok in zip(p.required, met, strict=True) if not ok]
        metrics = {f"met[{i}]": float(ok) for i, ok in enumerate(met)}
        if leaked:
            return self.result(
                False,
                f"the agent said what it must not: {', '.join(map(repr, leaked))}",
                category="disclosure",
                veto=False,
                metrics=metrics,
            )
        if missing:
            return self.result(
                False,
                f"the agent never said {', '.join(map(repr, missing))}",
                category="missing_information",
                score=1 - len(missing) / len(p.required),
                metrics=metrics,
            )
        return self.result(True, f"all {len(p.required)} required facts were communicated", metrics=metrics)
