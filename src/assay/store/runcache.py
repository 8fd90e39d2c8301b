"""What analysis reads of a finished run, kept in the store (table ``run_cache``).

A finished run's trials do not change, so the columns and aggregates that ``show``,
``compare``, ``report`` and the viewer read (:func:`.frames.frame_columns`,
:func:`.frames.frame_aggregates`, :func:`.frames.graded_scores`,
:func:`.frames.value_sums`) are computed once and kept as a blob of numpy arrays: the
next reader loads them in a fraction of the time that a million rows take to come
through a cursor and SQLite takes to aggregate them.

The table is made by the first part kept. Each kept part carries the run's *stamp*:
its status, creation and finish times and its numbers of trials and of retried
attempts. Every way a run gains or loses trials changes it: new trials (a resume, an
import, another process writing) change the trial count; a resume also sets the run
running and then finished at a new time; errors retried move trials to the attempts.
A part whose stamp is not the run's current one is not used (and is replaced); runs
not finished are never kept, nor runs of fewer than ``min_trials`` trials (their reads
are quick anyway). Nothing here is required: a store without the table (nothing kept
yet, read-only, made by an older assay), a part that cannot be written (the store is
read-only, locked by a writer, full) or one that does not decode is simply computed
from the rows, as before.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine, delete, insert, select, text
from sqlalchemy.exc import SQLAlchemyError

from ..errors import SpecError, StoreError
from . import schema

FORMAT = 1
"""Version of the encoding below, part of every stamp: parts written by an assay that
encoded differently are recomputed."""

MIN_TRIALS = 20_000
"""Runs with fewer trials are not kept (reading them from the rows takes well under a
second); ``$ASSAY_RUN_CACHE_MIN_TRIALS`` changes it (0: every finished run)."""

WRITE_WAIT_S = 0.2
"""How long writing a part may wait for another writer of the store before it gives up
(the part is then written by a later reader)."""

_STAMP_SQL = """
SELECT r.status, r.created_at, r.finished_at,
       (SELECT COUNT(*) FROM trials AS t WHERE t.run_id = r.run_id),
       (SELECT COUNT(*) FROM attempts AS a WHERE a.run_id = r.run_id)
FROM runs AS r WHERE r.run_id = :run_id
"""

T = TypeVar("T")


def min_trials() -> int:
    """The least trials of a run whose parts are kept ($ASSAY_RUN_CACHE_MIN_TRIALS)."""
    raw = os.environ.get("ASSAY_RUN_CACHE_MIN_TRIALS")
    if raw is None:
        return MIN_TRIALS
    try:
        return max(0, int(raw))
    except ValueError:
        raise SpecError(
            f"$ASSAY_RUN_CACHE_MIN_TRIALS must be a whole number of trials, not {raw!r}"
        ) from None


def stamp(engine: Engine, run_id: str, min_trials: int = MIN_TRIALS) -> str | None:
    """The run's current stamp, or None when its parts are not kept (not finished,
    fewer than ``min_trials`` trials, no such run)."""
    with engine.connect() as conn:
        row = conn.execute(text(_STAMP_SQL), {"run_id": run_id}).first()
    if row is None:
        return None
    status, created, finished, trials, attempts = row
    if status != "finished" or int(trials) < min_trials:
        return None
    return json.dumps([FORMAT, status, created, finished, int(trials), int(attempts)])


def load(engine: Engine, run_id: str, part: str, current: str) -> bytes | None:
    """The kept blob of ``part`` if it was made at the stamp ``current`` (else None)."""
    c = schema.run_cache
    query = select(c.c.stamp, c.c.data).where(c.c.run_id == run_id, c.c.part == part)
    try:
        with engine.connect() as conn:
            row = conn.execute(query).first()
    except (SQLAlchemyError, StoreError):  # no table (nothing kept yet, or a read-only store)
        return None
    if row is None or row.stamp != current:
        return None
    return bytes(row.data)


def save(engine: Engine, run_id: str, part: str, current: str, data: bytes) -> bool:
    """Keep ``data`` as ``part`` of the run at stamp ``current``, replacing what was
    kept; gives up (False) rather than wait for another writer or fail the reader."""
    c = schema.run_cache
    sqlite = engine.dialect.name == "sqlite"
    try:
        with engine.connect() as conn:
            if sqlite:
                wait_ms = conn.exec_driver_sql("PRAGMA busy_timeout").scalar()
                conn.exec_driver_sql(f"PRAGMA busy_timeout = {int(WRITE_WAIT_S * 1000)}")
                conn.commit()
            try:
                _wait_briefly(conn)
                try:  # the first part kept makes the table, in its own transaction
                    c.create(conn, checkfirst=True)
                    conn.commit()
                except SQLAlchemyError:  # made meanwhile by another reader (the write below tells)
                    conn.rollback()
                _wait_briefly(conn)
                conn.execute(delete(c).where(c.c.run_id == run_id, c.c.part == part))
                conn.execute(insert(c).values(run_id=run_id, part=part, stamp=current, data=data))
                conn.commit()
            finally:
                conn.rollback()  # nothing to undo after the commit
                if sqlite:  # the pooled connection keeps the store's own timeout
                    conn.exec_driver_sql(f"PRAGMA busy_timeout = {int(wait_ms or 0)}")
                    conn.commit()
    except (SQLAlchemyError, StoreError):
        return False
    return True


def _wait_briefly(conn: Any) -> None:
    """Let the transaction begun on ``conn`` wait at most ``WRITE_WAIT_S`` for a lock
    (PostgreSQL; SQLite's busy timeout is set on the connection)."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{int(WRITE_WAIT_S * 1000)}ms'")


def cached(
    engine: Engine,
    run_id: str,
    part: str,
    compute: Callable[[], T],
    encode: Callable[[T], bytes],
    decode: Callable[[bytes], T],
    *,
    min_trials: int = MIN_TRIALS,
    writable: bool = True,
) -> T:
    """``compute()``, or its value kept for this run at its current stamp."""
    current = stamp(engine, run_id, min_trials)
    if current is None:
        return compute()
    blob = load(engine, run_id, part, current)
    if blob is not None:
        try:
            return decode(blob)
        except (ValueError, KeyError, TypeError, OSError):  # damaged: computed again below
            pass
    value = compute()  # after the stamp: trials written meanwhile make the stamp stale
    if writable:
        save(engine, run_id, part, current, encode(value))
    return value


# encoding ----------------------------------------------------------------------------
def pack(arrays: dict[str, npt.NDArray[Any]], meta: Any) -> bytes:
    """Numeric arrays and a JSON-able ``meta`` as one ``.npz`` blob (no pickles)."""
    buf = io.BytesIO()
    blob = np.frombuffer(json.dumps(meta, separators=(",", ":")).encode("utf-8"), dtype=np.uint8)
    named: dict[str, Any] = {"__meta__": blob, **arrays}
    np.savez(buf, **named)
    return buf.getvalue()


def unpack(data: bytes) -> tuple[dict[str, npt.NDArray[Any]], Any]:
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    meta = json.loads(arrays.pop("__meta__").tobytes().decode("utf-8"))
    return arrays, meta


def _codes(values: Sequence[Any] | npt.NDArray[Any]) -> tuple[npt.NDArray[np.int32], list[Any]]:
    """Integer codes of values (strings or None) and the distinct values in code order."""
    index: dict[Any, int] = {}
    seq = values.tolist() if isinstance(values, np.ndarray) else values
    codes = np.fromiter((index.setdefault(v, len(index)) for v in seq), dtype=np.int32, count=len(seq))
    return codes, list(index)


def _objects(codes: npt.NDArray[np.int32], labels: list[Any]) -> npt.NDArray[np.object_]:
    table = np.empty(len(labels), dtype=object)
    table[:] = labels
    return table[codes] if codes.size else np.empty(0, dtype=object)


_FRAME_OBJECTS = ("termination", "root_cause", "error_category")
_FRAME_NUMBERS = ("reward", "latency_s", "cost_usd", "input_tokens", "output_tokens")


def encode_frame(columns: dict[str, Any]) -> bytes:
    """The fields of a ``TrialFrame`` (as :func:`.frames.frame_columns` returns them)."""
    arrays: dict[str, npt.NDArray[Any]] = {
        "task": np.asarray(columns["task"], dtype=np.int64),
        "trial_index": np.asarray(columns["trial_index"], dtype=np.int64),
    }
    arrays.update({name: np.asarray(columns[name], dtype=np.float64) for name in _FRAME_NUMBERS})
    labels: dict[str, list[Any]] = {}
    for name in _FRAME_OBJECTS:
        arrays[name], labels[name] = _codes(columns[name])
    return pack(arrays, {"task_ids": list(columns["task_ids"]), "labels": labels})


def decode_frame(data: bytes) -> dict[str, Any]:
    arrays, meta = unpack(data)
    out: dict[str, Any] = {
        "task_ids": meta["task_ids"],
        "task": arrays["task"].astype(np.intp),
        "trial_index": arrays["trial_index"],
    }
    out.update({name: arrays[name] for name in _FRAME_NUMBERS})
    out.update({name: _objects(arrays[name], meta["labels"][name]) for name in _FRAME_OBJECTS})
    return {name: out[name] for name in _FRAME_KEYS}


_FRAME_KEYS = (
    "task_ids",
    "task",
    "trial_index",
    "reward",
    "termination",
    "root_cause",
    "latency_s",
    "cost_usd",
    "input_tokens",
    "output_tokens",
    "error_category",
)


def _nullable(values: Sequence[float | None]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    missing = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
    floats = np.fromiter((0.0 if v is None else v for v in values), dtype=np.float64, count=len(values))
    return floats, missing


def _with_nones(values: npt.NDArray[np.float64], missing: npt.NDArray[np.bool_]) -> list[float | None]:
    out = values.astype(object)
    out[missing] = None
    listed: list[float | None] = out.tolist()
    return listed


def encode_aggregates(aggregates: dict[str, Any]) -> bytes:
    """What :func:`.frames.frame_aggregates` returns (its model calls as columns)."""
    calls = aggregates["model_calls"]
    models, model_labels = _codes([c[0] for c in calls])
    latency, no_latency = _nullable([c[1] for c in calls])
    ttft, no_ttft = _nullable([c[2] for c in calls])
    failed = np.fromiter((bool(c[3]) for c in calls), dtype=bool, count=len(calls))
    arrays: dict[str, npt.NDArray[Any]] = {
        "model": models,
        "latency": latency,
        "no_latency": no_latency,
        "ttft": ttft,
        "no_ttft": no_ttft,
        "failed": failed,
    }
    rest = {key: value for key, value in aggregates.items() if key != "model_calls"}
    return pack(arrays, {"aggregates": rest, "models": model_labels, "keys": list(aggregates)})


def decode_aggregates(data: bytes) -> dict[str, Any]:
    arrays, meta = unpack(data)
    models = _objects(arrays["model"], meta["models"]).tolist()
    calls = list(
        zip(
            models,
            _with_nones(arrays["latency"], arrays["no_latency"]),
            _with_nones(arrays["ttft"], arrays["no_ttft"]),
            arrays["failed"].tolist(),
            strict=True,
        )
    )
    rest = meta["aggregates"]
    return {key: calls if key == "model_calls" else rest[key] for key in meta["keys"]}


def encode_scores(rows: list[tuple[str, str, float]]) -> bytes:
    """``(task id, grader, score)`` rows (:func:`.frames.graded_scores`)."""
    tasks, task_labels = _codes([r[0] for r in rows])
    graders, grader_labels = _codes([r[1] for r in rows])
    scores = np.fromiter((r[2] for r in rows), dtype=np.float64, count=len(rows))
    arrays: dict[str, npt.NDArray[Any]] = {"task": tasks, "grader": graders, "score": scores}
    return pack(arrays, {"tasks": task_labels, "graders": grader_labels})


def decode_scores(data: bytes) -> list[tuple[str, str, float]]:
    arrays, meta = unpack(data)
    tasks = _objects(arrays["task"], meta["tasks"]).tolist()
    graders = _objects(arrays["grader"], meta["graders"]).tolist()
    return list(zip(tasks, graders, arrays["score"].tolist(), strict=True))


def encode_value_sums(rows: list[tuple[str, str, float, int]]) -> bytes:
    """``(task id, name, sum, count)`` rows (:func:`.frames.value_sums`)."""
    tasks, task_labels = _codes([r[0] for r in rows])
    names, name_labels = _codes([r[1] for r in rows])
    sums = np.fromiter((r[2] for r in rows), dtype=np.float64, count=len(rows))
    counts = np.fromiter((r[3] for r in rows), dtype=np.int64, count=len(rows))
    arrays: dict[str, npt.NDArray[Any]] = {"task": tasks, "name": names, "sum": sums, "count": counts}
    return pack(arrays, {"tasks": task_labels, "names": name_labels})


def decode_value_sums(data: bytes) -> list[tuple[str, str, float, int]]:
    arrays, meta = unpack(data)
    tasks = _objects(arrays["task"], meta["tasks"]).tolist()
    names = _objects(arrays["name"], meta["names"]).tolist()
    return list(zip(tasks, names, arrays["sum"].tolist(), arrays["count"].tolist(), strict=True))
