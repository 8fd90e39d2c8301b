"""Metrics: pure functions over trial results, and the typed run summary."""

from .frame import FrameExtras, TrialFrame
from .rag_summary import RAG_STAGES, GradeRow, grade_rows, rag_summary
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
    "RAG_STAGES",
    "SUMMARY_SCHEMA",
    "FrameExtras",
    "GradeRow",
    "GroupStats",
    "Interval",
    "RunHeader",
    "RunSummary",
    "TaskRow",
    "TrialFrame",
    "grade_rows",
    "passk_curves",
    "passk_matrix",
    "rag_summary",
    "run_header",
    "summarize",
    "summarize_frame",
    "summarize_run",
    "task_counts",
]
