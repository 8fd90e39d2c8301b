"""The probes screen: stored model probes side by side (filter by model and mode, as
``assay probes``) and one probe in full; the same as JSON under ``/api/probes``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse

from ..errors import AssayError
from ..llm.probe import comparison_table
from ..report.probes import MODES, probe_card
from ..store.probes import ProbeNotFound, count_probes, list_probes, load_probe
from .app import render

router = APIRouter()

#: Probes a page or ``/api/probes`` lists unless ``limit`` says otherwise (newest first).
DEFAULT_LIMIT = 100
#: The most probes a page or ``/api/probes`` lists: a larger ``limit`` is cut to it, as the
#: run and comparison tables cut theirs (``total`` still counts every match).
MAX_LIMIT = 500


def _table(request: Request, model: str, mode: str, limit: int) -> dict[str, Any]:
    if mode and mode not in MODES:
        raise AssayError(f"mode must be {', '.join(MODES)}, not {mode!r}")
    if limit < 1:
        raise AssayError(f"limit must be at least 1, not {limit}")
    limit = min(limit, MAX_LIMIT)
    store = request.app.state.store
    docs = list_probes(store, model=model or None, mode=mode or None, limit=limit)
    table = comparison_table(docs)
    table["total"] = count_probes(store, model=model or None, mode=mode or None)
    return table


@router.get("/probes", response_class=HTMLResponse)
def probes_page(
    request: Request, model: str = "", mode: str = "", limit: int = DEFAULT_LIMIT
) -> HTMLResponse:
    """Stored probes, newest first, one row each with their headline figures."""
    table = _table(request, model, mode, limit)
    newest = {pid for m in table["models"] for pid in m["newest"].values()}
    return render(
        request,
        "probes.html",
        title="Model probes",
        table=table,
        newest=newest,
        modes=MODES,
        chosen={"model": model, "mode": mode},
    )


@router.get("/probes/{probe_id}", response_class=HTMLResponse)
def probe_page(request: Request, probe_id: str) -> HTMLResponse:
    """One probe: its figures with intervals, ramp levels, incidents and settings."""
    try:
        doc = load_probe(request.app.state.store, probe_id)
    except ProbeNotFound as exc:
        return render(request, "error.html", status_code=404, message=str(exc))
    return render(request, "probe.html", title=probe_id, doc=doc, card=probe_card(doc))


@router.get("/api/probes")
def probes_api(
    request: Request, model: str = "", mode: str = "", limit: int = DEFAULT_LIMIT
) -> dict[str, Any]:
    """The comparison table (schema ``assay.probe-comparison/1``, as ``assay probes
    --json``) of the newest ``limit`` probes (at most :data:`MAX_LIMIT`), and ``total``:
    how many match."""
    return _table(request, model, mode, limit)


@router.get("/api/probes/{probe_id}", response_model=None)
def probe_api(request: Request, probe_id: str) -> dict[str, Any] | JSONResponse:
    """One stored probe document (schema ``assay.probe/1``); 404 when the id is unknown."""
    try:
        return load_probe(request.app.state.store, probe_id)
    except ProbeNotFound as exc:
        return JSONResponse({"error": str(exc)}, status_code=404)
