"""A small in-memory database: tables of JSON records keyed by a primary key, with
cheap snapshots, an order-independent content hash and diffs.

The state is a chain of copy-on-write *layers*. A snapshot freezes the current layer
(O(1)) and later writes go to a fresh child layer, so every trial of a task starts
from one shared, generated base without copying it; a layer's hash is its parent's
hash adjusted by the records it changed, and the diff of two states that share an
ancestor only looks at the records either of them changed.

Contract: records returned by :meth:`Database.get` and :meth:`Database.rows` are
read-only (they may belong to a shared base); change state only through
:meth:`insert`, :meth:`upsert`, :meth:`update`, :meth:`put` and :meth:`delete`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

from ..core.hashing import _default, stable_hash

Record = dict[str, Any]
Snapshot = dict[str, dict[str, Record]]
_MASK = (1 << 128) - 1
_DELETED = None


#: ``canonical_json``, its encoder built once (records are hashed by the thousand).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_default)


def _record_hash(table: str, key: str, record: Record) -> int:
    digest = hashlib.sha256(_CANONICAL.encode([table, key, record]).encode()).digest()
    return int.from_bytes(digest[:16], "big")


class _Layer:
    """Records changed in this layer (None: deleted), over an optional parent."""

    __slots__ = (
        "_hash",
        "_hashes",
        "_indexes",
        "_merged",
        "_numbers",
        "_reads",
        "changes",
        "depth",
        "frozen",
        "parent",
    )

    def __init__(self, tables: list[str], parent: _Layer | None = None):
        self.parent = parent
        self.changes: dict[str, dict[str, Record | None]] = {t: {} for t in tables}
        self.frozen = False
        self.depth: int = 0 if parent is None else parent.depth + 1
        self._hash: int | None = None
        self._merged: dict[str, dict[str, Record]] = {}
        self._numbers: dict[tuple[str, str], int] = {}
        self._indexes: dict[tuple[str, Callable[[Record], Any]], dict[Any, list[Record]] | None] = {}
        self._reads: dict[Any, Any] = {}
        self._hashes: dict[tuple[str, str], int] = {}

    def lookup(self, table: str, key: str) -> Record | None:
        layer: _Layer | None = self
        while layer is not None:
            found = layer.changes[table]
            if key in found:
                return found[key]
            layer = layer.parent
        return None

    def merged(self, table: str) -> Mapping[str, Record]:
        """Every live record of ``table``; cached once the layer is frozen."""
        cached = self._merged.get(table)
        if cached is not None:
            return cached
        base = dict(self.parent.merged(table)) if self.parent is not None else {}
        for key, record in self.changes[table].items():
            if record is None:
                base.pop(key, None)
            else:
                base[key] = record
        if self.frozen:
            self._merged[table] = base
        return base

    def max_number(self, table: str, prefix: str) -> int:
        """The highest N of the live keys ``<prefix>N`` of ``table`` (0: none); cached
        once the layer is frozen, so a new id costs the changes since the last snapshot."""
        cached = self._numbers.get((table, prefix))
        if cached is not None:
            return cached
        changed = self.changes[table]
        if any(record is None for record in changed.values()):  # a deletion: count afresh
            found = _max_number(self.merged(table), prefix)
        else:
            below = self.parent.max_number(table, prefix) if self.parent is not None else 0
            found = max(below, _max_number(changed, prefix))
        if self.frozen:
            self._numbers[(table, prefix)] = found
        return found

    def index(self, table: str, by: Callable[[Record], Any]) -> dict[Any, list[Record]] | None:
        """The live records of ``table`` grouped by ``by(record)``, each group in the
        order of :meth:`merged`; None when ``by`` fails on a record (or its value cannot
        be a key). Frozen layers only, and built once per (table, ``by``)."""
        assert self.frozen
        try:
            return self._indexes[(table, by)]
        except KeyError:
            pass
        groups: dict[Any, list[Record]] | None = {}
        try:
            for record in self.merged(table).values():
                value = by(record)
                group = groups.get(value)  # type: ignore[union-attr]
                if group is None:
                    groups[value] = [record]  # type: ignore[index]
                else:
                    group.append(record)
        except Exception:  # a record ``by`` cannot read: callers scan, and meet it
            groups = None
        self._indexes[(table, by)] = groups
        return groups

    def record_hash(self, table: str, key: str) -> int:
        """The hash of the live record ``key`` of ``table`` (0: none); kept once the
        layer is frozen (every trial of a task changes the same few records of its
        starting state)."""
        found = self._hashes.get((table, key))
        if found is not None:
            return found
        record = self.lookup(table, key)
        found = 0 if record is None else _record_hash(table, key, record)
        if self.frozen:
            self._hashes[(table, key)] = found
        return found

    def hash(self) -> int:
        if self._hash is not None:
            return self._hash
        total = self.parent.hash() if self.parent is not None else 0
        for table, changed in self.changes.items():
            for key, record in changed.items():
                if self.parent is not None:
                    total -= self.parent.record_hash(table, key)
                if record is not None:
                    total += _record_hash(table, key, record)
        total &= _MASK
        if self.frozen:
            self._hash = total
        return total


def _max_number(keys: Iterable[str], prefix: str) -> int:
    cut = len(prefix)
    return max((int(k[cut:]) for k in keys if k.startswith(prefix) and k[cut:].isdecimal()), default=0)


class State:
    """A frozen, read-only state: what :meth:`Database.snapshot` returns.

    Reads like a mapping of tables (``state["orders"]["#W1"]``, ``state.get(table,
    {})``); :meth:`to_dict` materialises an independent JSON-able copy."""

    __slots__ = ("_layer", "keys")

    def __init__(self, layer: _Layer, keys: dict[str, str]):
        self._layer = layer
        self.keys = keys

    def record(self, table: str, key: str) -> Record | None:
        return self._layer.lookup(table, str(key))

    def __getitem__(self, table: str) -> Mapping[str, Record]:
        if table not in self.keys:
            raise KeyError(table)
        return MappingProxyType(self._layer.merged(table))

    def get(self, table: str, default: Any = None) -> Any:
        return self[table] if table in self.keys else default

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys)

    def items(self) -> Iterator[tuple[str, Mapping[str, Record]]]:
        return ((t, self[t]) for t in self.keys)

    def __contains__(self, table: object) -> bool:
        return table in self.keys

    def hash(self) -> str:
        return format(self._layer.hash(), "032x")

    def to_dict(self) -> Snapshot:
        return {t: {k: _copy(r) for k, r in self._layer.merged(t).items()} for t in self.keys}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self.hash() == other.hash()

    __hash__ = None  # type: ignore[assignment]


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


class Database:
    """Tables of records. ``keys`` names each table's primary-key field.

    Records are plain JSON-able dicts, read with :meth:`get` / :meth:`rows` (read-only)
    and changed only through :meth:`insert`, :meth:`upsert`, :meth:`update`, :meth:`put`
    and :meth:`delete`, so the state stays consistent, isolated and diffable.
    """

    __slots__ = ("_layer", "keys")

    def __init__(self, keys: Mapping[str, str], tables: Snapshot | State | None = None):
        self.keys = dict(keys)
        if isinstance(tables, State):  # continue from a frozen state, sharing it
            self._layer = _Layer(list(self.keys), tables._layer)
            return
        self._layer = _Layer(list(self.keys))
        for name, rows in (tables or {}).items():
            self._check(name)
            self._layer.changes[name].update({str(k): dict(v) for k, v in rows.items()})

    def _check(self, table: str) -> None:
        if table not in self.keys:
            raise KeyError(f"unknown table {table!r}; tables: {', '.join(self.keys)}")

    # reads --------------------------------------------------------------------------
    def get(self, table: str, key: str) -> Record | None:
        self._check(table)
        return self._layer.lookup(table, str(key))

    def rows(self, table: str) -> Iterator[Record]:
        self._check(table)
        return iter(list(self._layer.merged(table).values()))

    def indexed(self, table: str, by: Callable[[Record], Any], value: Any) -> list[Record] | None:
        """The records of ``table`` (read-only) with ``by(record) == value``, in the order
        of :meth:`rows`, from an index; None when there is none to answer from (the
        table changed since the last snapshot, or ``by`` fails on one of its records):
        the caller then scans :meth:`rows`. ``by`` must be a pure function of a record
        and the same object from call to call (a module-level function): the index is
        built once per frozen state and (table, ``by``)."""
        self._check(table)
        layer = self._layer
        parent = layer.parent
        if parent is None or layer.changes[table]:
            return None
        groups = parent.index(table, by)
        if groups is None:
            return None
        try:
            return list(groups.get(value, ()))
        except TypeError:  # an unhashable value
            return None

    def items(self, table: str) -> Iterator[tuple[str, Record]]:
        """``(key, record)`` of every record of ``table`` in insertion order (read-only
        records): for tables whose records do not carry their own key."""
        self._check(table)
        return iter(list(self._layer.merged(table).items()))

    def count(self, table: str) -> int:
        self._check(table)
        return len(self._layer.merged(table))

    def max_number(self, table: str, prefix: str) -> int:
        """The highest N among the keys ``<prefix>N`` (N decimal digits) of ``table``, 0
        when there is none: what sequential ids (``R-0001``, ``R-0002``...) continue
        from. Indexed: it costs the records changed since the last snapshot, not a scan."""
        self._check(table)
        return self._layer.max_number(table, prefix)

    def reads(self) -> dict[Any, Any] | None:
        """A memo for what reads of this state give, shared by every database that
        continues from the same frozen state and has not changed it since: None once
        anything was written here since the last snapshot (or without a frozen state
        under it). Its keys are the reader's to choose (see ``ToolEnvironment``)."""
        layer = self._layer
        parent = layer.parent
        if parent is None or any(layer.changes.values()):
            return None
        return parent._reads

    @property
    def tables(self) -> list[str]:
        return list(self.keys)

    # writes -------------------------------------------------------------------------
    def _write(self, table: str, key: str, record: Record | None) -> None:
        self._layer.changes[table][key] = record

    def insert(self, table: str, record: Record) -> Record:
        self._check(table)
        key = str(record[self.keys[table]])
        if self._layer.lookup(table, key) is not None:
            raise KeyError(f"{table} {key} already exists")
        stored = dict(record)
        self._write(table, key, stored)
        return stored

    def upsert(self, table: str, record: Record) -> Record:
        """Insert ``record`` or merge its fields into the existing one."""
        self._check(table)
        key = str(record[self.keys[table]])
        old = self._layer.lookup(table, key)
        stored = {**old, **record} if old is not None else dict(record)
        self._write(table, key, stored)
        return stored

    def update(self, table: str, key: str, **fields: Any) -> Record:
        self._check(table)
        old = self._layer.lookup(table, str(key))
        if old is None:
            raise KeyError(f"{table} {key} does not exist")
        stored = {**old, **fields}
        self._write(table, str(key), stored)
        return stored

    def put(self, table: str, key: str, record: Record) -> Record:
        """Store ``record`` under ``key`` as it is (insert or replace the whole record);
        for records addressed by key rather than by a primary-key field."""
        self._check(table)
        stored = dict(record)
        self._write(table, str(key), stored)
        return stored

    def delete(self, table: str, key: str) -> None:
        self._check(table)
        if self._layer.lookup(table, str(key)) is not None:
            self._write(table, str(key), _DELETED)

    def apply_records(self, records: Mapping[str, list[Record]]) -> None:
        """Upsert each record of ``records`` (table -> list of records)."""
        for table, rows in records.items():
            for record in rows:
                self.upsert(table, record)

    # identity -----------------------------------------------------------------------
    def snapshot(self) -> State:
        """The current state, frozen (O(1)); later writes go to a new layer."""
        parent = self._layer.parent
        if parent is not None and parent.frozen and not any(self._layer.changes.values()):
            return State(parent, self.keys)  # nothing new since the last snapshot
        frozen = self._layer
        frozen.frozen = True
        frozen._merged.clear()
        frozen._hash = None
        for cache in (frozen._hashes, frozen._indexes, frozen._reads, frozen._numbers):
            cache.clear()  # filled only once frozen: empty, unless a bug filled them before
        self._layer = _Layer(list(self.keys), frozen)
        return State(frozen, self.keys)

    def copy(self) -> Database:
        """An independent database starting from the current state (O(1))."""
        state = self.snapshot()
        db = Database.__new__(Database)
        db.keys = self.keys
        db._layer = _Layer(list(self.keys), state._layer)
        return db

    def hash(self) -> str:
        return format(self._layer.hash(), "032x")


def state_hash(state: State | Snapshot) -> str:
    """Order-independent content hash of a state (a :class:`State` or a plain dict of
    tables): the sum of per-record hashes, so it updates incrementally."""
    if isinstance(state, State):
        return state.hash()
    total = 0
    for table, rows in state.items():
        for key, record in rows.items():
            total += _record_hash(table, str(key), record)
    return format(total & _MASK, "032x")


__all__ = ["Database", "Record", "Snapshot", "State", "stable_hash", "state_hash"]
