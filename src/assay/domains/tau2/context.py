"""What a tau2 tool works on (:class:`Tau2Context`).

tau2 mutates its pydantic models in place, so a tool that fails half-way keeps the
changes it made before failing. A context checks records out (deep copies), and
:meth:`Tau2Context.commit` writes back every record that changed, whether the tool
returned or raised.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any

from ...envs.state import Database, Record
from ...envs.tools import Caller


def clone(value: Any) -> Any:
    """A deep copy of a JSON-like value (dicts, lists, scalars)."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) for v in value]
    return value


class Tau2Context:
    """What a tau2 tool or function works on: the state, checked out record by record
    for in-place changes, the environment's seeded generator, and what tau2 keeps on
    its toolkit objects rather than in the database: ``session`` (changed by tools, e.g.
    banking's unlocked tools; reset with the environment) and ``options`` (fixed for an
    environment, e.g. its data folder)."""

    __slots__ = ("_new", "_original", "_out", "caller", "db", "options", "rng", "session")

    def __init__(
        self,
        db: Database,
        rng: random.Random | None = None,
        caller: Caller = "agent",
        session: dict[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
    ):
        self.db = db
        self.rng = rng if rng is not None else random.Random(0)
        self.caller = caller
        self.session: dict[str, Any] = session if session is not None else {}
        self.options: Mapping[str, Any] = options if options is not None else {}
        self._out: dict[tuple[str, str], Record] = {}
        self._original: dict[tuple[str, str], Record] = {}
        self._new: list[tuple[str, str]] = []

    def get(self, table: str, key: Any) -> Record | None:
        """The record ``key`` of ``table`` as a mutable copy (None if absent); changes to
        it are written back by :meth:`commit`. ``key`` follows dict semantics: an
        unhashable key raises TypeError, a key of another type is not found."""
        hash(key)
        if not isinstance(key, str):
            return None
        slot = (table, key)
        found = self._out.get(slot)
        if found is not None:
            return found
        record = self.db.get(table, key)
        if record is None:
            return None
        copy = clone(record)
        self._out[slot] = copy
        self._original[slot] = record
        return copy

    def read(self, table: str, key: Any) -> Record | None:
        """The record as it stands now, read-only (no copy)."""
        hash(key)
        if not isinstance(key, str):
            return None
        found = self._out.get((table, key))
        return found if found is not None else self.db.get(table, key)

    def rows(self, table: str) -> Iterator[Record]:
        """Every record of ``table`` in order (read-only), seeing this call's changes."""
        field = self.db.keys[table]
        for record in self.db.rows(table):
            yield self._out.get((table, str(record[field])), record)
        for slot in self._new:
            if slot[0] == table:
                yield self._out[slot]

    def items(self, table: str) -> Iterator[tuple[str, Record]]:
        """``(key, record)`` of every record of ``table`` in order (read-only), seeing this
        call's changes: for tables keyed by a dict key rather than a field."""
        for key, record in self.db.items(table):
            yield key, self._out.get((table, key), record)
        for slot in self._new:
            if slot[0] == table:
                yield slot[1], self._out[slot]

    def put(self, table: str, key: str, record: Record) -> Record:
        """Add a new record (appended after the existing ones, as tau2 appends)."""
        slot = (table, key)
        if slot not in self._out and self.db.get(table, key) is None:
            self._new.append(slot)
        self._out[slot] = record
        return record

    def commit(self) -> None:
        """Write back every checked-out record that changed."""
        for slot, record in self._out.items():
            if slot not in self._original or self._original[slot] != record:
                self.db.put(slot[0], slot[1], record)
        self._out.clear()
        self._original.clear()
        self._new.clear()


__all__ = ["Tau2Context", "clone"]
