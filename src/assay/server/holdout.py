"""Looks at holdout tasks through the viewer, logged in the store's holdout log as the
command line logs its looks (``assay.cli.looks``; docs/lifecycle.md, "Holdout discipline").

A run holds holdout tasks only when they were asked for (``--split holdout``, ``--split
all``, a holdout task named with ``--task``); the viewer shows such a run like any other.
Every request that returns something of a holdout task is one look, logged with the
run, its configuration and the number of holdout tasks it showed: action ``view`` for a
page, ``view-api`` for the JSON API (the tables of a run page are API requests of their
own, so opening a run page logs the page and each table it loads). Requests that show
no task (the run list, a run's status) log nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi import Request

from ..core.results import RunInfo
from ..store import Store
from ..store.holdout import Action, log_holdout
from .data import LoadedRun


def holdout_ids(loaded: LoadedRun) -> frozenset[str]:
    """The run's holdout task ids (computed once per run version)."""
    return loaded.cached(
        "holdout", lambda: frozenset(t.task_id for t in loaded.run.tasks if t.split == "holdout")
    )


def _action(request: Request) -> Action:
    return "view-api" if request.url.path.startswith("/api/") else "view"


def log_look(request: Request, info: RunInfo, count: int) -> int:
    """Log that the request showed ``count`` holdout tasks of run ``info`` (nothing when 0)."""
    if count > 0:
        log_holdout(request.app.state.store, info, _action(request), count)
    return count


def looked(request: Request, loaded: LoadedRun, task_ids: Iterable[str] | None = None) -> int:
    """Log a look at the run's holdout tasks among ``task_ids`` (None: every task of the
    run, as a run page or summary shows them); returns how many."""
    holdout = holdout_ids(loaded)
    if not holdout:
        return 0
    count = len(holdout) if task_ids is None else len(holdout & set(task_ids))
    return log_look(request, loaded.run.info, count)


def looked_in_store(request: Request, run_id: str, task_ids: Iterable[str]) -> int:
    """:func:`looked` for a run read straight from the store (pages that do not load it)."""
    store: Store = request.app.state.store
    wanted = set(task_ids)
    if not wanted or not store.has_run(run_id):
        return 0
    count = sum(1 for t in store.load_tasks(run_id) if t.split == "holdout" and t.task_id in wanted)
    return log_look(request, store.get_run(run_id), count) if count else 0
