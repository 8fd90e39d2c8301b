"""Opening a store: a new SQLite file is made from DDL compiled once per process, a
store that has every table and index is not asked for each again, and one missing an
index (made before it existed) gains it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import create_engine

from assay.store import Store, schema


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
