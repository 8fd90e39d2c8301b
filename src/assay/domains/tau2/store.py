"""tau2 databases as assay tables.

A tau2 database is a pydantic model whose attributes are collections of records
(``FlightDB.flights: dict[str, Flight]``, ``TelecomDB.lines: list[Line]``) or single
objects (``TelecomUserDB.device``). In assay's :class:`~assay.envs.state.Database`:

- a **dict attribute** becomes a table of the same name, each record stored under its
  dict key (which is also the record's id field, e.g. ``flights["HAT001"]``);
- a **list attribute** becomes a table keyed by the records' id field; the list order
  is the table's insertion order (tau2 hashes lists in order, so :func:`table_order`
  is part of a database's identity);
- a **single-object attribute** becomes one record of the table ``db`` (agent side) or
  ``user_db`` (user side), stored under the attribute's name
  (``user_db["device"]``, ``user_db["surroundings"]``).

Records are the models' ``model_dump()`` with enums as their values, dates as ISO
dates and datetimes as ``str(datetime)`` (``"2025-01-15 10:30:00"``): exactly the text
tau2 writes when it renders or hashes them. Records keep the models' field order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import Enum
from typing import Any

from pydantic import BaseModel

from ...envs.state import Database, Record, State
from ...errors import AssayError


class Tau2DataError(AssayError):
    """A tau2 data folder, task or results file that cannot be read."""


@dataclass(frozen=True)
class TableSpec:
    """One collection attribute of a tau2 database model."""

    attr: str
    key: str
    model: type[BaseModel]
    ordered: bool = False
    """True when tau2 keeps the records in a list (order matters to its hash)."""


@dataclass(frozen=True)
class DbSpec:
    """How one tau2 database model (agent or user side) maps onto tables."""

    model: type[BaseModel]
    tables: tuple[TableSpec, ...] = ()
    singletons: Mapping[str, type[BaseModel]] = field(default_factory=dict)
    singleton_table: str = "db"
    plain: bool = False
    """The models hold only JSON types (no enums, dates): dumps need no conversion."""
    read: Callable[[Any, str], dict[str, dict[str, Record]]] | None = None
    """A database read its own way (``read(content, source)`` -> tables), instead of the
    rules above: banking's tables are ``{data: {key: record}, notes}`` objects."""
    update: Callable[[Database, Mapping[str, Any]], None] | None = None
    """tau2's ``update_db`` its own way (with ``read``)."""

    @property
    def table_names(self) -> list[str]:
        names = [t.attr for t in self.tables]
        return [*names, self.singleton_table] if self.singletons else names

    def keys(self) -> dict[str, str]:
        out = {t.attr: t.key for t in self.tables}
        if self.singletons:
            out[self.singleton_table] = "_key"
        return out

    def table(self, name: str) -> TableSpec | None:
        return next((t for t in self.tables if t.attr == name), None)


def jsonable(value: Any) -> Any:
    """A ``model_dump()`` value as tau2 writes it: enums by value, dates ISO,
    datetimes as ``str()``; containers copied."""
    if isinstance(value, dict):
        return {(k.value if isinstance(k, Enum) else k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return str(value)
    if isinstance(value, date):
        return value.isoformat()
    return value


def dump(model: BaseModel) -> Record:
    """A model as a record."""
    return jsonable(model.model_dump())


def normalize(model: type[BaseModel], data: Any) -> Record:
    """Validate ``data`` as ``model`` (coercing as tau2's pydantic does) and dump it."""
    return dump(model.model_validate(data))


def tables_from_data(spec: DbSpec, data: Any, source: str) -> dict[str, dict[str, Record]]:
    """The tables of a tau2 database file's content (validated by the spec's model)."""
    if spec.read is not None:
        return spec.read(data, source)
    try:
        db = spec.model.model_validate(data)
    except Exception as exc:
        first = str(exc).splitlines()
        raise Tau2DataError(f"{source}: not a valid tau2 database: {' '.join(first[:3])}") from None
    dumped = db.model_dump()
    tables: dict[str, dict[str, Record]] = {}
    for t in spec.tables:
        rows: dict[str, Record] = {}
        raw = dumped[t.attr]
        items: Iterable[tuple[Any, Any]] = ((r[t.key], r) for r in raw) if t.ordered else raw.items()
        for key, record in items:
            if str(key) in rows or str(key) != str(record.get(t.key)):
                raise Tau2DataError(
                    f"{source}: {t.attr} record {key!r} is duplicated or not keyed by its {t.key}"
                )
            rows[str(key)] = record if spec.plain else jsonable(record)
        tables[t.attr] = rows
    if spec.singletons:
        tables[spec.singleton_table] = {name: jsonable(dumped[name]) for name in spec.singletons}
    return tables


def merge(base: Any, update: Any) -> Any:
    """``addict.Dict.update`` as tau2 uses it: dicts merged key by key, recursively;
    anything else replaced."""
    if isinstance(base, dict) and isinstance(update, dict):
        out = dict(base)
        for k, v in update.items():
            out[k] = merge(out[k], v) if k in out and isinstance(out[k], dict) and isinstance(v, dict) else v
        return out
    return update


def apply_update(db: Database, spec: DbSpec, update: Mapping[str, Any]) -> None:
    """Apply tau2's ``update_db(update)`` (``InitializationData.agent_data`` or
    ``user_data``): deep-merge into the current content, then validate. A list
    attribute given in ``update`` replaces the whole table."""
    if spec.update is not None:
        spec.update(db, update)
        return
    for attr, value in update.items():
        t = spec.table(attr)
        if t is not None and not t.ordered and isinstance(value, dict):
            for key, patch in value.items():
                current = db.get(attr, str(key))
                merged = merge(current, patch) if current is not None else patch
                db.put(attr, str(key), normalize(t.model, merged))
        elif t is not None:
            rows = value if t.ordered else list(value.values())
            for old in [r[t.key] for r in db.rows(attr)]:
                db.delete(attr, str(old))
            db.snapshot()  # a layer boundary: the records put next come in the list's order
            for raw in rows:
                record = normalize(t.model, raw)
                db.put(attr, str(record[t.key]), record)
        elif attr in spec.singletons:
            current = db.get(spec.singleton_table, attr)
            merged = merge(current, value) if current is not None else value
            db.put(spec.singleton_table, attr, normalize(spec.singletons[attr], merged))
        else:
            raise Tau2DataError(f"initialization data names {attr!r}, which the database does not have")


def table_order(state: State | Database, spec: DbSpec) -> dict[str, list[str]]:
    """The order of each list-backed table (part of a tau2 database's identity)."""
    out: dict[str, list[str]] = {}
    for t in spec.tables:
        if t.ordered:
            rows = state.rows(t.attr) if isinstance(state, Database) else state[t.attr].values()
            out[t.attr] = [str(r[t.key]) for r in rows]
    return out


def side_content(state: State, spec: DbSpec) -> dict[str, Any]:
    """One side's tables of a state, plus list orders: equal exactly when tau2's
    database hashes are equal."""
    tables = {name: dict(state[name]) for name in spec.table_names}
    return {"tables": tables, "order": table_order(state, spec)}


__all__ = [
    "DbSpec",
    "TableSpec",
    "Tau2DataError",
    "apply_update",
    "dump",
    "jsonable",
    "merge",
    "normalize",
    "side_content",
    "table_order",
    "tables_from_data",
]
