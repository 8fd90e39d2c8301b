"""Turning trial results and transcripts into stored bytes and back."""

from __future__ import annotations

import json
import zlib
from dataclasses import replace
from typing import Any

from pydantic import TypeAdapter

from ..core.results import GradeResult, Outcome, TrialResult
from ..core.transcript import Transcript

_outcome = TypeAdapter(Outcome)
_transcript = TypeAdapter(Transcript)
_grade = TypeAdapter(GradeResult)

#: TrialResult fields kept outside the ``record`` JSON (own tables or dropped).
_SEPARATE = ("transcript", "grades", "outcome")


def encode_record(result: TrialResult) -> str:
    """The trial's provenance record as JSON, without transcript, grades and state."""
    record: dict[str, Any] = {
        name: getattr(result, name) for name in TrialResult.__dataclass_fields__ if name not in _SEPARATE
    }
    if result.outcome is not None:
        outcome = replace(result.outcome, final_state=None)
        record["outcome"] = _outcome.dump_python(outcome, mode="json")
    return json.dumps(record, separators=(",", ":"), default=str)


def decode_record(text: str, grades: list[GradeResult]) -> TrialResult:
    record = json.loads(text)
    outcome = record.pop("outcome", None)
    result = TrialResult(**record, grades=grades)
    if outcome is not None:
        result.outcome = _outcome.validate_python(outcome)
    return result


def encode_transcript(transcript: Transcript) -> bytes:
    return zlib.compress(_transcript.dump_json(transcript), 1)


def decode_transcript(data: bytes) -> Transcript:
    return _transcript.validate_json(zlib.decompress(data))


def grade_row(grade: GradeResult) -> dict[str, Any]:
    row = _grade.dump_python(grade, mode="json")
    row["metrics"] = json.dumps(row["metrics"])
    return row


def grade_from_row(row: Any) -> GradeResult:
    data = dict(row._mapping) if hasattr(row, "_mapping") else dict(row)
    for key in ("run_id", "task_id", "trial_index", "position"):
        data.pop(key, None)
    data["metrics"] = json.loads(data["metrics"])
    return GradeResult(**data)
