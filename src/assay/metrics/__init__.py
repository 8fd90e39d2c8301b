"""Metrics: pure functions over trial results, and the typed run summary."""

from .frame import FrameExtras, TrialFrame
from .summary import (
    passk_curves,
    passk_matrix,
    run_header,
    summarize,
    summarize_frame,
    summarize_run,
    task_counts,
)
from .summary_model import (
    SUMMARY_SCHEMA,
    GroupStats,
    Interval,
    RunHeader,
    RunSummary,
    TaskRow,
)

__all__ = [
    "SUMMARY_SCHEMA",
    "FrameExtras",
    "GroupStats",
    "Interval",
    "RunHeader",
    "RunSummary",
    "TaskRow",
    "TrialFrame",
    "passk_curves",
    "passk_matrix",
    "run_header",
    "summarize",
    "summarize_frame",
    "summarize_run",
    "task_counts",
]
