"""Export spans as data: :class:`OutSpan` and :class:`OutTrace`, and the ids every
exporter gives them (the same trial always gets the same trace and span ids)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..core.hashing import stable_hash


@dataclass(slots=True)
class OutSpan:
    """One span to export. ``key`` is unique within its trace (the stored span id, or a
    number past them for evaluator spans); times are nanoseconds since the epoch."""

    key: int
    parent: int | None
    name: str
    kind: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)
    content: dict[str, Any] = field(default_factory=dict)
    """Attributes that carry text (redacted before export)."""
    error: str | None = None

    def all_attributes(self) -> dict[str, Any]:
        return {**self.attributes, **self.content}


@dataclass(slots=True)
class OutTrace:
    """A trial as a trace: its spans (root first) and its ids."""

    trace_id: int
    spans: list[OutSpan]
    run_trace_id: int
    run_span_id: int

    def span_id(self, key: int) -> int:
        return ids(self.trace_id, key)


def _int_of(hex_digest: str) -> int:
    value = int(hex_digest, 16)
    return value or 1


def trace_id_of(run_id: str, task_id: str, trial_index: int) -> int:
    """The trace id of a trial: the same trial always gets the same id (128 bits)."""
    return _int_of(stable_hash(["trial", run_id, task_id, trial_index], 32))


def run_trace_id(run_id: str) -> int:
    return _int_of(stable_hash(["run", run_id], 32))


def ids(trace_id: int, key: int) -> int:
    """The span id of span ``key`` of a trace (64 bits)."""
    return _int_of(stable_hash([trace_id, key], 16))


def epoch_ns(iso: str) -> int:
    """Nanoseconds since the epoch of an ISO timestamp (naive means UTC)."""
    when = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return int(when.timestamp() * 1e9)
