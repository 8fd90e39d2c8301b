"""What the viewer knows of the store: runs loaded once per version, with their report
data, charts and table rows cached until a trial is added or the status changes.

A run's *version* is ``(status, completed trials)``: a running run gets a new version
with every finished trial, so pages and tables of a live run stay current while a
finished run is loaded from the store only once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from ..report.html import run_charts
from ..report.runview import build_run_view
from ..runner.stored import Run
from ..store import Store, schema
from .redaction import RedactedRun
from .trials import TrialTable

if TYPE_CHECKING:
    from ..redact import Redactor

Version = tuple[str, int]


@dataclass
class LoadedRun:
    """A run at one version, with what its pages show."""

    run: Run
    version: Version
    view: dict[str, Any]
    trials: TrialTable
    extras: dict[str, Any] = field(default_factory=dict)

    def cached(self, key: str, build: Callable[[], Any]) -> Any:
        """A value computed once per run version (charts, box scores...)."""
        if key not in self.extras:
            self.extras[key] = build()
        return self.extras[key]

    @property
    def charts(self) -> dict[str, str]:
        return self.cached("charts", lambda: run_charts([self.view]))


class RunCache:
    """Loaded runs, least recently used dropped beyond ``size``. With a ``redactor``
    (``assay view --redact``) every run is a :class:`~.redaction.RedactedRun`: the one
    place where pages get trials, so each comes back redacted."""

    def __init__(self, store: Store, size: int = 8, redactor: Redactor | None = None):
        self.store = store
        self.size = size
        self.redactor = redactor
        self._runs: OrderedDict[str, LoadedRun] = OrderedDict()
        self._lock = threading.Lock()

    def version(self, run_id: str) -> Version:
        """``(status, completed trials)`` of a run, straight from the store."""
        info = self.store.get_run(run_id)
        t = schema.trials
        with self.store.engine.connect() as conn:
            done = conn.execute(select(func.count()).select_from(t).where(t.c.run_id == run_id)).scalar_one()
        return (info.status, int(done))

    def get(self, run_id: str) -> LoadedRun:
        version = self.version(run_id)
        with self._lock:
            hit = self._runs.get(run_id)
            if hit is not None and hit.version == version:
                self._runs.move_to_end(run_id)
                return hit
        run = Run.load(run_id, self.store)
        if self.redactor is not None:
            run = RedactedRun(run, self.redactor)
        frame = run.frame()
        table = TrialTable(frame, self.store.failed_graders(run_id))
        loaded = LoadedRun(run, (run.info.status, len(frame)), build_run_view(run), table)
        with self._lock:
            self._runs[run_id] = loaded
            self._runs.move_to_end(run_id)
            while len(self._runs) > self.size:
                self._runs.popitem(last=False)
        return loaded


def _matches(row: dict[str, Any], filters: dict[str, str], q: str, search: Sequence[str]) -> bool:
    for key, value in filters.items():
        if not value:
            continue
        have = row.get(key)
        if isinstance(have, list):
            if value not in have:
                return False
        elif str(have) != value:
            return False
    if q:
        needle = q.lower()
        return any(needle in str(row.get(k) or "").lower() for k in search)
    return True


def page(
    rows: Sequence[dict[str, Any]],
    *,
    offset: int,
    limit: int,
    sort: str | None,
    desc: bool,
    filters: dict[str, str],
    q: str = "",
    search: Sequence[str] = ("task_id",),
) -> dict[str, Any]:
    """Filter, sort (missing values last) and slice rows, as the tables' JSON source."""
    chosen = [r for r in rows if _matches(r, filters, q, search)]
    if sort:
        present = [r for r in chosen if r.get(sort) is not None and not isinstance(r.get(sort), (list, dict))]
        missing = [r for r in chosen if r.get(sort) is None or isinstance(r.get(sort), (list, dict))]

        def key(r: dict[str, Any]) -> tuple[int, Any]:
            v = r[sort]
            return (0, v) if isinstance(v, (int, float)) else (1, str(v))

        chosen = sorted(present, key=key, reverse=desc) + missing
    limit = max(1, min(limit, 500))
    offset = max(0, offset)
    return {"rows": chosen[offset : offset + limit], "total": len(chosen), "offset": offset, "limit": limit}
