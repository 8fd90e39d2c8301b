"""The labelling screen: humans label trials a judge graded, blind to the judge's
verdict, for ``assay calibrate`` (the same labels ``assay label`` stores)."""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy import select

from ..core.results import GradeResult
from ..errors import AssayError
from ..graders.judge import label_dimensions
from ..graders.judge_prompt import render_transcript
from ..graders.registry import is_judge_kind
from ..store import Store, schema
from ..store.codec import grade_from_row
from ..store.labels import MAX_LABELLER, Label, LabelStore, normalize_value
from .app import render
from .holdout import looked_in_store
from .redaction import load_trial
from .security import check_token

router = APIRouter()

#: Longest comment the form takes, in characters.
MAX_COMMENT = 10_000


def _judged(
    store: Store, run_id: str, grader: str | None = None, *, review: bool = False
) -> list[tuple[str, str, int]]:
    """(grader, task id, trial index) of the verdicts judge graders gave in a run (not
    skipped), from the grades table; one grader's when ``grader`` is given; ``review``:
    only those waiting for a human (as :func:`~assay.graders.calibration.needs_review`)."""
    g = schema.grades
    query = select(g.c.grader, g.c.kind, g.c.task_id, g.c.trial_index, g.c.passed, g.c.needs_review)
    query = query.where(g.c.run_id == run_id, ~g.c.skipped)
    if grader is not None:
        query = query.where(g.c.grader == grader)
    with store.engine.connect() as conn:
        rows = conn.execute(query.order_by(g.c.task_id, g.c.trial_index, g.c.position)).all()
    judges: dict[str, bool] = {}
    out = []
    for r in rows:
        if r.kind not in judges:
            judges[r.kind] = is_judge_kind(r.kind)
        if judges[r.kind] and (not review or r.needs_review or r.passed is None):
            out.append((r.grader, r.task_id, r.trial_index))
    return out


@router.get("/label", response_class=HTMLResponse)
def pick(request: Request) -> HTMLResponse:
    """Runs whose trials a judge graded, with how many are labelled."""
    store = request.app.state.store
    rows = []
    for run in store.list_runs():
        counts = Counter(grader for grader, _, _ in _judged(store, run["run_id"]))
        for grader, n in sorted(counts.items()):
            labelled = {
                (lb.task_id, lb.trial_index) for lb in LabelStore(store).list(run["run_id"], grader=grader)
            }
            queue = len({(t, i) for _, t, i in _judged(store, run["run_id"], grader, review=True)})
            rows.append(
                {"run": run, "grader": grader, "graded": n, "labelled": len(labelled), "review": queue}
            )
    return render(request, "label_pick.html", title="Label", rows=rows)


@router.get("/label/{run_id}", response_class=HTMLResponse)
def next_item(
    request: Request, run_id: str, grader: str, labeller: str = "", saved: int = 0, review: int = 0
) -> HTMLResponse:
    """The next trial this labeller has not labelled for ``grader`` (``review=1``: only
    the trials whose verdict waits for a human, the review queue)."""
    store = request.app.state.store
    store.get_run(run_id)
    judged = _judged(store, run_id, grader, review=bool(review))
    graded = list(dict.fromkeys((task, index) for _, task, index in judged))
    if not graded:
        raise AssayError(f"run {run_id} has no verdict of grader {grader!r} to label")
    done = {
        (lb.task_id, lb.trial_index)
        for lb in LabelStore(store).list(run_id, grader=grader, labeller=labeller or None)
    }
    todo = [key for key in graded if key not in done]
    context: dict[str, Any] = {
        "run_id": run_id,
        "grader": grader,
        "labeller": labeller,
        "saved": saved,
        "review": review,
        "total": len(graded),
        "left": len(todo),
        "item": None,
    }
    if todo and labeller:
        (task_id, index) = todo[0]
        found = load_trial(store, run_id, task_id, index, request.app.state.redactor)
        if found is None:
            raise AssayError(f"run {run_id} has no trial {index} of task {task_id!r} to label")
        r, transcript = found
        grade = next(g for g in r.grades if g.grader == grader)
        looked_in_store(request, run_id, [r.task_id])  # a holdout trial shown to label is a look
        context["item"] = {
            "task_id": r.task_id,
            "trial_index": r.trial_index,
            "conversation": render_transcript(transcript) if transcript else "(no transcript stored)",
            "dimensions": label_dimensions(grade),
        }
    return render(request, "label.html", title=f"Label {run_id}", **context)


def _shown(value: str, width: int = 40) -> str:
    """A value the user sent, quoted and cut short for a message."""
    return repr(value if len(value) <= width else value[:width] + "...")


def _graded(store: Store, run_id: str, task_id: str, trial_index: int, grader: str) -> GradeResult:
    """``grader``'s verdict (not skipped) on one trial of a run; AssayError when the run
    has no such trial or the grader gave it none. Trial indexes are compared here, not in
    SQL: a form may send an integer SQLite cannot hold."""
    g, t = schema.grades, schema.trials
    with store.engine.connect() as conn:
        grades = conn.execute(
            select(g).where(g.c.run_id == run_id, g.c.task_id == task_id, g.c.grader == grader, ~g.c.skipped)
        ).all()
        found = next((r for r in grades if r.trial_index == trial_index), None)
        if found is None:
            indexes = conn.execute(
                select(t.c.trial_index).where(t.c.run_id == run_id, t.c.task_id == task_id)
            ).scalars()
            if trial_index not in set(indexes):
                shown = _shown(task_id)
                raise AssayError(f"run {run_id} has no trial {trial_index} of task {shown} to label")
            raise AssayError(
                f"grader {_shown(grader)} gave no verdict on trial {trial_index} of task "
                f"{_shown(task_id)} in run {run_id}"
            )
    return grade_from_row(found)


def _labels(
    grade: GradeResult, task_id: str, trial_index: int, form: Any, verdict: str, labeller: str, comment: str
) -> list[Label]:
    """The verdict and the per-dimension levels of a submitted form, each checked against
    what the screen offers for ``grade`` (AssayError, one sentence, for anything else)."""
    try:
        value = normalize_value(verdict)
    except ValueError:
        value = ""
    if value not in ("pass", "fail"):
        raise AssayError(f"verdict must be pass or fail, not {_shown(verdict)}")
    labels = [Label(task_id, trial_index, value, grade.grader, "", labeller, comment)]
    allowed = dict(label_dimensions(grade))
    for key, raw in form.items():
        if not key.startswith("dim:") or str(raw) in ("", "skip"):
            continue
        name, given = key[4:], str(raw)
        if name not in allowed:
            raise AssayError(f"grader {grade.grader!r} has no dimension {_shown(name)} to label")
        try:
            level = normalize_value(given)
        except ValueError:
            level = ""
        if level not in allowed[name]:
            choices = ", ".join(allowed[name])
            raise AssayError(f"dimension {name!r} takes {choices} or skip, not {_shown(given)}")
        labels.append(Label(task_id, trial_index, level, grade.grader, name, labeller))
    return labels


@router.post("/label/{run_id}")
async def save(
    request: Request,
    run_id: str,
    grader: str = Form(...),
    labeller: str = Form(...),
    task_id: str = Form(...),
    trial_index: int = Form(...),
    verdict: str = Form(...),
    comment: str = Form(""),
    review: str = Form(""),
    csrf_token: str = Form(""),
) -> RedirectResponse:
    """Store a verdict and the per-dimension levels, then show the next trial. The form is
    checked first (400, nothing stored): a verdict of pass or fail, levels the grader's
    dimensions offer, a grader that graded the trial, a labeller name of at most
    :data:`MAX_LABELLER` characters and a comment of at most :data:`MAX_COMMENT`."""
    check_token(request, csrf_token)
    store: Store = request.app.state.store
    store.get_run(run_id)  # 404 for a run the store does not have
    name = labeller.strip()
    if not name:
        raise AssayError("give your name as labeller: labels are per person")
    if len(name) > MAX_LABELLER:
        raise AssayError(f"a labeller name has at most {MAX_LABELLER} characters, not {len(name)}")
    if len(comment) > MAX_COMMENT:
        raise AssayError(f"a comment has at most {MAX_COMMENT} characters, not {len(comment)}")
    try:
        queue = int(review or 0)
    except ValueError:
        raise AssayError(f"review must be 0 or 1, not {_shown(review)}") from None
    grade = _graded(store, run_id, task_id, trial_index, grader)
    labels = _labels(grade, task_id, trial_index, await request.form(), verdict, name, comment)
    LabelStore(store).add(run_id, labels)
    query = urlencode({"grader": grader, "labeller": name, "saved": 1, "review": int(bool(queue))})
    return RedirectResponse(f"/label/{run_id}?{query}", status_code=303)
