"""Opening a store: a new SQLite file is written whole from an image built once per
process (the same tables, indexes and version the DDL makes), a store that has every
table and index is not asked for each again, and one missing an index (made before it
existed) gains it."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine

from assay.store import Store, migrations, schema


def _objects(engine: Any) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        query = "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        return sorted(tuple(row) for row in conn.exec_driver_sql(query))


def test_a_new_sqlite_store_gets_the_schema_create_all_makes(tmp_path: Path) -> None:
    fast = Store(str(tmp_path / "fast.db"))
    reference = create_engine(f"sqlite:///{tmp_path / 'reference.db'}")
    schema.metadata.create_all(reference)
    made = _objects(reference)
    assert _objects(fast.engine) == made  # statement for statement
    assert {name for _, name, _, _ in made} >= schema.OBJECT_NAMES


def test_a_store_missing_an_index_gains_it_on_open(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DROP INDEX ix_trial_metrics_by_name")
    store.close()
    reopened = Store(str(tmp_path / "s.db"))
    names = {name for _, name, _, _ in _objects(reopened.engine)}
    assert "ix_trial_metrics_by_name" in names
    assert names >= schema.OBJECT_NAMES


def _state(store: Store) -> tuple[Any, ...]:
    with store.engine.connect() as conn:
        return (
            conn.exec_driver_sql("PRAGMA journal_mode").scalar(),
            conn.exec_driver_sql("PRAGMA integrity_check").scalar(),
            conn.exec_driver_sql("SELECT key, value FROM assay_meta").all(),
        )


def test_a_store_written_from_the_image_is_the_store_the_statements_make(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    imaged = Store(str(tmp_path / "imaged.db"))
    with monkeypatch.context() as m:
        m.setattr(migrations, "make_sqlite_file", lambda path: False)  # the statements' way
        built = Store(str(tmp_path / "built.db"))
    assert _objects(imaged.engine) == _objects(built.engine)
    assert _state(imaged) == _state(built) == ("wal", "ok", [("schema_version", str(schema.SCHEMA_VERSION))])
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "imaged.db").stat().st_mode & 0o777 == 0o644 & ~umask  # as SQLite makes it
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".new")) == []  # no leftovers


def test_the_image_never_replaces_a_file_or_lands_beside_a_log(tmp_path: Path) -> None:
    there = tmp_path / "there.db"
    there.write_bytes(b"not a database")
    assert migrations.make_sqlite_file(there) is False
    assert there.read_bytes() == b"not a database"
    for end in ("-wal", "-journal"):
        logged = tmp_path / f"logged{end}.db"
        (tmp_path / f"logged{end}.db{end}").write_bytes(b"")  # a log without its file: SQLite's to handle
        assert migrations.make_sqlite_file(logged) is False
        assert not logged.exists()


def test_threads_opening_one_new_store_at_once_all_get_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    start = threading.Barrier(8)
    opened: list[Store] = []
    failed: list[BaseException] = []

    def open_it() -> None:
        start.wait()
        try:
            opened.append(Store(str(path)))
        except BaseException as exc:  # reported below
            failed.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failed == [] and len(opened) == 8
    for store in opened:
        assert _state(store) == ("wal", "ok", [("schema_version", str(schema.SCHEMA_VERSION))])
    assert {name for _, name, _, _ in _objects(opened[0].engine)} >= schema.OBJECT_NAMES


def test_every_process_metric_is_a_column_of_the_trials() -> None:
    """A process metric left out of ``METRIC_COLUMNS`` would still be stored (as a row of
    ``trial_metrics``), but every trial would write that row again: the names must match."""
    import inspect
    import re

    from assay.graders.process import process_metrics

    source = inspect.getsource(process_metrics)
    named = set(re.findall(r'"(\w+)": float\(', source)) | set(re.findall(r'out\["(\w+)"\] =', source))
    assert named == set(schema.METRIC_COLUMNS)
    assert {c.name for c in schema.trials.columns} >= named


def test_a_store_made_here_is_not_checked_again_nor_asked_for_its_first_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new store written whole from the image by this process skips the header check
    and the run-id lookup of its first run (one another process creates meanwhile with
    the same id is refused when the run's rows are written); the next run, and an
    existing store, get both."""
    import assay
    from assay.errors import ResumeError
    from assay.store import faults
    from assay.store import store as store_module

    asked: list[str] = []
    checked: list[Path] = []
    monkeypatch.setattr(Store, "has_run", lambda self, run_id: asked.append(run_id) or False)
    real_check = faults.header_problem

    def check(path: Path, *args: Any, **kwargs: Any) -> str | None:
        checked.append(path)
        return real_check(path, *args, **kwargs)

    monkeypatch.setattr(store_module, "header_problem", check)
    db = tmp_path / "s.db"
    store = Store(db)
    assert store.fresh
    assay.run("retail", trials=1, task_ids=["cancel-pending"], store=store, run_id="one")
    assert not store.fresh and asked == [] and checked == []
    assay.run("retail", trials=1, task_ids=["cancel-pending"], store=store, run_id="two")
    assert asked == ["two"]
    again = Store(db)
    assert not again.fresh and checked == [db]
    monkeypatch.undo()
    with pytest.raises(ResumeError, match="already exists"):
        assay.run("retail", trials=1, task_ids=["cancel-pending"], store=str(db), run_id="one")
