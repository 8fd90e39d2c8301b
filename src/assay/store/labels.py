"""Human labels: a person's verdict on a trial or on one grader's grade of it, overall
(pass/fail) or per rubric dimension (a level such as ``3``, or pass/fail for veto and
pitfall items), with a comment, the labeller and a timestamp.

Labels live in the store's ``labels`` table, one row per (run, task, trial, grader,
dimension, labeller); labelling again replaces the row. ``grader`` "" means the trial as
a whole, ``dimension`` "" the overall verdict. JSONL import/export: one label per line,
``{"task_id", "trial_index", "grader", "dimension", "value", "comment", "labeller",
"created_at"}``, or one grade per line with ``"verdict"`` and ``"dimensions": {name: level}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import and_, delete, select

from ..errors import AssayError, Problem
from . import schema
from .store import Store, now_iso

_PASS = {"pass", "passed", "true", "yes"}
_FAIL = {"fail", "failed", "false", "no"}


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
    if isinstance(value, (int, float)) and float(value).is_integer():
        return str(int(value))
    text = str(value).strip().lower()
    if text in _PASS:
        return "pass"
    if text in _FAIL:
        return "fail"
    if text.lstrip("-").isdigit():
        return str(int(text))
    raise ValueError(f"label value {value!r} must be pass, fail or an integer level")


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
        item); LabelError naming the trials the run does not have."""
        rows = list(labels)
        done = self.store.completed_keys(run_id) if rows else set()
        missing = sorted({(lb.task_id, lb.trial_index) for lb in rows} - done)
        if missing:
            shown = ", ".join(f"{t}#{i}" for t, i in missing[:5])
            raise LabelError([Problem(run_id, None, "trial", f"run {run_id} has no trial {shown}")])
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


_FIELDS = {
    "run_id",
    "task_id",
    "trial_index",
    "grader",
    "dimension",
    "value",
    "comment",
    "labeller",
    "created_at",
}
_GROUPED = {
    "run_id",
    "task_id",
    "trial_index",
    "grader",
    "verdict",
    "dimensions",
    "comment",
    "labeller",
    "created_at",
}


def _labels_of(row: Any, file: str, line: int) -> Iterator[Label]:
    if not isinstance(row, dict):
        raise LabelError([Problem(file, line, "", "each line must be a JSON object")])
    grouped = "verdict" in row or "dimensions" in row
    allowed = _GROUPED if grouped else _FIELDS
    for name in row:
        if name not in allowed:
            raise LabelError([Problem(file, line, str(name), "unknown field")])
    for name in ("task_id", "trial_index") + (() if grouped else ("value",)):
        if row.get(name) is None:
            raise LabelError([Problem(file, line, name, "required field is missing")])
    if not isinstance(row["trial_index"], int) or isinstance(row["trial_index"], bool):
        raise LabelError([Problem(file, line, "trial_index", "must be an integer")])
    common: dict[str, Any] = {
        "task_id": str(row["task_id"]),
        "trial_index": row["trial_index"],
        "grader": str(row.get("grader") or ""),
        "labeller": str(row.get("labeller") or ""),
        "comment": str(row.get("comment") or ""),
        "created_at": str(row.get("created_at") or ""),
        "run_id": str(row.get("run_id") or ""),
    }
    items: list[tuple[str, str, Any]] = []
    if grouped:
        if row.get("verdict") is not None:
            items.append(("verdict", "", row["verdict"]))
        dims = row.get("dimensions") or {}
        if not isinstance(dims, dict):
            raise LabelError([Problem(file, line, "dimensions", "must map dimension names to levels")])
        items.extend((f"dimensions.{k}", str(k), v) for k, v in dims.items())
    else:
        items.append(("value", str(row.get("dimension") or ""), row["value"]))
    comment = common.pop("comment")
    for i, (where, dimension, value) in enumerate(items):
        try:
            normalized = normalize_value(value)
        except ValueError as exc:
            raise LabelError([Problem(file, line, where, str(exc))]) from None
        # a grouped line's comment is about the grade: it goes with its first label
        yield Label(value=normalized, dimension=dimension, comment=comment if i == 0 else "", **common)


def read_jsonl(path: str | Path) -> list[Label]:
    """Labels from a JSONL file; LabelError with ``file:line: field: message``."""
    file = str(path)
    p = Path(path)
    if not p.is_file():
        raise LabelError([Problem(file, None, "", "no such file")])
    labels: list[Label] = []
    problems: list[Problem] = []
    with p.open(encoding="utf-8") as fh:
        for number, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
                labels.extend(_labels_of(row, file, number))
            except json.JSONDecodeError as exc:
                problems.append(Problem(file, number, "", f"invalid JSON: {exc.msg} (column {exc.colno})"))
            except LabelError as exc:
                problems.extend(exc.problems)
    if problems:
        raise LabelError(problems)
    return labels


def write_jsonl(path: str | Path, labels: Iterable[Label]) -> int:
    """Write labels one per line; the number written."""
    n = 0
    with Path(path).open("w", encoding="utf-8") as fh:
        for lb in labels:
            fh.write(json.dumps(asdict(lb), ensure_ascii=False) + "\n")
            n += 1
    return n
