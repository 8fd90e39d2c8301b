"""``assay export-traces``, ``assay import traces`` and ``assay replay``: runs out as
OpenTelemetry traces, recorded conversations in as replay tasks (docs/traces.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import AssayError
from .app import JsonOpt, StoreOpt, app, err, print_json

NoRedactOpt = Annotated[
    bool,
    typer.Option(
        "--no-redact",
        help="Send content as it is: no redaction of secrets and personal data (default: redacted).",
    ),
]
RedactConfigOpt = Annotated[
    Path | None,
    typer.Option("--redact-config", help="Redaction config YAML (docs/redaction.md)."),
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
        typer.Option("--otel-endpoint", help="OTLP/HTTP endpoint: Phoenix http://127.0.0.1:6006, a collector..."),
    ] = None,
    fmt: Annotated[
        str | None, typer.Option("--format", help="otlp-json: write OTLP-JSON lines to -o FILE.")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="File to write (--format otlp-json).")] = None,
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
    st.get_run(run_id)  # an unknown run fails before anything is sent
    redact = _redactor(no_redact, redact_config)
    exporter = TraceExporter(endpoint=otel_endpoint, path=output, project=project, redact=redact)
    counts = export_run_traces(st, run_id, exporter)
    target = otel_endpoint or str(output)
    if as_json:
        print_json({"run_id": run_id, "target": target, "redacted": redact is not False, **counts.as_dict()})
    else:
        state = "not redacted" if redact is False else f"{counts.redacted_values} value(s) redacted"
        err.print(f"exported run {run_id}: {counts.traces} traces, {counts.spans} spans to {target} ({state})")
    if counts.failed_batches:
        raise AssayError(f"{counts.failed_batches} batch(es) of spans could not be sent to {target}")
