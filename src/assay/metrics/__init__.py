"""Metrics: pure functions over trial results."""

from .frame import FrameExtras, TrialFrame
from .passk import mean_over_tasks, pass_at_k, pass_hat_k
from .summary import passk_curves, summarize, summarize_frame, task_counts

__all__ = [
    "FrameExtras",
    "TrialFrame",
    "mean_over_tasks",
    "pass_at_k",
    "pass_hat_k",
    "passk_curves",
    "summarize",
    "summarize_frame",
    "task_counts",
]
