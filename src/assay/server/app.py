"""The ``assay view`` application: FastAPI, server-rendered pages, a little JavaScript.

Pages are registered as :class:`Page` entries (a router plus a navigation label): runs,
comparison, rankings, the labelling screen for judge calibration, badcases and model
probes; another screen
plugs in with ``create_app(store, pages=[Page(...)])`` or :func:`register_page`.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from ..errors import AssayError, RunNotFound
from ..redact import Redactor
from ..report.templates_env import configure
from ..store import Store
from .data import RunCache
from .security import HostAndOriginGuard, new_token, trusted_hosts

_STATIC = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class Page:
    """A screen of the viewer: its navigation label, the path the label links to and
    the router that serves it."""

    label: str
    path: str
    router: APIRouter


def templates() -> jinja2.Environment:
    """Viewer templates, falling back to the report's macros (one picture in both)."""
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(
            [
                jinja2.PackageLoader("assay.server", "templates"),
                jinja2.PackageLoader("assay.report", "templates"),
            ]
        ),
        autoescape=jinja2.select_autoescape(default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return configure(env)


def render(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """Render a viewer template with the navigation of the app."""
    env: jinja2.Environment = request.app.state.templates
    html = env.get_template(name).render(
        request=request,
        nav=request.app.state.nav,
        csrf_token=request.app.state.csrf_token,
        redacted=request.app.state.redactor is not None,
        **context,
    )
    return HTMLResponse(html, status_code=status_code)


def _static(name: str) -> Response:
    if not _NAME.match(name) or Path(name).suffix not in _STATIC:
        raise HTTPException(404, f"no static file {name}")
    for package in ("assay.server", "assay.report"):
        ref = resources.files(package).joinpath("static", name)
        if ref.is_file():
            return Response(ref.read_text(encoding="utf-8"), media_type=_STATIC[Path(name).suffix])
    raise HTTPException(404, f"no static file {name}")


def _warm_up() -> None:
    """Import the plotting library in the background: the first run page is faster."""
    with contextlib.suppress(ImportError):  # the charts say so when they are drawn
        import matplotlib.figure  # noqa: F401


def register_page(app: FastAPI, page: Page) -> None:
    """Add a screen (router + navigation entry) to a viewer app."""
    app.include_router(page.router)
    app.state.nav.append((page.label, page.path))


def create_app(
    store: Store | str | None = None,
    *,
    votes: str | Path | None = None,
    pages: Sequence[Page] = (),
    poll_seconds: float = 2.0,
    host: str | None = None,
    allowed_hosts: Sequence[str] = (),
    redactor: Redactor | None = None,
) -> FastAPI:
    """The viewer over ``store``; ``votes`` (a votes file) feeds the ranking page.

    With a ``redactor`` (``assay view --redact``), every trial a page or the JSON API
    shows is redacted first, one trial at a time (:mod:`assay.server.redaction`); pages
    say so in their header and API answers carry ``X-Assay-Redacted: 1``.

    It answers only to 127.0.0.1, localhost and ::1, plus ``host`` (the address it
    listens on) and ``allowed_hosts``, and refuses cross-origin writes (see
    :mod:`assay.server.security`)."""
    from . import api, badcase_page, compare_pages, label_page, probe_page, rank_page
    from . import pages as run_pages

    st = store if isinstance(store, Store) else Store(store)
    app = FastAPI(title="assay view", docs_url=None, redoc_url=None, openapi_url="/api/openapi.json")
    app.state.store = st
    app.state.redactor = redactor
    app.state.cache = RunCache(st, redactor=redactor)
    app.state.votes = Path(votes) if votes is not None else None
    app.state.templates = templates()
    app.state.poll_ms = int(poll_seconds * 1000)
    app.state.nav = []
    app.state.csrf_token = new_token()
    app.add_middleware(
        HostAndOriginGuard,
        allowed_hosts=trusted_hosts(host, allowed_hosts),
        token=lambda: app.state.csrf_token,
    )
    threading.Thread(target=_warm_up, daemon=True).start()
    if redactor is not None:

        @app.middleware("http")
        async def _say_redacted(request: Request, call_next: Any) -> Response:
            response: Response = await call_next(request)
            response.headers["X-Assay-Redacted"] = "1"
            return response

    @app.exception_handler(RunNotFound)
    async def _not_found(request: Request, exc: RunNotFound) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(exc)}, status_code=404)
        return render(request, "error.html", status_code=404, message=str(exc))

    @app.exception_handler(AssayError)
    async def _bad_input(request: Request, exc: AssayError) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(exc)}, status_code=400)
        return render(request, "error.html", status_code=400, message=str(exc))

    app.add_api_route("/static/{name}", _static, methods=["GET"], include_in_schema=False)
    app.include_router(api.router)
    for page in (
        Page("Runs", "/", run_pages.router),
        Page("Compare", "/compare", compare_pages.router),
        Page("Rankings", "/rank", rank_page.router),
        Page("Label", "/label", label_page.router),
        Page("Badcases", "/badcases", badcase_page.router),
        Page("Probes", "/probes", probe_page.router),
        *pages,
    ):
        register_page(app, page)
    return app


def serve(
    store: Store | str | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    votes: str | Path | None = None,
    redactor: Redactor | None = None,
) -> None:
    """Run the viewer with uvicorn until interrupted (``redactor``: see :func:`create_app`)."""
    import uvicorn

    _check_bindable(host, port)
    app = create_app(store, votes=votes, host=host, redactor=redactor)
    print(f"assay view: http://{host}:{port}/  (Ctrl+C to stop)", flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def _check_bindable(host: str, port: int) -> None:
    """A clear error, not a server log, when the address cannot be used."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        raise AssayError(f"--host {host!r} is not an address this machine can listen on") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            raise AssayError(
                f"cannot listen on {host}:{port} ({exc.strerror}); pick another port with --port"
            ) from None
