"""Rubrics as data (``rubric.yaml``, see docs/rubrics.md): weighted dimensions with
concrete level anchors, pass/fail veto and pitfall items, examples and edge cases, a
content hash recorded with every grade, and the score aggregation of the judge.

Aggregation (:meth:`Rubric.aggregate`): levelled dimensions are normalised to 0..1 and
averaged with their weights (essential 3, important 2, optional 1, or ``points``); every
failed pitfall subtracts its ``penalty``; any failed veto sets the score to 0. The grade
passes when no veto failed, every essential dimension reached ``pass_level`` and the
score reached ``pass_score``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..core.hashing import stable_hash
from ..core.sources import Located, validation_problems
from ..core.task import Task
from ..errors import Problem
from .files import GraderFileError, parse_located, resolve_file

WeightClass = Literal["essential", "important", "optional", "pitfall", "veto"]
LooksAt = Literal["text", "image", "audio"]
#: Default weight of each levelled weight class in the weighted mean.
WEIGHTS = {"essential": 3.0, "important": 2.0, "optional": 1.0}
BINARY = ("pitfall", "veto")
_LEVEL_KEY = re.compile(r"^\s*(\d+)\s*(?:[_\-:. ]\s*(.*))?$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Anchor(_Strict):
    """One level of a dimension: its value (an integer, or pass/fail) and the concrete,
    checkable behaviour that earns it."""

    value: int | Literal["pass", "fail"]
    label: str = ""
    description: str


class Example(_Strict):
    """A worked example: an answer and the level it earns, with why."""

    answer: str
    level: int | Literal["pass", "fail"]
    why: str = ""


def _anchors(raw: Any, binary: bool) -> list[dict[str, Any]]:
    if isinstance(raw, list):
        return raw
    if not isinstance(raw, dict) or not raw:
        raise ValueError("levels must map each level (4_excellent ... 1_fail, or pass/fail) to a behaviour")
    out = []
    for key, description in raw.items():
        text = str(key).strip()
        if binary:
            if text.lower() not in ("pass", "fail"):
                raise ValueError(f"level {text!r}: veto and pitfall dimensions have exactly pass and fail")
            out.append({"value": text.lower(), "label": text.lower(), "description": description})
            continue
        m = _LEVEL_KEY.match(text)
        if m is None:
            raise ValueError(f"level {text!r} must start with its number, e.g. 4_excellent or 1_fail")
        out.append(
            {"value": int(m.group(1)), "label": (m.group(2) or "").strip(), "description": description}
        )
    return out


def _text_only() -> list[LooksAt]:
    return ["text"]


class Dimension(_Strict):
    """One thing the judge checks, independently of the others."""

    name: str = Field(min_length=1, pattern=r"^[^\s:]+$")
    weight: WeightClass = "important"
    description: str = ""
    levels: list[Anchor] = Field(alias="scoring")
    points: float | None = Field(None, gt=0, description="weight in the mean (overrides the class)")
    penalty: float = Field(0.2, ge=0, le=1, description="pitfall: subtracted from the score when failed")
    examples: list[Example] = Field(default_factory=list)
    edge_cases: list[str] = Field(default_factory=list)
    looks_at: list[LooksAt] = Field(
        default_factory=_text_only,
        min_length=1,
        description="what the dimension is judged from: text (the answer and evidence), image, audio",
    )

    @field_validator("looks_at", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="before")
    @classmethod
    def _levels(cls, data: Any) -> Any:
        if isinstance(data, dict):
            key = "scoring" if "scoring" in data else "levels" if "levels" in data else None
            if key is not None:
                data = dict(data)
                data["scoring"] = _anchors(data.pop(key), data.get("weight") in BINARY)
        return data

    @model_validator(mode="after")
    def _check(self) -> Dimension:
        values = [a.value for a in self.levels]
        if len(set(values)) != len(values):
            raise ValueError(f"dimension {self.name!r}: a level appears twice")
        if self.binary:
            if set(values) != {"pass", "fail"}:
                raise ValueError(f"dimension {self.name!r} ({self.weight}) needs exactly pass and fail")
        elif len(values) < 2 or not all(isinstance(v, int) for v in values):
            raise ValueError(f"dimension {self.name!r} needs at least two numbered levels")
        allowed = set(values)
        for ex in self.examples:
            if ex.level not in allowed:
                raise ValueError(f"dimension {self.name!r}: example level {ex.level!r} is not a level")
        return self

    @property
    def binary(self) -> bool:
        return self.weight in BINARY

    @property
    def weight_value(self) -> float:
        return self.points if self.points is not None else WEIGHTS.get(self.weight, 0.0)

    def allowed(self) -> list[int | str]:
        return [a.value for a in self.levels]


class Rubric(_Strict):
    """Dimensions, pass rules and notes of one rubric. ``hash`` is its version identity."""

    name: str = "rubric"
    description: str = ""
    version: str = "1"
    dimensions: list[Dimension] = Field(min_length=1)
    pass_level: int | None = Field(None, description="essential dimensions must reach it (default min+1)")
    pass_score: float | None = Field(None, ge=0, le=1, description="default: pass_level normalised")
    edge_cases: list[str] = Field(default_factory=list)
    length_warning: float = Field(0.3, gt=0, le=1, description="Spearman score~length that warns")

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, v: Any) -> Any:
        return str(v) if isinstance(v, (int, float)) else v

    @model_validator(mode="after")
    def _check(self) -> Rubric:
        names = [d.name for d in self.dimensions]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"dimension names must be unique: {', '.join(dup)} repeats")
        scales = {tuple(sorted(int(v) for v in d.allowed())) for d in self.dimensions if not d.binary}
        if len(scales) > 1:
            raise ValueError("every levelled dimension must use the same levels (e.g. 4..1)")
        if self.pass_level is not None and self.pass_level not in self.scale:
            raise ValueError(f"pass_level {self.pass_level} is not one of the levels {self.scale}")
        return self

    @property
    def scale(self) -> list[int]:
        """The levels of the levelled dimensions, ascending (empty if all are pass/fail)."""
        for d in self.dimensions:
            if not d.binary:
                return sorted(int(v) for v in d.allowed())
        return []

    @property
    def hash(self) -> str:
        data = self.model_dump(mode="json", by_alias=False)
        for d in data["dimensions"]:  # the default leaves the hash of text-only rubrics as it was
            if d["looks_at"] == ["text"]:
                del d["looks_at"]
        return stable_hash(data)

    @property
    def media_kinds(self) -> set[str]:
        """The non-text modalities some dimension looks at (``image``, ``audio``)."""
        return {m for d in self.dimensions for m in d.looks_at if m != "text"}

    def dimension(self, name: str) -> Dimension:
        return next(d for d in self.dimensions if d.name == name)

    def normalise(self, level: float) -> float:
        lo, hi = self.scale[0], self.scale[-1]
        return (level - lo) / (hi - lo)

    @property
    def effective_pass_level(self) -> int | None:
        if not self.scale:
            return None
        return self.pass_level if self.pass_level is not None else self.scale[min(1, len(self.scale) - 1)]

    @property
    def effective_pass_score(self) -> float:
        if self.pass_score is not None:
            return self.pass_score
        level = self.effective_pass_level
        return 0.0 if level is None else self.normalise(level)

    def aggregate(self, levels: dict[str, Any]) -> Aggregate:
        """Score and verdict from one level per dimension: a number (a panel's mean level
        may be fractional), or pass/fail for veto and pitfall items."""
        total = weight = 0.0
        out = Aggregate(score=0.0, passed=False)
        pass_level = self.effective_pass_level
        for d in self.dimensions:
            level = levels[d.name]
            if d.weight == "veto":
                if level == "fail":
                    out.vetoes.append(d.name)
            elif d.weight == "pitfall":
                if level == "fail":
                    out.pitfalls.append(d.name)
                    out.penalty += d.penalty
            else:
                total += d.weight_value * self.normalise(float(level))
                weight += d.weight_value
                if d.weight == "essential" and pass_level is not None and float(level) < pass_level - 1e-9:
                    out.essential_failed.append(d.name)
        out.raw = total / weight if weight else 1.0
        out.score = 0.0 if out.vetoes else max(0.0, out.raw - out.penalty)
        out.passed = (
            not out.vetoes and not out.essential_failed and out.score >= self.effective_pass_score - 1e-12
        )
        return out

    def render(self) -> str:
        """The rubric as the judge reads it: every dimension, its anchors, examples, edge cases."""
        lines = [f"Rubric: {self.name}" + (f" - {self.description.strip()}" if self.description else "")]
        for i, d in enumerate(self.dimensions, start=1):
            kind = {"veto": "VETO item, pass/fail", "pitfall": "PITFALL, pass = avoided / fail = present"}
            lines.append(f"\n{i}. {d.name} ({kind.get(d.weight, d.weight)})")
            if d.description:
                lines.append(f"   {d.description.strip()}")
            if d.looks_at != ["text"]:
                lines.append("   judge it from: " + ", ".join(_LOOKS[m] for m in d.looks_at))
            for a in sorted(d.levels, key=lambda a: (isinstance(a.value, str), a.value), reverse=True):
                label = f" {a.label}" if a.label and a.label != a.value else ""
                lines.append(f"   {a.value}{label}: {a.description.strip()}")
            for ex in d.examples:
                why = f" ({ex.why.strip()})" if ex.why else ""
                lines.append(f"   example -> {ex.level}: {ex.answer.strip()!r}{why}")
            for case in d.edge_cases:
                lines.append(f"   edge case: {case.strip()}")
        if self.edge_cases:
            lines.append("\nEdge cases:")
            lines.extend(f"- {c.strip()}" for c in self.edge_cases)
        return "\n".join(lines)


_LOOKS = {"text": "the text", "image": "the attached image(s)", "audio": "the attached audio"}


@dataclass
class Aggregate:
    """The result of :meth:`Rubric.aggregate`."""

    score: float
    passed: bool
    raw: float = 0.0
    penalty: float = 0.0
    vetoes: list[str] = field(default_factory=list)
    pitfalls: list[str] = field(default_factory=list)
    essential_failed: list[str] = field(default_factory=list)


def parse_rubric(data: Any, file: str = "<rubric>", located: Located | None = None) -> Rubric:
    """A :class:`Rubric` from parsed YAML (a top-level ``rubric:`` key is accepted)."""
    located = located or Located(file)
    prefix: tuple[str | int, ...] = ()
    if isinstance(data, dict) and set(data) == {"rubric"}:
        data, prefix = data["rubric"], ("rubric",)
    if not isinstance(data, dict):
        raise GraderFileError([Problem(file, 1, "", "a rubric must be a mapping with dimensions")])
    try:
        return Rubric.model_validate(data)
    except ValidationError as exc:
        raise GraderFileError(validation_problems(exc, located.sub(*prefix), prefix)) from None


_CACHE: dict[tuple[str, float], Rubric] = {}


def load_rubric(source: str | Path | dict[str, Any], task: Task | None = None) -> Rubric:
    """A rubric from a file (YAML/JSON; relative paths as :func:`~.files.resolve_file`) or a
    mapping. Raises :class:`~.files.GraderFileError` with ``file:line: field: message``."""
    if isinstance(source, dict):
        return parse_rubric(source, "<inline rubric>")
    path = resolve_file(str(source), task)
    key = (str(path.resolve()), path.stat().st_mtime)
    if key not in _CACHE:
        data, located = parse_located(path.read_text(encoding="utf-8"), str(source))
        _CACHE[key] = parse_rubric(data, str(source), located)
    return _CACHE[key]
