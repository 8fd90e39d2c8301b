"""A small in-memory database: tables of JSON records keyed by a primary key, with
deterministic snapshot, hash and diff."""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Mapping
from typing import Any

from ..core.hashing import stable_hash

Record = dict[str, Any]
Snapshot = dict[str, dict[str, Record]]


class Database:
    """Tables of records. ``keys`` names each table's primary-key field.

    Records are plain JSON-able dicts. Tools read them with :meth:`get` /
    :meth:`rows` and change them only through :meth:`insert`, :meth:`update` and
    :meth:`delete`, so the state stays consistent and diffable.
    """

    __slots__ = ("_tables", "keys")

    def __init__(self, keys: Mapping[str, str], tables: Snapshot | None = None):
        self.keys = dict(keys)
        self._tables: Snapshot = {name: {} for name in self.keys}
        for name, rows in (tables or {}).items():
            self._table(name).update(rows)

    def _table(self, name: str) -> dict[str, Record]:
        try:
            return self._tables[name]
        except KeyError:
            raise KeyError(f"unknown table {name!r}; tables: {', '.join(self.keys)}") from None

    # reads --------------------------------------------------------------------------
    def get(self, table: str, key: str) -> Record | None:
        return self._table(table).get(str(key))

    def rows(self, table: str) -> Iterator[Record]:
        return iter(self._table(table).values())

    def count(self, table: str) -> int:
        return len(self._table(table))

    @property
    def tables(self) -> list[str]:
        return list(self._tables)

    # writes -------------------------------------------------------------------------
    def insert(self, table: str, record: Record) -> Record:
        key = str(record[self.keys[table]])
        rows = self._table(table)
        if key in rows:
            raise KeyError(f"{table} {key} already exists")
        rows[key] = record
        return record

    def upsert(self, table: str, record: Record) -> Record:
        """Insert ``record`` or merge its fields into the existing one."""
        key = str(record[self.keys[table]])
        rows = self._table(table)
        if key in rows:
            rows[key] = {**rows[key], **record}
        else:
            rows[key] = dict(record)
        return rows[key]

    def update(self, table: str, key: str, **fields: Any) -> Record:
        record = self._table(table).get(str(key))
        if record is None:
            raise KeyError(f"{table} {key} does not exist")
        record.update(fields)
        return record

    def delete(self, table: str, key: str) -> None:
        self._table(table).pop(str(key), None)

    def apply_records(self, records: Mapping[str, list[Record]]) -> None:
        """Upsert each record of ``records`` (table -> list of records)."""
        for table, rows in records.items():
            for record in rows:
                self.upsert(table, record)

    # identity -----------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """A deep, independent copy of every table."""
        return pickle.loads(pickle.dumps(self._tables, protocol=pickle.HIGHEST_PROTOCOL))

    def copy(self) -> Database:
        db = Database(self.keys)
        db._tables = self.snapshot()
        return db

    def hash(self) -> str:
        return state_hash(self._tables)


def state_hash(snapshot: Snapshot) -> str:
    """Order-independent content hash of a snapshot."""
    return stable_hash(snapshot, length=32)


def diff(before: Snapshot, after: Snapshot) -> list[dict[str, Any]]:
    """Changes from ``before`` to ``after``: one entry per added or removed record and
    per changed field, sorted by table, key and field so it is deterministic."""
    changes: list[dict[str, Any]] = []
    for table in sorted(set(before) | set(after)):
        old_rows, new_rows = before.get(table, {}), after.get(table, {})
        for key in sorted(set(old_rows) | set(new_rows)):
            old, new = old_rows.get(key), new_rows.get(key)
            if old == new:
                continue
            if old is None:
                changes.append({"op": "add", "table": table, "key": key, "new": new})
            elif new is None:
                changes.append({"op": "remove", "table": table, "key": key, "old": old})
            else:
                for name in sorted(set(old) | set(new)):
                    if old.get(name) != new.get(name):
                        changes.append(
                            {
                                "op": "change",
                                "table": table,
                                "key": key,
                                "field": name,
                                "old": old.get(name),
                                "new": new.get(name),
                            }
                        )
    return changes
