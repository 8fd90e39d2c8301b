"""Exporting runs as OpenTelemetry traces: a stored run (``assay export-traces``) or a
run as it goes (``assay run --otel-endpoint URL``). One trace per trial, plus one for
the run; what carries text is redacted first unless asked otherwise (docs/traces.md)."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.results import RunInfo, TrialResult
from ..core.transcript import Transcript
from ..redact import Redactor
from ..store.store import Store
from .otel import DEFAULT_PROJECT, OtelEmitter, OtlpJsonExporter, http_exporter, single_span_trace
from .outspan import OutTrace, run_trace_id
from .spans import REDACTED_ATTRIBUTE, run_span, trial_spans

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter

log = logging.getLogger("assay.traces")


@dataclass
class ExportCounts:
    """What an export sent: traces (trials), spans, redacted spans and values."""

    traces: int = 0
    spans: int = 0
    redacted_spans: int = 0
    redacted_values: int = 0
    redacted_kinds: dict[str, int] = field(default_factory=dict)
    failed_batches: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "traces": self.traces,
            "spans": self.spans,
            "redacted_spans": self.redacted_spans,
            "redacted_values": self.redacted_values,
            "redacted_kinds": dict(sorted(self.redacted_kinds.items())),
            "failed_batches": self.failed_batches,
        }


def redact_trace(trace: OutTrace, redactor: Redactor, counts: ExportCounts | None = None) -> int:
    """Redact the content of every span of a trace with one set of pseudonyms (values
    under personal keys in a tool output are replaced where they recur in a message),
    flag the spans whose content changed; returns the number of values replaced."""
    session = redactor.session()
    before = [[s.content, s.error] for s in trace.spans]
    after = session.redact(before)
    for span, old, new in zip(trace.spans, before, after, strict=True):
        if new != old:
            span.content, span.error = new[0], new[1]
            span.attributes[REDACTED_ATTRIBUTE] = True
            if counts is not None:
                counts.redacted_spans += 1
    total = sum(session.counts.values())
    root = trace.spans[0]
    root.attributes["assay.redacted_values"] = total
    if counts is not None:
        counts.redacted_values += total
        for kind, n in session.counts.items():
            counts.redacted_kinds[kind] = counts.redacted_kinds.get(kind, 0) + n
    return total


class _Counting:
    """Wraps a span exporter to count batches it failed to send (never raises)."""

    def __init__(self, inner: SpanExporter, counts: ExportCounts):
        self.inner, self.counts = inner, counts

    def export(self, spans: Sequence[ReadableSpan]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self.inner.export(spans)
        except Exception as exc:  # an unreachable endpoint is reported, never fatal
            log.warning("exporting %d spans failed: %s", len(spans), exc)
            result = SpanExportResult.FAILURE
        if result != SpanExportResult.SUCCESS:
            self.counts.failed_batches += 1
        return result

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))

    def shutdown(self) -> None:
        self.inner.shutdown()


class TraceExporter:
    """Sends trials as traces to an OTLP endpoint or an OTLP-JSON file.

    ``redact`` (default on): a :class:`~assay.redact.Redactor` (or ``True`` for the
    default one) applied to each trial's content before it leaves; ``secrets`` are
    known credential values removed too."""

    def __init__(
        self,
        *,
        endpoint: str | None = None,
        path: str | Path | None = None,
        project: str | None = None,
        redact: bool | Redactor = True,
        secrets: Sequence[str] = (),
        batch: bool = True,
    ):
        if (endpoint is None) == (path is None):
            raise ValueError("give exactly one of endpoint and path")
        self.counts = ExportCounts()
        inner: Any = http_exporter(endpoint) if endpoint is not None else OtlpJsonExporter(path)  # type: ignore[arg-type]
        self.target = endpoint or str(path)
        project = project or os.environ.get("PHOENIX_PROJECT_NAME") or DEFAULT_PROJECT
        self.emitter = OtelEmitter(_Counting(inner, self.counts), project=project, batch=batch)  # type: ignore[arg-type]
        if isinstance(redact, Redactor):
            self.redactor: Redactor | None = redact
        else:
            self.redactor = Redactor(secrets=list(secrets)) if redact else None

    def add(self, info: RunInfo, result: TrialResult, transcript: Transcript | None = None) -> None:
        """Export one trial (its transcript: ``transcript``, else the result's own)."""
        trace = trial_spans(info, result, transcript if transcript is not None else result.transcript)
        if self.redactor is not None:
            redact_trace(trace, self.redactor, self.counts)
        self.emitter.emit(trace)
        self.counts.traces += 1
        self.counts.spans += len(trace.spans)

    def add_run(self, info: RunInfo, results: list[TrialResult] | None = None) -> None:
        """Export the run's own span (the trials link to it)."""
        span = run_span(info, results)
        trace = single_span_trace(span, run_trace_id(info.run_id))
        if self.redactor is not None:
            redact_trace(trace, self.redactor, self.counts)
        self.emitter.emit(trace)
        self.counts.spans += 1

    def close(self) -> ExportCounts:
        """Send what waits and stop."""
        self.emitter.flush()
        self.emitter.shutdown()
        return self.counts


def export_run_traces(store: Store, run_id: str, exporter: TraceExporter) -> ExportCounts:
    """Export every trial of a stored run (task by task: memory holds one task's
    trials), then the run span; closes the exporter."""
    info = store.get_run(run_id)
    results: list[TrialResult] = []
    for task_id in store.task_ids(run_id):
        transcripts = store.load_transcripts(run_id, task_id)
        for result in store.load_results(run_id, task_id):
            exporter.add(info, result, transcripts.get(result.trial_index))
            results.append(result)
    exporter.add_run(info, results)
    return exporter.close()


class LiveTraces:
    """The live export of a run (``otel_endpoint`` in the run spec): each trial as it is
    stored (called from the store writer's thread, off the event loop), the run span at
    the end. An unreachable endpoint costs the run nothing but a warning."""

    def __init__(self, endpoint: str, info: RunInfo, secrets: Sequence[str] = ()):
        self.info = info
        self.exporter = TraceExporter(endpoint=endpoint, secrets=secrets)
        self._results: list[TrialResult] = []

    def add(self, result: TrialResult) -> None:
        try:
            self.exporter.add(self.info, result)
        except Exception as exc:  # never stop a run for its traces
            log.warning("trace export of %s#%d failed: %s", result.task_id, result.trial_index, exc)
            return
        self._results.append(_light(result))

    def close(self, info: RunInfo | None = None) -> ExportCounts:
        try:
            self.exporter.add_run(info or self.info, self._results)
        except Exception as exc:
            log.warning("trace export of the run span failed: %s", exc)
        return self.exporter.close()


def _light(result: TrialResult) -> TrialResult:
    """What the run span needs of a trial (rewards), without its transcript."""
    from dataclasses import replace

    return replace(result, transcript=None, outcome=None, grades=[])
