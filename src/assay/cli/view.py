"""``assay view``: the local web viewer (needs the ``view`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ..errors import AssayError
from .app import StoreOpt, app, err
from .redact_options import RedactConfigOpt, RedactOpt, redactor_on_request


@app.command()
def view(
    host: Annotated[
        str, typer.Option("--host", help="Address to bind; keep 127.0.0.1 unless you mean it.")
    ] = ("127.0.0.1"),
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")] = 8000,
    votes: Annotated[
        Path | None,
        typer.Option("--votes", help="Votes file (JSONL/CSV) for the ranking page; default: rank the runs."),
    ] = None,
    store: StoreOpt = None,
    redact: RedactOpt = False,
    redact_config: RedactConfigOpt = None,
) -> None:
    """Browse runs in a web browser: run pages that update live, task drill-down,
    transcripts, two runs side by side, and rankings over time.

    --redact replaces secrets and personal data in every trial the pages and the JSON
    API show (transcripts, tool calls, outcomes, grader reasons, badcase evidence), for
    a screen others will see.

    Example: assay view --port 8000   (then open http://127.0.0.1:8000)
    """
    redactor = redactor_on_request(redact, redact_config)  # a bad config: one line, exit 2
    try:
        from ..server import serve
    except ImportError as exc:
        raise AssayError(
            f"assay view needs the view extra ({exc.name} is missing): pip install 'assay[view]'"
        ) from None
    if host not in ("127.0.0.1", "localhost", "::1"):
        err.print(f"[yellow]warning: binding {escape(host)}: anyone who can reach it can read your runs[/]")
    serve(store=store, host=host, port=port, votes=votes, redactor=redactor)
