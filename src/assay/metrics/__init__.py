"""Metrics: pure functions over trial results."""

from .frame import FrameExtras, TrialFrame
from .passk import mean_over_tasks, pass_at_k, pass_hat_k
from .rag_summary import RAG_STAGES, GradeRow, grade_rows, rag_summary
from .summary import passk_curves, summarize, summarize_frame, task_counts

__all__ = [
    "RAG_STAGES",
    "FrameExtras",
    "GradeRow",
    "TrialFrame",
    "grade_rows",
    "mean_over_tasks",
    "pass_at_k",
    "pass_hat_k",
    "passk_curves",
    "rag_summary",
    "summarize",
    "summarize_frame",
    "task_counts",
]
