"""The badcases screen: every badcase in the store (filter by status, layer, suite) and
one badcase with its redacted evidence; the same as JSON under ``/api/badcases``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse

from ..lifecycle.badcase import LAYERS, STATUSES
from ..store.badcases import BadcaseNotFound, list_badcases, load_badcase
from .app import render

router = APIRouter()


def _rows(request: Request, status: str, layer: str, suite: str) -> list[dict[str, Any]]:
    return list_badcases(
        request.app.state.store, status=status or None, layer=layer or None, suite=suite or None
    )


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
        case = load_badcase(request.app.state.store, badcase_id)
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
        return load_badcase(request.app.state.store, badcase_id)
    except BadcaseNotFound as exc:
        return JSONResponse({"error": str(exc)}, status_code=404)
