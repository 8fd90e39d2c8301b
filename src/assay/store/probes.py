"""Stored model probes (``assay probe``): write, list, load.

A probe is one JSON document (schema ``assay.probe/1``, built by ``assay.llm.probe``) in
the store's ``probes`` table, keyed by its ``probe_id``, with its model, mode, creation
time and stop reason as columns for listing. The store does not interpret the document
beyond those fields.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, func, select

from ..errors import AssayError
from . import schema
from .store import Store

_REQUIRED = ("probe_id", "created_at", "model", "mode", "schema", "stopped_by")


class ProbeNotFound(AssayError):
    """A probe id that is not in the store."""


def write_probe(store: Store, document: Mapping[str, Any]) -> str:
    """Store (or replace) a probe document; returns its ``probe_id``."""
    missing = [k for k in _REQUIRED if not document.get(k)]
    if missing:
        raise ValueError(f"probe document lacks {', '.join(missing)}")
    row = {k: str(document[k]) for k in _REQUIRED}
    row["data"] = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    t = schema.probes
    with store.engine.begin() as conn:
        conn.execute(delete(t).where(t.c.probe_id == row["probe_id"]))
        conn.execute(t.insert().values(**row))
    return row["probe_id"]


def _where(query: Any, model: str | None, mode: str | None, exact: bool) -> Any:
    t = schema.probes
    if model:
        query = query.where(t.c.model == model if exact else t.c.model.contains(model, autoescape=True))
    if mode:
        query = query.where(t.c.mode == mode)
    return query


def list_probes(
    store: Store,
    *,
    model: str | None = None,
    mode: str | None = None,
    limit: int | None = None,
    exact: bool = False,
) -> list[dict[str, Any]]:
    """Stored probe documents, newest first; ``model`` matches a substring of the spec
    (``exact=True``: the whole spec)."""
    t = schema.probes
    query = _where(select(t.c.data).order_by(t.c.created_at.desc(), t.c.probe_id), model, mode, exact)
    if limit is not None:
        query = query.limit(limit)
    with store.engine.connect() as conn:
        return [json.loads(r.data) for r in conn.execute(query)]


def count_probes(store: Store, *, model: str | None = None, mode: str | None = None) -> int:
    """How many stored probes :func:`list_probes` would list without a limit."""
    query = _where(select(func.count()).select_from(schema.probes), model, mode, False)
    with store.engine.connect() as conn:
        return int(conn.execute(query).scalar_one())


def load_probe(store: Store, probe_id: str) -> dict[str, Any]:
    """One probe document; :class:`ProbeNotFound` when the id is unknown."""
    t = schema.probes
    with store.engine.connect() as conn:
        data = conn.execute(select(t.c.data).where(t.c.probe_id == probe_id)).scalar_one_or_none()
    if data is None:
        raise ProbeNotFound(f"no probe {probe_id!r} in the store (list them with: assay probes)")
    return dict(json.loads(data))
