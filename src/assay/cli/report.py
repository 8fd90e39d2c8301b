"""``assay report``: one self-contained HTML file for one or several runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.markup import escape

from ..errors import AssayError
from .app import JsonOpt, StoreOpt, app, err, print_json
from .redact_options import RedactConfigOpt, RedactOpt, redactor_on_request


@app.command()
def report(
    run_ids: Annotated[
        list[str], typer.Argument(help="Run ids (see `assay runs`); the first is the baseline.")
    ],
    html: Annotated[Path, typer.Option("--html", help="Write the HTML report to this file.")] = Path(
        "assay-report.html"
    ),
    profile: Annotated[
        Path | None,
        typer.Option(
            "--profile", help="Scoring profile (YAML) for the box-score section (docs/box-score.md)."
        ),
    ] = None,
    transcripts: Annotated[
        str, typer.Option("--transcripts", help="Which transcripts to embed: failed (default), all or none.")
    ] = "failed",
    max_transcripts: Annotated[
        int, typer.Option("--max-transcripts", min=0, help="Embed at most this many transcripts.")
    ] = 500,
    title: Annotated[str | None, typer.Option("--title", help="Title of the report.")] = None,
    probes: Annotated[
        str,
        typer.Option(
            "--probes",
            help="Stored model probes to show: used (default: the models the runs called), all or none.",
        ),
    ] = "used",
    redact: RedactOpt = False,
    redact_config: RedactConfigOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write one self-contained HTML report (no network needed to open it).

    Several runs add an overview and a paired comparison of each run with the first.
    --redact replaces secrets and personal data in what it shows of the trials.

    Example: assay report retail-careful retail-hasty --html report.html
    """
    from ..core.collector import paused_gc
    from ..report.html import write_report
    from ..report.probes import probe_choice

    if transcripts not in ("failed", "all", "none"):
        raise AssayError(f"--transcripts must be failed, all or none, not {transcripts!r}")
    choice: Literal["failed", "all", "none"] = (
        "all" if transcripts == "all" else "none" if transcripts == "none" else "failed"
    )
    which = probe_choice(probes)
    redactor = redactor_on_request(redact, redact_config)
    box = None
    if profile is not None:
        from ..box import load_profile

        box = load_profile(profile)
    from ..runner.stored import Run
    from ..store.store import Store
    from .looks import looked_at

    st = Store(store)
    with paused_gc():  # the report makes no garbage worth a collection's walk
        runs = [Run.load(run_id, st) for run_id in run_ids]
        looked_at(st, runs, "report")
        written = write_report(
            runs,
            html,
            st,
            profile=box,
            transcripts=choice,
            max_transcripts=max_transcripts,
            title=title,
            probes=which,
            redact=redactor or False,
        )
    info = {
        "schema": "assay.report/1",
        "path": str(written.path),
        "bytes": written.size_bytes,
        "runs": list(run_ids),  # as given (latest, latest~1...)
        "transcripts": written.transcripts,
        "transcripts_left_out": written.left_out,
        "probes": written.probes,
        "redacted": written.redacted is not None,
    }
    if written.redacted is not None:
        info["redacted_values"] = sum(written.redacted.values())
        info["redacted_kinds"] = written.redacted
    info["notes"] = written.notes
    if as_json:
        print_json(info)
        return
    for note in written.notes:  # how to read the comparisons: prompts, seeds, suite versions...
        err.print(f"note: {escape(note)}", soft_wrap=True)
    more = f", {written.left_out} left out" if written.left_out else ""
    probed = f", {written.probes} model probe(s)" if written.probes else ""
    redacted = f", {sum(written.redacted.values())} value(s) redacted" if written.redacted is not None else ""
    err.print(
        f"wrote [bold]{escape(str(written.path))}[/] ({written.size_bytes / 1024:.0f} kB, "
        f"{len(written.runs)} run(s), {written.transcripts} transcripts embedded{more}{probed}{redacted})"
    )
