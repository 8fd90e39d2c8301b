"""Stored badcase records: write (insert or replace), load, list, delete.

A badcase is one JSON document (schema ``assay.badcase/1``, built and checked by
``assay.lifecycle.badcase``) in the ``badcases`` table, with its status, severity,
layer, suite, source run, owner, trial count and phenomenon as columns for listing.
The store does not interpret the document beyond those fields.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, select

from ..errors import AssayError
from . import schema
from .store import Store

_COLUMNS = ("created_at", "updated_at", "status", "severity", "layer", "phenomenon")


class BadcaseNotFound(AssayError):
    """A badcase id that is not in the store."""


def write_badcase(store: Store, document: Mapping[str, Any]) -> str:
    """Store (or replace) a badcase document; returns its id."""
    missing = [k for k in ("badcase_id", *_COLUMNS) if document.get(k) in (None, "")]
    if missing:
        raise ValueError(f"badcase document lacks {', '.join(missing)}")
    source = document.get("source") or {}
    row = {
        "badcase_id": str(document["badcase_id"]),
        **{k: str(document[k]) for k in _COLUMNS},
        "source": str(source.get("kind", "manual")),
        "suite_name": str((document.get("suite") or {}).get("name", "")),
        "run_id": source.get("run_id"),
        "owner": document.get("owner"),
        "trials": len(source.get("trials") or []),
        "data": json.dumps(document, ensure_ascii=False, separators=(",", ":")),
    }
    t = schema.badcases
    with store.engine.begin() as conn:
        conn.execute(delete(t).where(t.c.badcase_id == row["badcase_id"]))
        conn.execute(t.insert().values(**row))
    return str(row["badcase_id"])


def has_badcase(store: Store, badcase_id: str) -> bool:
    t = schema.badcases
    with store.engine.connect() as conn:
        return conn.execute(select(t.c.badcase_id).where(t.c.badcase_id == badcase_id)).first() is not None


def load_badcase(store: Store, badcase_id: str) -> dict[str, Any]:
    """One badcase document; :class:`BadcaseNotFound` when the id is unknown."""
    t = schema.badcases
    with store.engine.connect() as conn:
        data = conn.execute(select(t.c.data).where(t.c.badcase_id == badcase_id)).scalar_one_or_none()
    if data is None:
        raise BadcaseNotFound(f"no badcase {badcase_id!r} in the store (list them with: assay badcase list)")
    return dict(json.loads(data))


def list_badcases(
    store: Store,
    *,
    status: str | None = None,
    suite: str | None = None,
    layer: str | None = None,
    run_id: str | None = None,
) -> list[dict[str, Any]]:
    """Badcase documents, newest first (then by id), filtered by the columns given."""
    t = schema.badcases
    query = select(t.c.data).order_by(t.c.created_at.desc(), t.c.badcase_id)
    for column, value in (
        (t.c.status, status),
        (t.c.suite_name, suite),
        (t.c.layer, layer),
        (t.c.run_id, run_id),
    ):
        if value:
            query = query.where(column == value)
    with store.engine.connect() as conn:
        return [json.loads(r.data) for r in conn.execute(query)]


def delete_badcase(store: Store, badcase_id: str) -> None:
    t = schema.badcases
    with store.engine.begin() as conn:
        conn.execute(delete(t).where(t.c.badcase_id == badcase_id))
