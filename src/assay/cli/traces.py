"""``assay export-traces``, ``assay import traces`` and ``assay replay``: runs out as
OpenTelemetry traces, recorded conversations in as replay tasks (docs/traces.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import AssayError
from ..suites.loader import load_suite
from .app import JsonOpt, StoreOpt, app, err, out, print_json, terminate_as_interrupt
from .imports import import_app
from .redact_options import RedactConfigOpt
from .run_options import build_spec, with_run_options

NoRedactOpt = Annotated[
    bool,
    typer.Option(
        "--no-redact",
        help="Send content as it is: no redaction of secrets and personal data (default: redacted).",
    ),
]


def _redactor(no_redact: bool, config: Path | None) -> Any:
    from ..redact import Redactor, load_config

    if no_redact:
        if config is not None:
            raise AssayError("--no-redact and --redact-config exclude each other")
        return False
    return Redactor(load_config(config)) if config is not None else True


@app.command("export-traces")
def export_traces(
    run_id: Annotated[str, typer.Argument(help="Run id (see `assay runs`).")],
    otel_endpoint: Annotated[
        str | None,
        typer.Option(
            "--otel-endpoint", help="OTLP/HTTP endpoint: Phoenix http://127.0.0.1:6006, a collector..."
        ),
    ] = None,
    fmt: Annotated[
        str | None, typer.Option("--format", help="otlp-json: write OTLP-JSON lines to -o FILE.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File to write (--format otlp-json).")
    ] = None,
    project: Annotated[
        str | None,
        typer.Option("--project", help="Phoenix project (default $PHOENIX_PROJECT_NAME, else 'assay')."),
    ] = None,
    no_redact: NoRedactOpt = False,
    redact_config: RedactConfigOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Export a stored run as OpenTelemetry traces (one per trial, OpenInference and
    GenAI attributes), redacted unless --no-redact.

    Examples: assay export-traces RUN --otel-endpoint http://127.0.0.1:6006 ;
    assay export-traces RUN --format otlp-json -o run.otlp.jsonl
    """
    from ..core.outputs import refuse_store_path
    from ..store.store import Store
    from ..traces.export import TraceExporter, export_run_traces

    if fmt is not None and fmt != "otlp-json":
        raise AssayError(f"--format {fmt!r}: the only file format is otlp-json")
    if (otel_endpoint is None) == (output is None):
        raise AssayError("give either --otel-endpoint URL or --format otlp-json -o FILE")
    if output is not None and fmt is None:
        fmt = "otlp-json"
    if otel_endpoint is not None and not otel_endpoint.startswith(("http://", "https://")):
        raise AssayError(f"--otel-endpoint {otel_endpoint!r}: expected an http:// or https:// URL")
    st = Store(store)
    refuse_store_path(output, st.path, "-o")
    st.get_run(run_id)  # an unknown run fails before anything is sent
    if otel_endpoint is not None:
        _check_reachable(otel_endpoint)
    redact = _redactor(no_redact, redact_config)
    exporter = TraceExporter(endpoint=otel_endpoint, path=output, project=project, redact=redact)
    counts = export_run_traces(st, run_id, exporter)
    target = otel_endpoint or str(output)
    if as_json:
        print_json({"run_id": run_id, "target": target, "redacted": redact is not False, **counts.as_dict()})
    else:
        state = "not redacted" if redact is False else f"{counts.redacted_values} value(s) redacted"
        err.print(
            f"exported run {run_id}: {counts.traces} traces, {counts.spans} spans to {target} ({state})"
        )
    if counts.failed_batches:
        raise AssayError(f"{counts.failed_batches} batch(es) of spans could not be sent to {target}")


def _check_reachable(endpoint: str) -> None:
    """Fail at once when nothing listens at the endpoint (the exporter would retry for
    its whole timeout before giving up on each batch)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(endpoint)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname or "", port), timeout=5).close()
    except OSError as exc:
        raise AssayError(
            f"spans could not be sent to {endpoint}: cannot connect ({exc.strerror or exc}); "
            "is the collector (Phoenix, an OpenTelemetry Collector...) running there?"
        ) from None


@app.command("replay")
@with_run_options
def replay(
    suite: Annotated[str, typer.Argument(help="A replay suite written by `assay import traces`.")],
    as_json: JsonOpt = False,
    *,
    options: dict[str, Any],
) -> None:
    """Run a suite of recorded conversations (assay import traces) with an agent, and
    show where each trial diverged from its recording and whether its reward is the
    recorded one. Takes every run option (--agent, --store, --run-id...).

    Example: assay replay replayed/ --agent builtin:retail-hasty
    """
    import asyncio

    from ..runner.api import run_async
    from ..suites.instantiate import instantiate
    from ..traces.divergence import replay_rows

    spec = build_spec(suite, options)
    with terminate_as_interrupt():
        run = asyncio.run(run_async(spec))
    loaded = load_suite(spec.suite)
    tasks = {t.id: t for t in instantiate(loaded, run.info.seed)}
    rows = replay_rows(run.store, run.run_id, tasks)
    if not rows:
        raise AssayError(
            f"suite {loaded.name} has no recorded conversations (import some with assay import traces)"
        )
    same = sum(1 for r in rows if r.diverged_at is None)
    with_reward = [r for r in rows if r.recorded_reward is not None]
    equal = sum(1 for r in with_reward if r.reward == r.recorded_reward)
    if as_json:
        print_json(
            {
                "run_id": run.run_id,
                "trials": len(rows),
                "no_divergence": same,
                "recorded_rewards": len(with_reward),
                "same_reward": equal,
                "trials_detail": [r.as_dict() for r in rows],
            }
        )
        return
    for r in rows:
        recorded = "-" if r.recorded_reward is None else str(r.recorded_reward)
        reward = "-" if r.reward is None else str(r.reward)
        where = f"diverged at {r.divergence}" if r.divergence else "no divergence"
        out.print(
            f"{r.task_id}#{r.trial_index}  reward {reward} (recorded {recorded})  "
            f"calls {r.calls} (recorded {r.recorded_calls})  {where}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    err.print(
        f"{same}/{len(rows)} trials replayed with no divergence; "
        f"{equal}/{len(with_reward)} got their recorded reward"
    )


@import_app.command("traces")
def import_traces_command(
    paths: Annotated[
        list[Path], typer.Argument(help="OTLP-JSON, Phoenix span exports or JSONL conversations.")
    ],
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="Folder to write the replay suite to.")],
    match: Annotated[
        str,
        typer.Option(
            "--match", help="How a new call matches a recorded one: exact (name+arguments) or name."
        ),
    ] = "exact",
    ignore_arg: Annotated[
        list[str] | None,
        typer.Option("--ignore-arg", help="Argument left out of exact matching (repeatable)."),
    ] = None,
    unrecorded: Annotated[
        str,
        typer.Option(
            "--unrecorded", help="An unrecorded call gets: error, or live (the suite's live domain)."
        ),
    ] = "error",
    suite: Annotated[
        str | None,
        typer.Option("--suite", help="Suite the traces were recorded on (default: the one they name)."),
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="Name of the replay suite.")] = None,
    no_redact: NoRedactOpt = False,
    redact_config: RedactConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Turn recorded conversations into a replay suite: user lines for the scripted user,
    recorded tool outputs served to the agent (docs/traces.md). Redacted unless --no-redact.

    Example: assay import traces run.otlp.jsonl -o replayed && assay replay replayed
    """
    from ..traces.importer import ImportOptions, import_traces

    if match not in ("exact", "name"):
        raise AssayError(f"--match {match!r}: expected exact or name")
    if unrecorded not in ("error", "live"):
        raise AssayError(f"--unrecorded {unrecorded!r}: expected error or live")
    options = ImportOptions(
        match=match,  # type: ignore[arg-type]
        ignore_arguments=list(ignore_arg or []),
        unrecorded=unrecorded,  # type: ignore[arg-type]
        suite=suite,
        name=name,
        redact=_redactor(no_redact, redact_config),
    )
    report = import_traces(list(paths), out_dir, options)
    if as_json:
        print_json(report.as_dict())
        return
    for note in report.notes:
        err.print(f"note: {note}")
    err.print(
        f"wrote {report.suite_file}: {report.tasks} task(s), {report.matched} matched to their suite's "
        "tasks, "
        f"{report.redacted_values} value(s) redacted (run it: assay replay {out_dir})"
    )
