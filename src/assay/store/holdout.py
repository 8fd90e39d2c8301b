"""The holdout log: every run that contained holdout tasks and every time such a run
was looked at (shown, reported, compared, gated, viewed in ``assay view``). Entries are
never deleted, not even with their run: the log is what says how often the holdout has
been seen."""

from __future__ import annotations

from typing import Any, Literal

from sqlalchemy import select

from ..core.results import RunInfo, TaskMeta
from . import schema
from .store import Store, now_iso

Action = Literal["run", "show", "report", "compare", "gate", "badcase", "view", "view-api"]
"""``view``/``view-api``: a page / the JSON API of ``assay view`` (assay.server.holdout)."""


def holdout_tasks(tasks: list[TaskMeta]) -> int:
    return sum(1 for t in tasks if t.split == "holdout")


def log_holdout(store: Store, info: RunInfo, action: Action, tasks: int) -> None:
    """Record a look at ``tasks`` holdout tasks of run ``info`` (nothing when 0)."""
    if tasks <= 0:
        return
    with store.engine.begin() as conn:
        conn.execute(
            schema.holdout_log.insert().values(
                at=now_iso(),
                action=action,
                suite_name=info.suite_name,
                suite_version=info.suite_version,
                suite_hash=info.suite_hash,
                run_id=info.run_id,
                config_hash=info.config_hash,
                agent=info.config.agent,
                tasks=tasks,
            )
        )


def holdout_log(store: Store, suite_name: str | None = None) -> list[dict[str, Any]]:
    """Log entries in time order, for one suite (by name, any version) or all."""
    t = schema.holdout_log
    query = select(t).order_by(t.c.at, t.c.entry)
    if suite_name:
        query = query.where(t.c.suite_name == suite_name)
    with store.engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]
