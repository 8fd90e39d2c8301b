"""Multi-row inserts (assay.store.bulk): how rows are split into statements, that every
row arrives on SQLite and PostgreSQL whatever the count, and that a batch of trials is
written as a few statements, never row by row (see the module's docstring for why)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event
from tests.support.runs import bare_run

from assay.core.results import GradeResult, TaskMeta, TrialResult
from assay.store import Store, bulk


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (0, []),
        (1, [1]),
        (3, [2, 1]),
        (256, [256]),
        (257, [256, 1]),
        (700, [256, 256, 128, 32, 16, 8, 4]),
    ],
)
def test_rows_split_into_full_statements_and_powers_of_two(n: int, expected: list[int]) -> None:
    assert bulk.sizes(n) == expected
    assert sum(bulk.sizes(n)) == n


def test_every_size_gives_few_distinct_statements() -> None:
    seen = {size for n in range(2000) for size in bulk.sizes(n)}
    assert seen == {1, 2, 4, 8, 16, 32, 64, 128, 256}


@pytest.mark.parametrize("n", [1, 255, 256, 257, 700])
def test_every_row_is_inserted(store_url: str, n: int) -> None:
    store = Store(store_url)
    width = 60  # 60 columns: 256 rows would pass SQLite's old 999-parameter limit
    cols = ", ".join(f"c{i} INTEGER" for i in range(width))
    rows = [tuple(r * width + c for c in range(width)) for r in range(n)]
    mark = bulk.mark_of(store.engine.dialect.paramstyle)
    assert mark is not None
    with store.engine.begin() as conn:
        conn.exec_driver_sql(f"CREATE TABLE wide ({cols})")
        bulk.insert_many(conn, store.engine.dialect.name, mark, "INSERT INTO wide", width, rows)
    with store.engine.connect() as conn:
        back = sorted(tuple(r) for r in conn.exec_driver_sql("SELECT * FROM wide"))
    assert back == rows


def _trial(i: int) -> TrialResult:
    grades = [GradeResult("text", "text", True, 1.0, "ok"), GradeResult("state", "state", False, 0.0, "no")]
    metrics = {"turns": 3.0, "tool_calls": float(i % 4), "tool_errors": 0.0, "custom": i / 7}
    return TrialResult("r1", f"t{i % 10}", i // 10, i, "cfg", 1, "user_stop", grades, metrics)


def test_a_batch_of_trials_is_a_few_statements(store_url: str) -> None:
    store = Store(store_url)
    tasks = [f"t{i}" for i in range(10)]
    info = bare_run("r1", tasks, trials_per_task=20)
    store.create_run(info, [TaskMeta(t) for t in tasks])
    batch = [_trial(i) for i in range(200)]
    statements: list[tuple[str, bool]] = []

    @event.listens_for(store.engine, "before_cursor_execute")
    def seen(conn: Any, cursor: Any, sql: str, params: Any, context: Any, executemany: bool) -> None:
        statements.append((sql.split("(")[0].strip(), executemany))

    assert store.write_trials(batch) == 200
    inserts = [s for s in statements if s[0].startswith("INSERT")]
    if store.engine.dialect.name == "sqlite":
        assert not any(many for _, many in inserts)  # never a statement stepped per row
        # 200 trials (their process metrics in their rows), 400 grades, 200 rows of the
        # metric that is not a column: 128 + 64 + 8, 256 + 128 + 16, 128 + 64 + 8
        assert len(inserts) == 9, inserts
    else:  # PostgreSQL: one pipelined executemany per table
        assert len(inserts) == 3 and all(many for _, many in inserts), inserts  # no transcripts here
    stored = store.load_results("r1")
    assert [(r.task_id, r.trial_index) for r in stored] == sorted((r.task_id, r.trial_index) for r in batch)
    assert [g.passed for r in stored for g in r.grades] == [True, False] * 200
    with store.engine.connect() as conn:
        columns = "task_id, trial_index, turns, tool_calls, tool_errors, tool_recall"
        rows = {(r[0], r[1]): r[2:] for r in conn.exec_driver_sql(f"SELECT {columns} FROM trials")}
        query = "SELECT run_id, task_id, trial_index, name, value FROM trial_metrics"
        others = {tuple(r[:4]): r[4] for r in conn.exec_driver_sql(query)}
    assert rows == {r.key: (3.0, r.metrics["tool_calls"], 0.0, None) for r in batch}
    assert others == {(r.run_id, *r.key, "custom"): r.metrics["custom"] for r in batch}


def test_a_connection_with_a_lower_parameter_limit_gets_smaller_statements(tmp_path: Any) -> None:
    """SQLite builds differ in how many parameters a statement may carry: the
    connection's own limit decides how many rows go in one statement."""
    import sqlite3

    if not hasattr(sqlite3.Connection, "setlimit"):
        pytest.skip("sqlite3 connection limits need Python 3.11")
    store = Store(str(tmp_path / "s.db"))
    rows = [(i, i + 1, i + 2) for i in range(300)]
    sizes: list[int] = []

    @event.listens_for(store.engine, "before_cursor_execute")
    def seen(conn: Any, cursor: Any, sql: str, params: Any, context: Any, executemany: bool) -> None:
        if sql.startswith("INSERT"):
            sizes.append(len(params) // 3)

    with store.engine.begin() as conn:
        conn.connection.driver_connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 100)
        conn.exec_driver_sql("CREATE TABLE t (a INTEGER, b INTEGER, c INTEGER)")
        bulk.insert_many(conn, "sqlite", "?", "INSERT INTO t", 3, rows)
        back = sorted(tuple(r) for r in conn.exec_driver_sql("SELECT * FROM t"))
    assert back == rows
    assert max(sizes) == 32 and sum(sizes) == 300  # 32 rows x 3 = 96 parameters <= 100
