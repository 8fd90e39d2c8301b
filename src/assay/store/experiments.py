"""Flag-matrix experiments (``assay run --flag NAME=A/B``): one JSON document each (schema
``assay.experiment/1``: factors, and for each arm its flag levels and run id)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, select

from ..errors import AssayError
from . import schema
from .store import Store


class ExperimentNotFound(AssayError):
    """An experiment id that is not in the store."""


def write_experiment(store: Store, document: Mapping[str, Any]) -> str:
    t = schema.experiments
    row = {
        "experiment_id": str(document["experiment_id"]),
        "created_at": str(document["created_at"]),
        "suite_name": str(document.get("suite", "")),
        "data": json.dumps(document, ensure_ascii=False, separators=(",", ":")),
    }
    with store.engine.begin() as conn:
        conn.execute(delete(t).where(t.c.experiment_id == row["experiment_id"]))
        conn.execute(t.insert().values(**row))
    return row["experiment_id"]


def load_experiment(store: Store, experiment_id: str) -> dict[str, Any]:
    t = schema.experiments
    with store.engine.connect() as conn:
        data = conn.execute(select(t.c.data).where(t.c.experiment_id == experiment_id)).scalar_one_or_none()
    if data is None:
        raise ExperimentNotFound(
            f"no experiment {experiment_id!r} in the store (list them with: assay experiment list)"
        )
    return dict(json.loads(data))


def list_experiments(store: Store) -> list[dict[str, Any]]:
    t = schema.experiments
    with store.engine.connect() as conn:
        return [json.loads(r.data) for r in conn.execute(select(t.c.data).order_by(t.c.created_at.desc()))]
