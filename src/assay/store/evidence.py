"""Evidence checks of probe-track runs: for each task's evidence record, what the probe
found at run time (current, stale or probe error), kept with the run so that a resumed
run refreshes its tasks the same way without probing again."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import select

from . import schema
from .store import Store


def write_checks(store: Store, run_id: str, checks: Iterable[Mapping[str, Any]]) -> None:
    rows = [
        {
            "run_id": run_id,
            "task_id": str(c["task_id"]),
            "evidence_id": str(c["evidence_id"]),
            "status": str(c["status"]),
            "checked_at": str(c["checked_at"]),
            "data": json.dumps(dict(c), ensure_ascii=False, default=str),
        }
        for c in checks
    ]
    if rows:
        with store.engine.begin() as conn:
            conn.execute(schema.evidence_checks.insert(), rows)


def load_checks(store: Store, run_id: str) -> list[dict[str, Any]]:
    t = schema.evidence_checks
    query = select(t.c.data).where(t.c.run_id == run_id).order_by(t.c.task_id, t.c.evidence_id)
    with store.engine.connect() as conn:
        return [json.loads(r.data) for r in conn.execute(query)]
