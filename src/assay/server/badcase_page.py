"""The badcases screen: every badcase in the store (filter by status, layer, suite) and
one badcase with its redacted evidence; the same as JSON under ``/api/badcases``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse

from ..lifecycle.badcase import LAYERS, STATUSES
from ..store.badcases import BadcaseNotFound, list_badcases, load_badcase
from .app import render
from .holdout import looked_in_store
from .redaction import redact_badcase

router = APIRouter()


def _rows(request: Request, status: str, layer: str, suite: str) -> list[dict[str, Any]]:
    rows = list_badcases(
        request.app.state.store, status=status or None, layer=layer or None, suite=suite or None
    )
    _looked(request, rows)
    return [_shown(request, case) for case in rows]


def _load(request: Request, badcase_id: str) -> dict[str, Any]:
    case = load_badcase(request.app.state.store, badcase_id)
    _looked(request, [case])
    return _shown(request, case)


def _shown(request: Request, case: dict[str, Any]) -> dict[str, Any]:
    """The badcase as shown: its free text redacted again under ``assay view --redact``."""
    return redact_badcase(case, request.app.state.redactor)


def _looked(request: Request, cases: list[dict[str, Any]]) -> None:
    """Badcases of holdout tasks (from a run that held them) show those tasks' failures:
    a look, logged per run (the source run, or the trials' runs) still in the store."""
    tasks: dict[str, set[str]] = {}
    for case in cases:
        source = case.get("source") or {}
        for t in source.get("trials") or []:
            tasks.setdefault(str(t["run_id"]), set()).add(str(t["task_id"]))
        if source.get("run_id") and not source.get("trials"):
            tasks.setdefault(str(source["run_id"]), set()).update(case.get("task_ids") or [])
    for run_id, ids in sorted(tasks.items()):
        looked_in_store(request, run_id, ids)


@router.get("/badcases", response_class=HTMLResponse)
def badcases_page(request: Request, status: str = "", layer: str = "", suite: str = "") -> HTMLResponse:
    """Badcases, newest first, with their status, severity, layer and phenomenon."""
    rows = _rows(request, status, layer, suite)
    return render(
        request,
        "badcases.html",
        title="Badcases",
        rows=rows,
        statuses=STATUSES,
        layers=LAYERS,
        chosen={"status": status, "layer": layer, "suite": suite},
    )


@router.get("/badcases/{badcase_id}", response_class=HTMLResponse)
def badcase_page(request: Request, badcase_id: str) -> HTMLResponse:
    """One badcase: its source trials, evidence (redacted), triage, links and history."""
    try:
        case = _load(request, badcase_id)
    except BadcaseNotFound as exc:
        return render(request, "error.html", status_code=404, message=str(exc))
    return render(request, "badcase.html", title=badcase_id, case=case)


@router.get("/api/badcases")
def badcases_api(request: Request, status: str = "", layer: str = "", suite: str = "") -> dict[str, Any]:
    """Badcase documents (schema ``assay.badcase/1``), newest first."""
    return {"schema": "assay.badcase-list/1", "badcases": _rows(request, status, layer, suite)}


@router.get("/api/badcases/{badcase_id}", response_model=None)
def badcase_api(request: Request, badcase_id: str) -> dict[str, Any] | JSONResponse:
    """One badcase document; 404 with an error sentence when the id is unknown."""
    try:
        return _load(request, badcase_id)
    except BadcaseNotFound as exc:
        return JSONResponse({"error": str(exc)}, status_code=404)
