"""Human labels: a person's verdict on a trial or on one grader's grade of it, overall
(pass/fail) or per rubric dimension (a level such as ``3``, or pass/fail for veto and
pitfall items), with a comment, the labeller and a timestamp.

Labels live in the store's ``labels`` table, one row per (run, task, trial, grader,
dimension, labeller); labelling again replaces the row. ``grader`` "" means the trial as
a whole, ``dimension`` "" the overall verdict. JSONL import/export: one label per line,
``{"task_id", "trial_index", "grader", "dimension", "value", "comment", "labeller",
"created_at"}``, or one grade per line with ``"verdict"`` and ``"dimensions": {name: level}``.
A file that cannot be read, or a line the store could not keep (not UTF-8, JSON nested too
deeply, an integer of more than 4,300 digits, text with a lone surrogate or a NUL, a
labeller name longer than the store's column), is a :class:`LabelError` naming
``file:line: field``; nothing of the file is stored. Label text shown on a terminal goes
through :func:`printable` first.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from sqlalchemy import String, and_, delete, select

from ..core.outputs import atomic_output, refuse_store_path
from ..core.sources import text_problem
from ..core.terminal import printable, shown
from ..errors import AssayError, Problem
from . import schema
from .store import Store, now_iso

_PASS = {"pass", "passed", "true", "yes"}
_FAIL = {"fail", "failed", "false", "no"}
_LEVEL = re.compile(r"-?[0-9]+")


def _width(column: str) -> int:
    return cast(String, schema.labels.c[column].type).length or 0


#: Longest labeller name, value and time the store's ``labels`` table holds.
MAX_LABELLER = _width("labeller")
MAX_VALUE = _width("value")
MAX_CREATED_AT = _width("created_at")


class LabelError(AssayError):
    """Labels that cannot be read or stored; carries located problems."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        shown = "; ".join(str(p) for p in problems[:5])
        more = f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""
        super().__init__(shown + more)


def normalize_value(value: Any) -> str:
    """``pass``/``fail`` (also booleans, yes/no) or an integer level as text; ValueError
    for anything else."""
    if isinstance(value, bool):
        return "pass" if value else "fail"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and abs(value) < 10**MAX_VALUE // 10:
        return str(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _PASS:
            return "pass"
        if text in _FAIL:
            return "fail"
        if _LEVEL.fullmatch(text) and len(text) < MAX_VALUE:
            return str(int(text))
    raise ValueError(f"label value {shown(value)} must be pass, fail or an integer level")


@dataclass
class Label:
    """One human label."""

    task_id: str
    trial_index: int
    value: str
    grader: str = ""
    dimension: str = ""
    labeller: str = ""
    comment: str = ""
    created_at: str = ""
    run_id: str = ""

    @property
    def key(self) -> tuple[str, int, str, str]:
        return (self.task_id, self.trial_index, self.grader, self.dimension)


class LabelStore:
    """Labels of the runs of one :class:`Store`."""

    def __init__(self, store: Store):
        self.store = store

    def add(self, run_id: str, labels: Iterable[Label]) -> int:
        """Store labels for ``run_id`` (replacing a labeller's earlier label of the same
        item), all or none; LabelError naming the trials the run does not have, or a
        label the store cannot keep."""
        rows = list(labels)
        for lb in rows:
            for name, problem in label_problems(lb):
                where = f"{printable(lb.task_id, 80)}#{lb.trial_index}"
                raise LabelError([Problem(run_id, None, name, f"label of trial {where}: {problem}")])
        done = self.store.completed_keys(run_id) if rows else set()
        missing = sorted({(lb.task_id, lb.trial_index) for lb in rows} - done)
        if missing:
            names = ", ".join(f"{printable(t, 80)}#{i}" for t, i in missing[:5])
            raise LabelError([Problem(run_id, None, "trial", f"run {run_id} has no trial {names}")])
        t = schema.labels
        stamp = now_iso()
        with self.store.engine.begin() as conn:
            for lb in rows:
                key = {
                    "run_id": run_id,
                    "task_id": lb.task_id,
                    "trial_index": lb.trial_index,
                    "grader": lb.grader,
                    "dimension": lb.dimension,
                    "labeller": lb.labeller,
                }
                conn.execute(delete(t).where(and_(*(t.c[k] == v for k, v in key.items()))))
                conn.execute(
                    t.insert().values(
                        **key,
                        value=normalize_value(lb.value),
                        comment=lb.comment,
                        created_at=lb.created_at or stamp,
                    )
                )
        return len(rows)

    def list(
        self,
        run_id: str,
        task_id: str | None = None,
        grader: str | None = None,
        labeller: str | None = None,
    ) -> list[Label]:
        """Labels of a run, oldest first."""
        t = schema.labels
        query = select(t).where(t.c.run_id == run_id)
        for col, value in (("task_id", task_id), ("grader", grader), ("labeller", labeller)):
            if value is not None:
                query = query.where(t.c[col] == value)
        with self.store.engine.connect() as conn:
            rows = conn.execute(query.order_by(t.c.created_at, t.c.task_id, t.c.trial_index)).all()
        return [Label(**{k: v for k, v in r._mapping.items()}) for r in rows]

    def latest(
        self, run_id: str, grader: str | None = None, labeller: str | None = None
    ) -> dict[tuple, Label]:
        """One label per (task, trial, grader, dimension): the most recent of any labeller."""
        out: dict[tuple, Label] = {}
        for lb in self.list(run_id, grader=grader, labeller=labeller):
            out[lb.key] = lb
        return out


def label_problems(label: Label) -> Iterator[tuple[str, str]]:
    """(field, why) for each part of ``label`` the store cannot keep: text with a lone
    surrogate or a NUL, a labeller name or time longer than its column, a time that is
    not ISO 8601, a value that is not pass, fail or an integer level."""
    for name in ("task_id", "grader", "dimension", "labeller", "comment", "created_at", "run_id"):
        problem = text_problem(getattr(label, name))
        if problem:
            yield name, problem
            return
    if len(label.labeller) > MAX_LABELLER:
        yield "labeller", f"a labeller name has at most {MAX_LABELLER} characters, not {len(label.labeller)}"
    if label.created_at:
        try:
            datetime.fromisoformat(label.created_at)
            ok = len(label.created_at) <= MAX_CREATED_AT
        except ValueError:
            ok = False
        if not ok:
            yield "created_at", f"must be an ISO 8601 time such as {now_iso()}, not {shown(label.created_at)}"
    try:
        normalize_value(label.value)
    except ValueError as exc:
        yield "value", str(exc)


_TEXT = ("run_id", "task_id", "grader", "dimension", "comment", "labeller", "created_at")
_FIELDS = {*_TEXT, "trial_index", "value"}
_GROUPED = {*_TEXT, "trial_index", "verdict", "dimensions"}


@dataclass
class LocatedLabel:
    """A label read from a file, with its line and the field its value came from
    (``value``, ``verdict`` or ``dimensions.NAME``)."""

    line: int
    field: str
    label: Label

    @property
    def dimension_field(self) -> str:
        """The field that named the label's dimension."""
        return "dimension" if self.field == "value" else self.field


def _labels_of(row: Any, file: str, line: int) -> Iterator[LocatedLabel]:
    if not isinstance(row, dict):
        raise LabelError([Problem(file, line, "", "each line must be a JSON object")])
    grouped = "verdict" in row or "dimensions" in row
    allowed = _GROUPED if grouped else _FIELDS
    for name in row:
        if name not in allowed:
            raise LabelError([Problem(file, line, printable(str(name), 60), "unknown field")])
    for name in ("task_id", "trial_index") + (() if grouped else ("value",)):
        if row.get(name) is None:
            raise LabelError([Problem(file, line, name, "required field is missing")])
    if not isinstance(row["trial_index"], int) or isinstance(row["trial_index"], bool):
        raise LabelError([Problem(file, line, "trial_index", "must be an integer")])
    for name in _TEXT:
        value = row.get(name)
        if value is not None and not isinstance(value, str):
            raise LabelError([Problem(file, line, name, f"must be a string, not {shown(value)}")])
        problem = text_problem(value or "")
        if problem:
            raise LabelError([Problem(file, line, name, problem)])
    common: dict[str, Any] = {
        "task_id": row["task_id"],
        "trial_index": row["trial_index"],
        "grader": row.get("grader") or "",
        "labeller": row.get("labeller") or "",
        "created_at": row.get("created_at") or "",
        "run_id": row.get("run_id") or "",
    }
    comment = row.get("comment") or ""
    items: list[tuple[str, str, Any]] = []
    if grouped:
        if row.get("verdict") is not None:
            items.append(("verdict", "", row["verdict"]))
        dims = row.get("dimensions") or {}
        if not isinstance(dims, dict):
            raise LabelError([Problem(file, line, "dimensions", "must map dimension names to levels")])
        for k, v in dims.items():
            where = f"dimensions.{printable(k, 60)}"
            problem = text_problem(k)
            if problem:
                raise LabelError([Problem(file, line, where, problem)])
            items.append((where, k, v))
    else:
        items.append(("value", row.get("dimension") or "", row["value"]))
    for i, (where, dimension, value) in enumerate(items):
        try:
            normalized = normalize_value(value)
        except ValueError as exc:
            raise LabelError([Problem(file, line, where, str(exc))]) from None
        # a grouped line's comment is about the grade: it goes with its first label
        label = Label(value=normalized, dimension=dimension, comment=comment if i == 0 else "", **common)
        for name, problem in label_problems(label):
            raise LabelError([Problem(file, line, where if name == "value" else name, problem)])
        yield LocatedLabel(line, where, label)


def read_located(path: str | Path) -> list[LocatedLabel]:
    """Labels from a JSONL file with the line each came from; LabelError with
    ``file:line: field: message`` for a file that cannot be read or any bad line."""
    file = str(path)
    p = Path(path)
    labels: list[LocatedLabel] = []
    problems: list[Problem] = []
    try:
        if p.is_dir():
            raise LabelError([Problem(file, None, "", "is a folder, not a file")])
        with p.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                problem = _read_line(raw, file, number, labels)
                if problem is not None:
                    problems.append(problem)
    except FileNotFoundError:
        raise LabelError([Problem(file, None, "", "no such file")]) from None
    except OSError as exc:
        raise LabelError([Problem(file, None, "", f"cannot read: {exc.strerror or exc}")]) from None
    if problems:
        raise LabelError(problems)
    return labels


def _read_line(raw: bytes, file: str, number: int, labels: list[LocatedLabel]) -> Problem | None:
    """Add the labels of one line to ``labels``; the line's problem, or None."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = raw[exc.start]
        return Problem(file, number, "", f"not UTF-8 text (byte 0x{byte:02x} at column {exc.start + 1})")
    if not text.strip():
        return None
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        return Problem(file, number, "", f"invalid JSON: {exc.msg} (column {exc.colno})")
    except RecursionError:
        return Problem(file, number, "", "invalid JSON: nested too deeply")
    except ValueError as exc:  # an integer of more than 4,300 digits
        return Problem(file, number, "", f"invalid JSON: {str(exc).split(';')[0]}")
    try:
        labels.extend(_labels_of(row, file, number))
    except LabelError as exc:
        return exc.problems[0]
    return None


def read_jsonl(path: str | Path) -> list[Label]:
    """Labels from a JSONL file; LabelError with ``file:line: field: message``."""
    return [located.label for located in read_located(path)]


def write_jsonl(path: str | Path, labels: Iterable[Label], store: Path | None = None) -> int:
    """Write labels one per line, the whole file or nothing (an earlier file stays as it
    was until then); the number written. LabelError for a folder, a missing folder, the
    SQLite file of ``store`` (or one of its side files) or a file that cannot be written."""
    target = Path(path)
    file = str(path)
    if target.is_dir():
        raise LabelError([Problem(file, None, "", "is a folder: give a file to export the labels to")])
    if not target.parent.is_dir():
        raise LabelError([Problem(file, None, "", f"folder {target.parent} does not exist")])
    try:
        refuse_store_path(target, store, "--export")
    except AssayError:
        raise LabelError([Problem(file, None, "", "is the store's own file: give another file")]) from None
    n = 0
    try:
        with atomic_output(target) as fh:
            for lb in labels:
                fh.write(json.dumps(asdict(lb), ensure_ascii=False) + "\n")
                n += 1
    except OSError as exc:
        raise LabelError([Problem(file, None, "", f"cannot write: {exc.strerror or exc}")]) from None
    return n
