"""``text``: the agent's answer checked by exact match, containment, regex or a
number within a tolerance."""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from pydantic import model_validator

from ..core.results import GradeResult, Outcome
from ..core.task import Task
from ..core.transcript import Transcript
from .base import Grader, Params
from .matching import normalize_text

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


class TextParams(Params):
    exact: str | None = None
    contains: str | list[str] | None = None
    regex: str | None = None
    numeric: float | None = None
    tolerance: float = 0.0
    relative: bool = False
    normalize: bool = True
    target: Literal["final", "all", "reference"] = "final"

    @model_validator(mode="after")
    def _one_check(self) -> TextParams:
        chosen = [n for n in ("exact", "contains", "regex", "numeric") if getattr(self, n) is not None]
        if len(chosen) > 1:
            raise ValueError(f"choose one of exact, contains, regex, numeric (got {', '.join(chosen)})")
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:  # not a ValueError: pydantic would let it through
                raise ValueError(f"regex {self.regex!r} is not a valid regular expression: {exc}") from None
        for name in ("numeric", "tolerance"):
            value = getattr(self, name)
            if value is not None and not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, not {value}")
        if self.tolerance < 0:
            raise ValueError(f"tolerance must be 0 or more, not {self.tolerance}")
        return self


class TextGrader(Grader[TextParams]):
    kind = "text"
    Params = TextParams

    @classmethod
    def coerce(cls, raw: Any) -> Any:
        if isinstance(raw, str):
            return {"contains": raw}
        return {} if raw is None else raw

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        p = self.params
        texts = transcript.agent_texts()
        answer = texts[-1] if texts and p.target != "all" else " \n ".join(texts)
        if not answer:
            return self.result(False, "the agent gave no answer", category="no_answer")
        if p.exact is None and p.contains is None and p.regex is None and p.numeric is None:
            if task.reference.answer is None:
                return self.skip("no expected text: give exact/contains/regex/numeric or reference.answer")
            expected_exact: str | None = task.reference.answer
        else:
            expected_exact = p.exact
        norm = normalize_text if p.normalize else (lambda s: s)
        if expected_exact is not None:
            ok = norm(answer) == norm(expected_exact)
            return self.result(
                ok,
                "answer matches exactly" if ok else f"answer {answer[:80]!r} is not {expected_exact!r}",
                category=None if ok else "wrong_answer",
            )
        if p.contains is not None:
            needles = [p.contains] if isinstance(p.contains, str) else p.contains
            missing = [n for n in needles if norm(n) not in norm(answer)]
            return self.result(
                not missing,
                "answer contains the expected text"
                if not missing
                else f"answer lacks {', '.join(map(repr, missing))}",
                category=None if not missing else "wrong_answer",
            )
        if p.regex is not None:
            ok = re.search(p.regex, answer, flags=re.IGNORECASE if p.normalize else 0) is not None
            return self.result(
                ok,
                f"answer {'matches' if ok else 'does not match'} /{p.regex}/",
                category=None if ok else "wrong_answer",
            )
        assert p.numeric is not None  # exact, contains and regex are handled above
        numbers = _NUMBER.findall(answer.replace(",", ""))
        if not numbers:
            return self.result(False, "answer contains no number", category="wrong_answer")
        value, target = float(numbers[-1]), float(p.numeric)
        allowed = p.tolerance * abs(target) if p.relative else p.tolerance
        ok = abs(value - target) <= allowed + 1e-12
        return self.result(
            ok,
            f"answer {value:g} {'is' if ok else 'is not'} within {allowed:g} of {target:g}",
            category=None if ok else "wrong_answer",
        )
