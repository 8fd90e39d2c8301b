"""Metrics: pure functions over trial results."""

from .passk import mean_over_tasks, pass_at_k, pass_hat_k
from .summary import capability_matrix, passk_curves, summarize, task_counts, task_table

__all__ = [
    "capability_matrix",
    "mean_over_tasks",
    "pass_at_k",
    "pass_hat_k",
    "passk_curves",
    "summarize",
    "task_counts",
    "task_table",
]
