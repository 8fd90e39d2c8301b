"""``assay export RUN`` and ``assay import run FILE``: a run as one portable file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ..store.record import RECORD_SCHEMA, export_run
from ..store.record_import import import_run
from ..store.store import Store
from .app import JsonOpt, StoreOpt, app, err, print_json
from .imports import import_app
from .redact_options import RedactConfigOpt, RedactOpt, redactor_on_request


@app.command()
def export(
    run_id: Annotated[str, typer.Argument(help="Run id (see `assay runs`), or latest, latest~1...")],
    output: Annotated[Path, typer.Option("--output", "-o", help="File to write (.jsonl, or .jsonl.gz).")],
    redact: RedactOpt = False,
    redact_config: RedactConfigOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write a run, whole (spec, trials, grades, transcripts, failed attempts), to one
    portable file that `assay import run` reads (docs/run-record.md). As stored, unless
    --redact: then secrets and personal data in the trials' content become pseudonyms.

    Example: assay export retail-20260101-120000-abc123 -o run.jsonl.gz
    """
    counts = export_run(Store(store), run_id, output, redactor_on_request(redact, redact_config))
    if as_json:
        print_json(
            {
                "schema": "assay.export/1",
                "record": RECORD_SCHEMA,
                "run_id": run_id,
                "path": str(output),
                **counts,
            }
        )
        return
    trials, attempts = counts["trials"], counts["attempts"]
    redacted = f", {counts['redacted_values']} value(s) redacted" if "redacted_values" in counts else ""
    err.print(escape(f"wrote {output}: run {run_id}, {trials} trials, {attempts} earlier attempts{redacted}"))


@import_app.command("run")
def import_run_command(
    path: Annotated[Path, typer.Argument(help="A run record written by `assay export`.")],
    run_id: Annotated[str | None, typer.Option("--run-id", help="Store it under this id instead.")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Read a run record into the store, where show, compare, report and the viewer see
    it as they saw it where it was made.

    Example: assay import run run.jsonl.gz --store team.db
    """
    st = Store(store)
    info = import_run(st, path, run_id)
    completed = len(st.completed_keys(info.run_id))
    if as_json:
        print_json(
            {
                "schema": "assay.import-run/1",
                "run_id": info.run_id,
                "status": info.status,
                "trials": completed,
                "store": st.url,
            }
        )
        return
    err.print(escape(f"imported run {info.run_id} ({info.status}, {completed} trials) into {st.url}"))
