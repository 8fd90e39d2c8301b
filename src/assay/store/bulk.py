"""Many rows in few statements: multi-row ``INSERT ... VALUES (...), (...)``.

A driver's ``executemany`` steps its statement once per row, and CPython's sqlite3
releases the interpreter lock around every step. The store's writer thread shares the
interpreter with the event loop, so while the loop is busy the writer waited for the lock
again after every row, up to the 5 ms switch interval: measured against a busy thread,
2.4-4.9 ms of wall time and 49-87 us of CPU per row, where one statement of 64 rows took
0.10 ms and 10 us per row. A batch of trials is therefore written as a few statements of
many rows, each releasing the lock once while the database works.

Statements carry at most :data:`CHUNK` rows; a remainder is split into powers of two, so
each table has a handful of distinct statements (SQLite's statement cache keeps them
prepared) whatever the batch sizes. Other databases keep the driver's ``executemany``:
psycopg pipelines it, and there multi-row statements measured slower (retail trials
into PostgreSQL: 1.03 against 0.89 ms per trial).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from itertools import chain
from typing import Any

CHUNK = 256
"""Rows per statement at most."""

_MARKS = {"qmark": "?", "format": "%s", "pyformat": "%s"}


def mark_of(paramstyle: str) -> str | None:
    """The positional placeholder of a DBAPI paramstyle (None: not positional)."""
    return _MARKS.get(paramstyle)


def _max_params(conn: Any) -> int:
    """Bound parameters one statement may carry on this SQLite connection: its own
    limit (Python 3.11+), else SQLite's default (999 before 3.32)."""
    getlimit = getattr(conn.connection.driver_connection, "getlimit", None)
    if getlimit is not None:
        return int(getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
    return 999 if sqlite3.sqlite_version_info < (3, 32) else 32766


def sizes(n: int, most: int = CHUNK) -> list[int]:
    """Rows per statement for ``n`` rows: full statements of ``most`` (a power of two),
    then the remainder as distinct powers of two, largest first."""
    out = [most] * (n // most)
    rest = n % most
    step = most
    while rest:
        step //= 2
        if rest >= step:
            out.append(step)
            rest -= step
    return out


def insert_many(
    conn: Any,
    dialect: str,
    mark: str,
    head: str,
    width: int,
    rows: Sequence[Sequence[Any]],
    tail: str = "",
) -> None:
    """Run ``head VALUES (...), ... tail`` for ``rows`` (tuples of ``width`` values) on a
    SQLAlchemy connection: on SQLite in as few statements as :func:`sizes` gives,
    elsewhere as one ``executemany``."""
    one = "(" + ", ".join([mark] * width) + ")"
    if dialect != "sqlite":
        conn.exec_driver_sql(f"{head} VALUES {one}{tail}", list(rows))
        return
    most, limit = CHUNK, _max_params(conn)
    while most > 1 and most * width > limit:
        most //= 2
    start = 0
    for size in sizes(len(rows), most):
        part = rows[start : start + size]
        start += size
        sql = f"{head} VALUES {', '.join([one] * size)}{tail}"
        conn.exec_driver_sql(sql, tuple(chain.from_iterable(part)))
