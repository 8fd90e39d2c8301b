"""JSON endpoints of the viewer: run list and status (for live pages), and the paged,
filtered, sorted rows behind the task and trial tables (rows of holdout tasks are looks
at the holdout, logged: :mod:`.holdout`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request

from .data import RunCache, page
from .holdout import looked

router = APIRouter(prefix="/api")


def cache(request: Request) -> RunCache:
    return request.app.state.cache


@router.get("/runs")
def runs(request: Request) -> list[dict[str, Any]]:
    """Every run in the store, newest first (as ``assay runs --json``)."""
    return request.app.state.store.list_runs()


@router.get("/runs/{run_id}/status")
def status(request: Request, run_id: str) -> dict[str, Any]:
    """Status and completed trials: pages of a running run poll this."""
    state, done = cache(request).version(run_id)
    info = request.app.state.store.get_run(run_id)
    return {"run_id": run_id, "status": state, "completed": done, "planned": info.planned_trials}


@router.get("/runs/{run_id}/summary")
def summary(request: Request, run_id: str) -> dict[str, Any]:
    """The run's summary (``assay show RUN --json``) with intervals and breakdowns."""
    loaded = cache(request).get(run_id)
    looked(request, loaded)
    view = dict(loaded.view)
    view.pop("distributions", None)
    return view


@router.get("/runs/{run_id}/tasks")
def tasks(
    request: Request,
    run_id: str,
    offset: int = 0,
    limit: int = 50,
    sort: str | None = None,
    desc: bool = False,
    q: str = "",
    stratum: str = "",
    split: str = "",
    tags: str = "",
    outcome: str = "",
) -> dict[str, Any]:
    """A page of the per-task table."""
    loaded = cache(request).get(run_id)
    rows = page(
        loaded.view["summary"]["tasks"],
        offset=offset,
        limit=limit,
        sort=sort,
        desc=desc,
        q=q,
        filters={"stratum": stratum, "split": split, "tags": tags, "outcome": outcome},
    )
    looked(request, loaded, (r["task_id"] for r in rows["rows"]))
    return rows


@router.get("/runs/{run_id}/trials")
def trials(
    request: Request,
    run_id: str,
    offset: int = 0,
    limit: int = 50,
    sort: str | None = None,
    desc: bool = False,
    q: str = "",
    outcome: str = "",
    termination: str = "",
    task_id: str = Query("", description="Only this task's trials."),
) -> dict[str, Any]:
    """A page of the trial table (failed trials first by default)."""
    loaded = cache(request).get(run_id)
    rows = loaded.trials.page(
        offset=offset,
        limit=limit,
        sort=sort,
        desc=desc,
        q=q,
        filters={"outcome": outcome, "termination": termination, "task_id": task_id},
        search=("task_id", "category", "termination", "root_cause"),
    )
    looked(request, loaded, (r["task_id"] for r in rows["rows"]))
    return rows
