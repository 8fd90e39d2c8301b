"""The ranking page: ratings with intervals, win rates, and a bar chart race of ratings
over time (play/pause, step by week or month).

Battles come from the votes file given to ``assay view --votes``, else from the runs of
one suite version in the store (one battle per task and pair of runs).
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ..errors import AssayError
from ..report.ranking import Battle, battles_from_runs, history, load_votes, rank
from ..runner.stored import Run
from .app import render
from .holdout import log_look

router = APIRouter()


@lru_cache(maxsize=4)
def _votes(path: str, mtime: float) -> tuple[Battle, ...]:
    return tuple(load_votes(path))


def _battles(request: Request, suite: str | None) -> tuple[list[Battle], dict[str, Any]]:
    votes: Path | None = request.app.state.votes
    if votes is not None:
        return list(_votes(str(votes), votes.stat().st_mtime)), {"source": "votes", "file": str(votes)}
    runs = request.app.state.store.list_runs()
    suites = Counter(r["suite_hash"] for r in runs)
    if not suites:
        raise AssayError("the store holds no runs to rank; run a suite, or start assay view --votes FILE")
    chosen = suite or suites.most_common(1)[0][0]
    ids = [r["run_id"] for r in runs if r["suite_hash"] == chosen]
    options = [
        {"hash": h, "name": next(r["suite_name"] for r in runs if r["suite_hash"] == h), "runs": n}
        for h, n in suites.most_common()
    ]
    info = {"source": "runs", "suite": chosen, "suites": options, "runs": ids}
    if len(ids) < 2:
        info["error"] = "this suite version has fewer than two runs; rankings need at least two"
        return [], info
    # only each run's reward column and task list: not the run cache's full load (report
    # view, charts, trial table) of every run of the suite, which holds 8 runs
    store = request.app.state.store
    loaded = [Run.load(i, store) for i in ids]
    battles = battles_from_runs(loaded)
    # a holdout task two ranked runs share decides battles: the ratings show it
    seen = Counter(t.task_id for run in loaded for t in run.tasks)
    for run in loaded:
        log_look(request, run.info, sum(1 for t in run.tasks if t.split == "holdout" and seen[t.task_id] > 1))
    return battles, info


@lru_cache(maxsize=8)
def _ranked(
    battles: tuple[Battle, ...], method: Literal["bt", "elo"], period: Literal["week", "month"]
) -> tuple[dict[str, Any], list[dict[str, Any]], str | None]:
    """Ratings (bootstrap intervals: most of a request's time), frames of the race and a
    note, computed once per set of battles (the same battles rank the same: fixed seed)."""
    note = None
    try:
        result = rank(battles, method, n_resamples=200)
    except AssayError:  # an undefeated model: the plain MLE is infinite
        result = rank(battles, method, n_resamples=200, prior=0.01)
        note = "a model never lost, so the plain Bradley-Terry MLE is infinite; ratings use a prior of 0.01"
    frames: list[dict[str, Any]] = []
    if all(b.timestamp is not None for b in battles):
        frames = history(battles, period, method)
    else:
        note = "some votes have no timestamp, so there are no ratings over time"
    return result, frames, note


@router.get("/rank", response_class=HTMLResponse)
def rank_page(
    request: Request,
    method: Literal["bt", "elo"] = "bt",
    period: Literal["week", "month"] = "week",
    suite: str | None = None,
) -> HTMLResponse:
    """Ratings, win rates and the bar chart race."""
    battles, source = _battles(request, suite)
    result: dict[str, Any] | None = None
    frames: list[dict[str, Any]] = []
    note = source.get("error")
    if battles:
        result, frames, note = _ranked(tuple(battles), method, period)
    return render(
        request,
        "rank.html",
        title="Rankings",
        result=result,
        frames=frames,
        source=source,
        method=method,
        period=period,
        note=note,
    )
