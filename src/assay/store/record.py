"""The portable run record: one run, whole, in one file that any assay can import.

``assay export RUN -o run.jsonl[.gz]`` writes it; ``assay import run FILE`` reads it
into a store, where ``show``, ``compare``, ``report`` and the viewer give the same
output as on the store it came from. JSON Lines (gzip-compressed when the name ends in
``.gz``), documented in docs/run-record.md with a JSON Schema:

1. a header: ``{"kind": "header", "schema": "assay.run-record/1", "run": RunInfo,
   "tasks": [TaskMeta...], "exported_at": ..., "assay_version": ...}``
2. one line per trial: ``{"kind": "trial", "trial": {...}, "grades": [...],
   "transcript": {...} | null}``
3. one line per failed attempt of a retried trial: ``{"kind": "attempt",
   "attempt": N, ...the same fields as a trial line}``
4. an end line with the counts: ``{"kind": "end", "trials": N, "attempts": M}`` (a
   truncated file is refused).

``assay export RUN --redact`` writes a record whose trials' free text is redacted
(:func:`assay.redact.redact_trial`, one set of pseudonyms per trial line); its header
says ``"redacted": true`` and its end line counts the values replaced per kind. Without
it the record is the run exactly as stored. Reading a record back, checked line by
line, is :mod:`assay.store.record_import`.
"""

from __future__ import annotations

import gzip
import io
import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
)

from ..core.outputs import atomic_output, refuse_store_path
from ..core.results import GradeResult, RunInfo, TaskMeta, TrialResult
from ..core.transcript import Transcript
from ..errors import RecordError
from ..redact import Redactor, redact_trial
from .codec import trial_from_line, trial_line, unpack_line
from .store import Store, now_iso

RECORD_SCHEMA = "assay.run-record/1"


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HeaderLine(_Line):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    kind: Literal["header"]
    schema_: Literal["assay.run-record/1"] = Field(alias="schema")
    run: RunInfo
    tasks: list[TaskMeta]
    exported_at: str
    assay_version: str | None = None
    redacted: bool = False
    """The trials' free text was redacted when the record was written (``--redact``)."""


class TrialLine(_Line):
    """A trial: its record (TrialResult fields but grades and transcript), its grades
    and its transcript."""

    kind: Literal["trial"]
    trial: dict[str, Any]
    grades: list[GradeResult]
    transcript: Transcript | None = None


class AttemptLine(TrialLine):
    kind: Literal["attempt"]  # type: ignore[assignment]
    attempt: int


class EndLine(_Line):
    kind: Literal["end"]
    trials: int
    attempts: int
    redacted: dict[str, int] | None = None
    """Values replaced per kind (a redacted record only)."""


def record_json_schema() -> dict[str, Any]:
    """The JSON Schema of one line of a run record (any of the four kinds)."""
    adapter: TypeAdapter[Any] = TypeAdapter(HeaderLine | TrialLine | AttemptLine | EndLine)
    schema = adapter.json_schema(by_alias=True)
    schema["title"] = f"A line of an assay run record ({RECORD_SCHEMA})"
    return schema


def _open(path: Path, mode: Literal["rt", "wt"]) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, mode, encoding="utf-8")
    return path.open(mode, encoding="utf-8")


@contextmanager
def _create(path: Path) -> Iterator[IO[str]]:
    """``path`` written as :func:`_open` would write it (gzip: the same header, naming
    ``path``), whole or not at all: an earlier file stays until the record is complete."""
    if path.suffix != ".gz":
        with atomic_output(path, "w") as fh:
            yield fh
        return
    with (
        atomic_output(path, "wb") as raw,
        gzip.GzipFile(filename=str(path), mode="wb", fileobj=raw) as packed,
        io.TextIOWrapper(packed, encoding="utf-8") as fh,
    ):
        yield fh


def _dump(fh: IO[str], data: dict[str, Any]) -> None:
    fh.write(json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str) + "\n")


def _assay_version() -> str | None:
    try:
        return version("assay")
    except PackageNotFoundError:
        return None


def export_run(store: Store, run_id: str, path: str | Path, redact: Redactor | None = None) -> dict[str, Any]:
    """Write run ``run_id`` of ``store`` to ``path`` as a run record; returns the counts
    (and with ``redact``, a redactor: the trials' free text redacted, each trial line
    with its own pseudonyms; ``redacted_values`` and ``redacted_kinds`` count them).
    The file appears whole or not at all (an earlier one stays as it was until then);
    ``path`` the store's own file is refused before anything is written."""
    target = Path(path)
    refuse_store_path(target, store.path, "-o")
    run_id = store.resolve(run_id)
    info = store.get_run(run_id)
    trials = attempts = 0
    kinds: Counter[str] = Counter()

    def line_of(result: TrialResult, transcript: Transcript | None) -> dict[str, Any]:
        if redact is not None:
            done = redact_trial(result, transcript, redact)
            kinds.update(done.counts)
            result, transcript = done.result, done.transcript
        return trial_line(result, transcript)

    try:
        with _create(target) as fh:
            header = {
                "kind": "header",
                "schema": RECORD_SCHEMA,
                "run": json.loads(info.model_dump_json()),
                "tasks": [asdict(t) for t in store.load_tasks(run_id)],
                "exported_at": now_iso(),
                "assay_version": _assay_version(),
            }
            if redact is not None:
                header["redacted"] = True
            _dump(fh, header)
            for result, transcript in _trials(store, run_id):
                _dump(fh, {"kind": "trial", **line_of(result, transcript)})
                trials += 1
            for number, data in store.load_attempts(run_id):
                line = unpack_line(data) if redact is None else line_of(*trial_from_line(unpack_line(data)))
                _dump(fh, {"kind": "attempt", "attempt": number, **line})
                attempts += 1
            end: dict[str, Any] = {"kind": "end", "trials": trials, "attempts": attempts}
            if redact is not None:
                end["redacted"] = dict(sorted(kinds.items()))
            _dump(fh, end)
    except OSError as exc:
        raise RecordError(f"cannot write the run record to {target}: {exc.strerror or exc}") from None
    counts: dict[str, Any] = {"trials": trials, "attempts": attempts}
    if redact is not None:
        counts["redacted_values"] = sum(kinds.values())
        counts["redacted_kinds"] = dict(sorted(kinds.items()))
    return counts


def _trials(store: Store, run_id: str) -> Iterator[tuple[TrialResult, Transcript | None]]:
    """Every trial of the run with its transcript, task by task (memory: one task's trials)."""
    for task_id in store.task_ids(run_id):
        transcripts = store.load_transcripts(run_id, task_id)
        for result in store.load_results(run_id, task_id):
            yield result, transcripts.get(result.trial_index)
