"""Structured output: JSON validity, JSON Schema pass, field-level and enum accuracy
against expected fields, and key fields that gate (the seeds: "9 of 10 fields right is
useless if the wrong one is the key field").

Pure functions (:func:`parse_json_output`, :func:`schema_errors`, :func:`field_accuracy`,
:func:`structured_rates`) and the grader kind ``structured``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, model_validator

from ..core.results import GradeResult, Outcome
from ..core.task import Task
from ..core.transcript import Transcript
from ..errors import AssayError, Problem
from .base import Grader, Params, PathKey
from .files import GraderFileError, read_located, resolve_file
from .matching import values_equal

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
_MISSING = object()


@dataclass(frozen=True)
class ParsedJson:
    ok: bool
    value: Any = None
    error: str = ""


def parse_json_output(text: str, allow_fence: bool = True) -> ParsedJson:
    """Is ``text`` one JSON value (optionally inside a ```json fence)? Its value or the error."""
    m = _FENCE.match(text) if allow_fence else None
    body = m.group(1) if m else text
    try:
        return ParsedJson(True, json.loads(body))
    except json.JSONDecodeError as exc:
        return ParsedJson(False, error=f"{exc.msg} at line {exc.lineno} column {exc.colno}")


def _validator(schema: dict[str, Any]) -> Any:
    try:
        from jsonschema.validators import validator_for
    except ImportError:  # pragma: no cover - jsonschema is a dependency
        raise AssayError("JSON Schema checks need the jsonschema package: pip install jsonschema") from None

    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema_problems(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` is not a valid JSON Schema, or None."""
    from jsonschema.exceptions import SchemaError

    try:
        _validator(schema)
    except SchemaError as exc:
        return f"invalid JSON Schema: {exc.message}"
    return None


def schema_errors(value: Any, schema: dict[str, Any]) -> list[str]:
    """Validation errors of ``value`` against ``schema`` as ``path: message`` lines."""
    errors = sorted(_validator(schema).iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'.'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors]


def get_path(value: Any, path: str) -> Any:
    """The value at a dotted path (``a.b.0.c``), or ``_MISSING``."""
    current = value
    for part in path.split(".") if path else []:
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif (
            isinstance(current, list)
            and part.lstrip("-").isdigit()
            and -len(current) <= int(part) < len(current)
        ):
            current = current[int(part)]
        else:
            return _MISSING
    return current


def flatten(expected: Any, prefix: str = "") -> dict[str, Any]:
    """Leaf fields of nested dicts as dotted paths (lists are compared whole)."""
    if isinstance(expected, dict) and expected:
        out: dict[str, Any] = {}
        for k, v in expected.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: expected}


def enum_paths(schema: dict[str, Any], prefix: str = "") -> list[str]:
    """Dotted paths of the object properties whose schema has an ``enum`` (or ``const``)."""
    out = []
    for name, sub in (schema.get("properties") or {}).items():
        path = f"{prefix}.{name}" if prefix else name
        if isinstance(sub, dict):
            if "enum" in sub or "const" in sub:
                out.append(path)
            out.extend(enum_paths(sub, path))
    return out


@dataclass
class FieldReport:
    correct: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)

    @property
    def accuracy(self) -> float | None:
        n = len(self.correct) + len(self.wrong)
        return len(self.correct) / n if n else None


def field_accuracy(value: Any, expected: dict[str, Any]) -> FieldReport:
    """Which expected fields (dotted path -> value) the output has with an equal value."""
    report = FieldReport()
    for path, want in expected.items():
        got = get_path(value, path)
        (report.correct if got is not _MISSING and values_equal(got, want) else report.wrong).append(path)
    return report


def structured_rates(outputs: Iterable[str], schema: dict[str, Any] | None = None) -> dict[str, float | None]:
    """JSON validity rate (valid / outputs) and schema pass rate (passing / valid JSON)."""
    texts = list(outputs)
    parsed = [parse_json_output(t) for t in texts]
    valid = [p.value for p in parsed if p.ok]
    passing = [v for v in valid if schema is None or not schema_errors(v, schema)]
    return {
        "json_validity_rate": len(valid) / len(texts) if texts else None,
        "schema_pass_rate": len(passing) / len(valid) if valid else None,
    }


class StructuredParams(Params):
    schema_: dict[str, Any] | str | None = Field(None, alias="schema", description="JSON Schema or its file")
    expected: dict[str, Any] | None = Field(None, description="fields; default: reference.answer as JSON")
    fields: list[str] | None = Field(None, description="compare only these expected fields")
    key_fields: list[str] = Field(default_factory=list, description="fields that must be right to pass")
    enum_fields: list[str] | None = Field(None, description="default: fields with an enum in the schema")
    min_field_accuracy: float = Field(1.0, ge=0, le=1)
    tool: str | None = Field(None, description="grade the arguments of this tool's last call instead")
    allow_fence: bool = True

    @model_validator(mode="after")
    def _schema_ok(self) -> StructuredParams:
        if isinstance(self.schema_, dict):
            problem = schema_problems(self.schema_)
            if problem:
                raise ValueError(problem)
        return self


def load_schema(ref: dict[str, Any] | str, task: Task | None) -> dict[str, Any]:
    if isinstance(ref, dict):
        return ref
    path = resolve_file(ref, task)
    data, _ = read_located(path, ref)
    if not isinstance(data, dict):
        raise GraderFileError([Problem(ref, None, "", "a JSON Schema must be an object")])
    problem = schema_problems(data)
    if problem:
        raise GraderFileError([Problem(ref, None, "", problem)])
    return data


class StructuredGrader(Grader[StructuredParams]):
    """JSON validity, schema, field/enum accuracy and key fields of the agent's output."""

    kind = "structured"
    Params = StructuredParams

    @classmethod
    def tool_refs(cls, params: StructuredParams) -> list[tuple[PathKey, str]]:
        return [(("tool",), params.tool)] if params.tool else []

    @classmethod
    def check(cls, params: StructuredParams, domain: Any, task: Task) -> list[tuple[PathKey, str]]:
        if not isinstance(params.schema_, str):
            return []
        try:
            load_schema(params.schema_, task)
        except GraderFileError as exc:
            return [(("schema",), str(p)) for p in exc.problems]
        return []

    def _output(self, transcript: Transcript) -> tuple[bool, Any, str]:
        p: StructuredParams = self.params
        if p.tool is not None:
            calls = [c for c in transcript.tool_calls() if c.name == p.tool]
            if not calls:
                return False, None, f"the agent never called {p.tool}"
            return True, calls[-1].arguments, ""
        texts = transcript.agent_texts()
        if not texts:
            return False, None, "the agent gave no output"
        parsed = parse_json_output(texts[-1], p.allow_fence)
        return parsed.ok, parsed.value, f"not valid JSON ({parsed.error})" if not parsed.ok else ""

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        p: StructuredParams = self.params
        ok, value, why = self._output(transcript)
        metrics: dict[str, float] = {"json_valid": float(ok)}
        if not ok:
            return self.result(False, why, category="invalid_json", metrics=metrics, score=0.0)
        problems: list[str] = []
        category = None
        schema = load_schema(p.schema_, task) if p.schema_ is not None else None
        if schema is not None:
            errors = schema_errors(value, schema)
            metrics["schema_valid"] = float(not errors)
            if errors:
                problems.append(f"schema: {'; '.join(errors[:3])}" + (" ..." if len(errors) > 3 else ""))
                category = "schema_violation"
        expected = self._expected(task)
        right = ""
        if expected:
            report = field_accuracy(value, expected)
            if report.accuracy is not None:
                metrics["field_accuracy"] = report.accuracy
                right = f", {len(report.correct)} of {len(report.correct) + len(report.wrong)} fields right"
            enums = p.enum_fields if p.enum_fields is not None else enum_paths(schema or {})
            enum_expected = {k: v for k, v in expected.items() if k in enums}
            if enum_expected:
                metrics["enum_accuracy"] = field_accuracy(value, enum_expected).accuracy or 0.0
            bad_keys = [k for k in p.key_fields if k in report.wrong or k not in expected]
            if bad_keys:
                problems.append(f"key field(s) wrong: {', '.join(bad_keys)}")
                category = category or "key_field_wrong"
            if (report.accuracy or 0.0) < p.min_field_accuracy - 1e-12:
                problems.append(f"field accuracy {report.accuracy:.2f}; wrong: {', '.join(report.wrong)}")
                category = category or "wrong_fields"
        elif p.key_fields:
            return self.skip("key_fields given but no expected values (expected or reference.answer)")
        score = metrics.get("field_accuracy", 1.0) * metrics.get("schema_valid", 1.0)
        if problems:
            return self.result(False, "; ".join(problems), category=category, metrics=metrics, score=score)
        return self.result(
            True,
            "valid structured output" + right,
            metrics=metrics,
            score=score,
        )

    def _expected(self, task: Task) -> dict[str, Any]:
        p: StructuredParams = self.params
        raw: Any = p.expected
        if raw is None and task.reference.answer:
            parsed = parse_json_output(task.reference.answer)
            raw = parsed.value if parsed.ok and isinstance(parsed.value, dict) else None
        if not raw:
            return {}
        flat = flatten(raw) if any(isinstance(v, dict) for v in raw.values()) else dict(raw)
        return {k: v for k, v in flat.items() if p.fields is None or k in p.fields}
