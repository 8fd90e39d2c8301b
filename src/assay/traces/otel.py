"""Export spans through the official OpenTelemetry SDK: to an OTLP/HTTP endpoint
(Arize Phoenix, an OpenTelemetry Collector, Langfuse...) or to an OTLP-JSON file.

Needs the ``otel`` extra (``pip install 'assay[otel]'``: opentelemetry-sdk,
opentelemetry-exporter-otlp-proto-http, openinference-semantic-conventions, whose
constants name the OpenInference attributes set here). Span and trace ids are assay's own,
derived from the run, task and trial (:mod:`assay.traces.spans`), so exporting the same
run twice gives the same ids.
"""

from __future__ import annotations

import atexit
import json
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..core.outputs import AtomicOutput
from ..errors import AssayError
from .outspan import OutSpan, OutTrace

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

DEFAULT_PROJECT = "assay"


class OtelMissing(AssayError):
    """The OpenTelemetry SDK is not installed."""


def _require() -> None:
    try:
        import openinference.semconv.trace  # noqa: F401
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError as exc:
        raise OtelMissing(
            f"exporting traces needs the otel extra ({exc.name} is missing): pip install 'assay[otel]' "
            "(opentelemetry-sdk, opentelemetry-exporter-otlp-proto-http, openinference-semantic-conventions)"
        ) from None


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL of an endpoint: ``http://HOST:PORT`` gets ``/v1/traces``."""
    url = endpoint.rstrip("/")
    return url if url.endswith("/v1/traces") else url + "/v1/traces"


def http_exporter(
    endpoint: str, headers: dict[str, str] | None = None, timeout_s: float = 10.0
) -> SpanExporter:
    """The SDK's OTLP/HTTP (protobuf) span exporter for ``endpoint``."""
    _require()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=traces_url(endpoint), headers=headers or None, timeout=timeout_s)


def _hex_ids(value: Any) -> Any:
    """OTLP-JSON writes trace and span ids as hex (protobuf's JSON mapping: base64)."""
    import base64

    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str):
                out[k] = base64.b64decode(v).hex()
            else:
                out[k] = _hex_ids(v)
        return out
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """An OTLP ``ExportTraceServiceRequest`` as OTLP-JSON (camelCase, hex ids)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    data: dict[str, Any] = _hex_ids(MessageToDict(encode_spans(spans)))
    return data


class OtlpJsonExporter:
    """A span exporter writing OTLP-JSON, one ``{"resourceSpans": [...]}`` per line
    (the OpenTelemetry Collector's file format).

    A file named by its path appears at shutdown, whole: until then the lines go to a
    temporary file next to it. When a line could not be written (a full disk), or the
    process ends before shutdown (Ctrl-C, an error midway), the temporary file is
    dropped and an earlier file stays as it was; shutdown then raises
    :class:`AssayError`. A path that cannot be written is an :class:`AssayError` at once."""

    def __init__(self, target: str | Path | IO[str]):
        self._output: AtomicOutput | None = None
        if isinstance(target, (str, Path)):
            try:
                self._output = AtomicOutput(target)
            except IsADirectoryError:
                raise AssayError(
                    f"{target} is a directory; give a file name such as run.otlp.jsonl"
                ) from None
            except FileNotFoundError:
                raise AssayError(
                    f"cannot write the traces to {target}: its folder {Path(target).parent} does not exist"
                ) from None
            except OSError as exc:
                raise AssayError(f"cannot write the traces to {target}: {exc.strerror or exc}") from None
            self._fh: IO[str] = self._output.file
            _UNFINISHED.add(self)
        else:
            self._fh = target
        self._target = target
        self._failed: OSError | None = None
        self._lock = threading.Lock()
        self.lines = 0

    def export(self, spans: Sequence[ReadableSpan]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        if spans:
            line = json.dumps(otlp_json(spans), ensure_ascii=False, separators=(",", ":"))
            with self._lock:
                if self._failed is not None or self._fh.closed:
                    return SpanExportResult.FAILURE
                try:
                    self._fh.write(line + "\n")
                except OSError as exc:  # said once, at shutdown
                    self._failed = exc
                    return SpanExportResult.FAILURE
                self.lines += 1
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        with self._lock:
            if self._failed is not None or self._fh.closed:
                return False
            try:
                self._fh.flush()
            except OSError as exc:
                self._failed = exc
                return False
        return True

    def shutdown(self) -> None:
        with self._lock:
            _UNFINISHED.discard(self)
            output, self._output = self._output, None
            if output is None:  # not ours (or shut down already)
                if not self._fh.closed:
                    self._fh.flush()
                return
            try:
                if self._failed is not None:
                    output.discard()
                    raise self._failed
                output.commit()
            except OSError as exc:
                raise AssayError(
                    f"cannot write the traces to {self._target}: {exc.strerror or exc} "
                    "(the file is left as it was)"
                ) from None

    def abandon(self) -> None:
        """Drop what was written (the process is ending before shutdown)."""
        with self._lock:
            _UNFINISHED.discard(self)
            output, self._output = self._output, None
            if output is not None:
                output.discard()


_UNFINISHED: weakref.WeakSet[OtlpJsonExporter] = weakref.WeakSet()
"""Files being written by an exporter not shut down yet."""


def _abandon_unfinished() -> None:
    """At exit, before the SDK shuts its providers down (which would put a half-written
    file in place): drop the files of exports that never finished."""
    for exporter in list(_UNFINISHED):
        exporter.abandon()


class _Ids:
    """An id generator that hands out the ids set just before each span starts."""

    def __init__(self) -> None:
        self.trace_id = 0
        self.span_id = 0

    def generate_trace_id(self) -> int:
        return self.trace_id

    def generate_span_id(self) -> int:
        return self.span_id

    def is_trace_id_random(self) -> bool:
        return False  # derived from the run, task and trial


class OtelEmitter:
    """Turns :class:`OutTrace` records into SDK spans sent to ``exporter``."""

    def __init__(
        self,
        exporter: SpanExporter,
        *,
        project: str = DEFAULT_PROJECT,
        batch: bool = True,
        resource: dict[str, Any] | None = None,
    ):
        _require()
        from openinference.semconv.resource import ResourceAttributes
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        assay_version = _assay_version()
        self._ids = _Ids()
        attributes = {
            "service.name": "assay",
            "service.version": assay_version,
            ResourceAttributes.PROJECT_NAME: project,  # the Phoenix project the spans go to
            **(resource or {}),
        }
        self.provider: TracerProvider = TracerProvider(
            resource=Resource.create(attributes),
            id_generator=self._ids,  # type: ignore[arg-type]
        )
        processor = (
            BatchSpanProcessor(
                exporter, max_queue_size=65536, max_export_batch_size=512, schedule_delay_millis=500
            )
            if batch
            else SimpleSpanProcessor(exporter)
        )
        self.provider.add_span_processor(processor)
        # Exit handlers run last registered first: this one, moved after the provider's own
        # (which shuts it down at exit), drops unfinished files before that would keep them.
        atexit.unregister(_abandon_unfinished)
        atexit.register(_abandon_unfinished)
        self._tracer = self.provider.get_tracer("assay.traces", assay_version)
        self._lock = threading.Lock()
        self.spans = 0

    def emit(self, trace: OutTrace) -> None:
        """Send the spans of one trace (root first)."""
        from opentelemetry import trace as api
        from opentelemetry.trace import Link, SpanContext, Status, StatusCode, TraceFlags

        flags = TraceFlags(TraceFlags.SAMPLED)
        run_link = SpanContext(trace.run_trace_id, trace.run_span_id, is_remote=True, trace_flags=flags)
        with self._lock:
            for s in trace.spans:
                context = None
                if s.parent is not None:
                    parent = SpanContext(
                        trace.trace_id, trace.span_id(s.parent), is_remote=False, trace_flags=flags
                    )
                    context = api.set_span_in_context(api.NonRecordingSpan(parent))
                self._ids.trace_id, self._ids.span_id = trace.trace_id, trace.span_id(s.key)
                links = (
                    [Link(run_link)] if s.parent is None and trace.run_trace_id != trace.trace_id else None
                )
                span = self._tracer.start_span(
                    s.name,
                    context=context,
                    kind=api.SpanKind.INTERNAL,
                    attributes=_clean(s.all_attributes()),
                    links=links,
                    start_time=s.start_ns,
                )
                if s.error is not None:
                    span.set_status(Status(StatusCode.ERROR, s.error[:2000]))
                    span.add_event("exception", {"exception.message": s.error[:8000]}, timestamp=s.end_ns)
                else:
                    span.set_status(Status(StatusCode.OK))
                span.end(end_time=s.end_ns)
                self.spans += 1

    def flush(self, timeout_s: float = 30.0) -> bool:
        return bool(self.provider.force_flush(int(timeout_s * 1000)))

    def shutdown(self) -> None:
        self.provider.shutdown()


def _assay_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("assay")
    except PackageNotFoundError:
        return "0"


def _clean(attributes: dict[str, Any]) -> dict[str, Any]:
    """OpenTelemetry attribute values: str, bool, int, float or lists of one of them."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, (str, bool, int, float)):
            out[key] = value
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            out[key] = list(value)
        else:
            out[key] = json.dumps(value, ensure_ascii=False, default=str)
    return out


def single_span_trace(span: OutSpan, trace_id: int) -> OutTrace:
    """A trace holding one span (the run span)."""
    return OutTrace(trace_id, [span], trace_id, 0)
