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
from .app import render
from .data import RunCache
from .holdout import holdout_ids, looked

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
    cache: RunCache = request.app.state.cache
    loaded = [cache.get(i) for i in ids]
    battles = battles_from_runs([x.run for x in loaded])
    # a holdout task two ranked runs share decides battles: the ratings show it
    seen = Counter(t.task_id for x in loaded for t in x.run.tasks)
    for x in loaded:
        looked(request, x, [t for t in holdout_ids(x) if seen[t] > 1])
    return battles, info


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
        try:
            result = rank(battles, method, n_resamples=200)
        except AssayError:  # an undefeated model: the plain MLE is infinite
            result = rank(battles, method, n_resamples=200, prior=0.01)
            note = (
                "a model never lost, so the plain Bradley-Terry MLE is infinite; ratings use a prior of 0.01"
            )
        if all(b.timestamp is not None for b in battles):
            frames = history(battles, period, method)
        else:
            note = "some votes have no timestamp, so there are no ratings over time"
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
