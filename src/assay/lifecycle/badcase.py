"""The badcase record (schema ``assay.badcase/1``) and its triage.

A badcase is a failure worth fixing: where it came from (trials of a run, an imported
trace, a manual report), its evidence (redacted), what happened (phenomenon, one
line), the layer responsible, the root cause, severity, status, owner, and links to
the runs that reproduce it or verify its fix. Its status moves forward through
:data:`STATUSES` (``new → triaged → fixed → verified → golden``; ``golden``: in the
golden set as a regression task); ``triaged`` may be set again to reopen it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import AssayError

SCHEMA = "assay.badcase/1"
Status = Literal["new", "triaged", "fixed", "verified", "golden"]
STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]
Severity = Literal["low", "medium", "high", "critical"]
SEVERITIES: tuple[str, ...] = Severity.__args__  # type: ignore[attr-defined]
#: Where a failure is fixed (the seeds' phenomenon → layer table).
Layer = Literal[
    "understanding", "planning", "tool_use", "knowledge", "policy", "generation", "harness", "unknown"
]
LAYERS: tuple[str, ...] = Layer.__args__  # type: ignore[attr-defined]
SourceKind = Literal["trial", "trace", "manual"]
LinkKind = Literal["reproduces", "verifies", "source"]


class BadcaseError(AssayError):
    """A badcase change that is not allowed (an unknown status, a step back...)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TrialRef(_Strict):
    run_id: str
    task_id: str
    trial_index: int


class TraceRef(_Strict):
    """A recorded conversation a badcase stands for (``assay badcase from-traces``)."""

    trace_id: str | None = None
    """The trace's id (OTLP, Phoenix), or the JSONL conversation's ``id``."""
    file: str
    task_id: str
    """The conversation's task: the suite task an assay trace was recorded from, else the
    id ``assay import traces`` gives the conversation's replay task."""
    run_id: str | None = None
    trial_index: int | None = None


class Source(_Strict):
    kind: SourceKind = "manual"
    run_id: str | None = None
    trials: list[TrialRef] = Field(default_factory=list)
    trace: str | None = None
    """The first imported trace (its id, else file and conversation) for ``kind: trace``."""
    traces: list[TraceRef] = Field(default_factory=list)
    """Every recorded conversation of a ``kind: trace`` badcase."""


class Link(_Strict):
    run_id: str
    kind: LinkKind
    at: str
    note: str = ""


class Change(_Strict):
    at: str
    field: str
    old: Any = None
    new: Any = None
    by: str | None = None


class Badcase(_Strict):
    """One badcase record (the store keeps it as JSON, see ``assay.store.badcases``)."""

    schema_: str = Field(SCHEMA, alias="schema")
    badcase_id: str
    created_at: str
    updated_at: str
    source: Source = Field(default_factory=Source)
    suite: dict[str, Any] = Field(default_factory=dict)
    """name, version, hash of the suite the failure happened on."""
    config: dict[str, Any] = Field(default_factory=dict)
    """agent, config_hash, prompt_version, model of the configuration that failed."""
    task_ids: list[str] = Field(default_factory=list)
    signature: dict[str, Any] = Field(default_factory=dict)
    """What the clustered trials share: failing graders (with categories), key reason tokens."""
    evidence: dict[str, Any] = Field(default_factory=dict)
    """Transcript excerpt, state diff, grader reasons, versions: redacted."""
    phenomenon: str
    layer: Layer = "unknown"
    root_cause: str = ""
    severity: Severity = "medium"
    status: Status = "new"
    owner: str | None = None
    links: list[Link] = Field(default_factory=list)
    candidate: dict[str, Any] | None = None
    """The regression task written by ``assay badcase promote`` (suite, path, task id)."""
    history: list[Change] = Field(default_factory=list)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def document(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


def check_status_move(old: str, new: str) -> None:
    """Statuses move forward; ``triaged`` may be set again (reopening)."""
    if new not in STATUSES:
        raise BadcaseError(f"--status {new!r}: choose from {', '.join(STATUSES)}")
    if STATUSES.index(new) < STATUSES.index(old) and new != "triaged":
        raise BadcaseError(
            f"status {old} cannot go back to {new}; statuses move {' → '.join(STATUSES)} "
            "(set triaged to reopen a badcase)"
        )


def apply_changes(case: Badcase, changes: dict[str, Any], at: str, by: str | None = None) -> list[str]:
    """Apply the given field changes (``None`` values are ignored), recording each in
    the history; returns the names of the fields that changed."""
    changed = []
    for name, value in changes.items():
        if value is None:
            continue
        old = getattr(case, name)
        if name == "status":
            check_status_move(old, value)
        if name == "severity" and value not in SEVERITIES:
            raise BadcaseError(f"--severity {value!r}: choose from {', '.join(SEVERITIES)}")
        if name == "layer" and value not in LAYERS:
            raise BadcaseError(f"--layer {value!r}: choose from {', '.join(LAYERS)}")
        if old == value:
            continue
        setattr(case, name, value)
        case.history.append(Change(at=at, field=name, old=old, new=value, by=by))
        changed.append(name)
    if changed:
        case.updated_at = at
    return changed
