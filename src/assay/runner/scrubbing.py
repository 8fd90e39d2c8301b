"""Keeping credentials out of what a trial records: the values of the run's secret
options (``-m api_key=...``) are removed from messages, span errors and attributes, the
outcome and grader reasons, whole or as the masked echoes endpoints print."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.results import GradeResult, Outcome
from ..core.transcript import Transcript
from ..redact import scrub


def _clean(value: Any, secrets: Sequence[str]) -> Any:
    if isinstance(value, str):
        return scrub(value, secrets)
    if isinstance(value, dict):
        return {k: _clean(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v, secrets) for v in value]
    return value


def scrub_trial(
    transcript: Transcript, outcome: Outcome, grades: list[GradeResult], secrets: Sequence[str]
) -> None:
    """Remove ``secrets`` from a finished trial's records, in place."""
    for message in transcript.messages:
        message.content = scrub(message.content, secrets)
        for call in message.tool_calls:
            call.arguments = _clean(call.arguments, secrets)
    for span in transcript.spans:
        if span.error:
            span.error = scrub(span.error, secrets)
        span.attributes = _clean(span.attributes, secrets)
    if outcome.error:
        outcome.error = scrub(outcome.error, secrets)
    for grade in grades:
        grade.reason = scrub(grade.reason, secrets)
