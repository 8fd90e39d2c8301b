"""Traces in and out: runs exported as OpenTelemetry/OpenInference traces (to Arize
Phoenix or any OTLP endpoint, or an OTLP-JSON file), and recorded conversations
(OTLP-JSON, Phoenix span exports, a simple JSONL format) imported as replay tasks.
See docs/traces.md."""

from __future__ import annotations

from .export import ExportCounts, LiveTraces, TraceExporter, export_run_traces, redact_trace
from .outspan import OutSpan, OutTrace
from .spans import KINDS, REDACTED_ATTRIBUTE, run_span, trial_spans

__all__ = [
    "KINDS",
    "REDACTED_ATTRIBUTE",
    "ExportCounts",
    "LiveTraces",
    "OutSpan",
    "OutTrace",
    "TraceExporter",
    "export_run_traces",
    "redact_trace",
    "run_span",
    "trial_spans",
]
