"""Run pages: the list of runs, a run's report (live while it runs), a task's trials
with the transcript of one of them."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ..report.boxview import box_section
from ..report.charts import loss_distributions
from ..report.probes import probe_section
from ..report.transcript_view import transcript_view
from ..runner.stored import pick_trial
from .app import render
from .data import LoadedRun, RunCache
from .holdout import looked
from .redaction import read_trial

router = APIRouter()


def cache(request: Request) -> RunCache:
    return request.app.state.cache


def _box(loaded: LoadedRun) -> dict[str, Any] | None:
    def build() -> dict[str, Any] | None:
        box = box_section([loaded.run])
        if box is not None and box.get("losses"):
            box["chart"] = loss_distributions(box.pop("losses"))
        return box

    return loaded.cached("box", build)


@router.get("/", response_class=HTMLResponse)
def runs_page(request: Request) -> HTMLResponse:
    """Every run in the store, newest first; pick two to compare."""
    rows = request.app.state.store.list_runs()
    return render(request, "runs.html", runs=rows, title="Runs")


def _overview_context(request: Request, run_id: str) -> dict[str, Any]:
    loaded = cache(request).get(run_id)
    holdout = looked(request, loaded)  # the figures cover every task of the run
    return {
        "v": loaded.view,
        "ch": loaded.charts,
        "box": _box(loaded),
        "version": loaded.version,
        "holdout": holdout,
    }


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, run_id: str) -> HTMLResponse:
    """A run's report: headline with intervals, curves, tables, heat map, failures, and
    the stored probes of the models it called."""
    ctx = _overview_context(request, run_id)
    probes = probe_section(request.app.state.store, [cache(request).get(run_id).run.info])
    return render(
        request,
        "run.html",
        run_id=run_id,
        title=run_id,
        poll_ms=request.app.state.poll_ms,
        probes=probes,
        **ctx,
    )


@router.get("/runs/{run_id}/overview", response_class=HTMLResponse)
def run_overview(request: Request, run_id: str) -> HTMLResponse:
    """The figures part of the run page alone (swapped in while a run is in progress)."""
    return render(request, "_overview.html", run_id=run_id, **_overview_context(request, run_id))


@router.get("/runs/{run_id}/tasks/{task_id:path}", response_class=HTMLResponse)
def task_page(request: Request, run_id: str, task_id: str, trial: int | None = None) -> HTMLResponse:
    """A task across its trials, and the transcript of one (default: the first failure)."""
    loaded = cache(request).get(run_id)
    results = loaded.run.task_results(task_id)
    chosen = pick_trial(results, run_id, task_id, trial)
    holdout = looked(request, loaded, [task_id])
    shown = read_trial(loaded.run, task_id, chosen.trial_index)
    tv = transcript_view(*shown) if shown is not None else transcript_view(chosen, None)
    meta = next((t for t in loaded.run.tasks if t.task_id == task_id), None)
    row = next((t for t in loaded.view["summary"]["tasks"] if t["task_id"] == task_id), None)
    return render(
        request,
        "task.html",
        title=f"{task_id} · {run_id}",
        run_id=run_id,
        task_id=task_id,
        meta=meta,
        row=row,
        results=results,
        chosen=chosen.trial_index,
        tv=tv,
        holdout=holdout,
    )
