"""Two runs side by side: the paired comparison with its task table (flipped tasks
first), and one task's transcripts from both runs aligned turn by turn."""

from __future__ import annotations

from itertools import zip_longest
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ..errors import AssayError
from ..report.comparison import compare_view
from ..report.transcript_view import Step, TranscriptView, transcript_view
from ..runner.stored import pick_trial
from .app import render
from .data import LoadedRun, RunCache, page
from .holdout import looked
from .redaction import read_trial

router = APIRouter()


def cache(request: Request) -> RunCache:
    return request.app.state.cache


def turns(tv: TranscriptView) -> list[list[Step]]:
    """Steps grouped into turns: a turn starts at each user message."""
    out: list[list[Step]] = [[]]
    for step in tv.steps:
        if step.role == "user" and out[-1]:
            out.append([])
        out[-1].append(step)
    return [t for t in out if t]


def _pair(a: LoadedRun, b: LoadedRun) -> dict[str, Any]:
    key = f"compare:{b.run.run_id}@{b.version}"
    return a.cached(key, lambda: compare_view([a.run, b.run])["pairs"][0])


@router.get("/compare", response_class=HTMLResponse)
def compare_page(request: Request, a: str | None = None, b: str | None = None) -> HTMLResponse:
    """Pick two runs, or show the comparison of A (baseline) and B."""
    if not a or not b:
        rows = request.app.state.store.list_runs()
        return render(request, "compare_pick.html", title="Compare", runs=rows, a=a, b=b)
    if a == b:
        raise AssayError("pick two different runs to compare")
    la, lb = cache(request).get(a), cache(request).get(b)
    pair = _pair(la, lb)
    holdout = looked(request, la) + looked(request, lb)
    return render(request, "compare.html", title=f"{a} vs {b}", c=pair, a=a, b=b, holdout=holdout)


@router.get("/api/compare/tasks")
def compare_tasks(
    request: Request,
    a: str,
    b: str,
    offset: int = 0,
    limit: int = 50,
    sort: str | None = None,
    desc: bool = False,
    q: str = "",
    change: str = "",
    stratum: str = "",
) -> dict[str, Any]:
    """A page of the comparison's task rows (flipped first unless sorted otherwise)."""
    la, lb = cache(request).get(a), cache(request).get(b)
    rows = page(
        _pair(la, lb)["tasks"],
        offset=offset,
        limit=limit,
        sort=sort,
        desc=desc,
        q=q,
        filters={"change": change, "stratum": stratum},
    )
    for loaded in (la, lb):
        looked(request, loaded, (r["task_id"] for r in rows["rows"]))
    return rows


def _pick_trials(a: LoadedRun, b: LoadedRun, task_id: str) -> tuple[int, int]:
    ra = {r.trial_index: r.reward for r in a.run.task_results(task_id)}
    rb = {r.trial_index: r.reward for r in b.run.task_results(task_id)}
    if not ra or not rb:
        missing = a.run.run_id if not ra else b.run.run_id
        raise AssayError(f"run {missing} has no trials of task {task_id!r}")
    differing = [i for i in sorted(ra) if i in rb and ra[i] != rb[i]]
    if differing:
        return differing[0], differing[0]
    failing = [i for i in sorted(ra) if ra[i] == 0] or [i for i in sorted(rb) if rb[i] == 0]
    i = failing[0] if failing else min(ra)
    return (i if i in ra else min(ra)), (i if i in rb else min(rb))


@router.get("/compare/task", response_class=HTMLResponse)
def compare_task_page(
    request: Request, a: str, b: str, task: str, ta: int | None = None, tb: int | None = None
) -> HTMLResponse:
    """One task in runs A and B: transcripts aligned by turn, verdicts and diffs."""
    la, lb = cache(request).get(a), cache(request).get(b)
    da, db = _pick_trials(la, lb, task)
    holdout = looked(request, la, [task]) + looked(request, lb, [task])
    ta = da if ta is None else ta
    tb = db if tb is None else tb
    views = []
    for loaded, index in ((la, ta), (lb, tb)):
        # the trial must be one the run has (400 as on the task page), checked before SQL sees it
        pick_trial(loaded.run.task_results(task), loaded.run.run_id, task, index)
        shown = read_trial(loaded.run, task, index)
        if shown is None:
            raise AssayError(f"task {task!r} of run {loaded.run.run_id} has no trial {index}")
        views.append(transcript_view(*shown))
    empty: list[Step] = []
    rows = list(zip_longest(turns(views[0]), turns(views[1]), fillvalue=empty))
    pair = _pair(la, lb)
    order = [r["task_id"] for r in pair["tasks"]]
    pos = order.index(task) if task in order else -1
    row = pair["tasks"][pos] if pos >= 0 else None
    return render(
        request,
        "compare_task.html",
        title=f"{task}: {a} vs {b}",
        a=a,
        b=b,
        task=task,
        ta=ta,
        tb=tb,
        tva=views[0],
        tvb=views[1],
        rows=rows,
        row=row,
        prev_task=order[pos - 1] if pos > 0 else None,
        next_task=order[pos + 1] if 0 <= pos < len(order) - 1 else None,
        a_trials=sorted(r.trial_index for r in la.run.task_results(task)),
        b_trials=sorted(r.trial_index for r in lb.run.task_results(task)),
        holdout=holdout,
    )
