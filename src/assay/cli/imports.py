"""``assay import ...``: bring outside material into assay (runs, peer benchmarks, traces).

One command group; each importer is a subcommand registered here (``run`` for portable
run records, and the peer importers: ``tau2``, ``humaneval``, ``traces``).
"""

from __future__ import annotations

import typer

from .app import app

import_app = typer.Typer(
    name="import",
    help="Import runs, peer benchmarks (tau2, humaneval) and traces into assay.",
    no_args_is_help=True,
)
app.add_typer(import_app, name="import")
