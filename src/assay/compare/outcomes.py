"""What a trial and a task count as in a comparison: a counted trial's values, a task's
pass/fail from its trials (:data:`TaskOutcome`), and which way is better for each
metric assay knows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from ..core.results import TrialResult

BoolArray = npt.NDArray[np.bool_]

#: How a task's k trials become one pass/fail: ``all`` (every counted trial passed: the
#: task's pass^k, the default: the reliability a customer with one try sees),
#: ``majority`` (more than half passed; a tie fails) or ``any`` (pass@k).
TaskOutcome = Literal["majority", "all", "any"]

#: Per-trial values that mean "quality" in a box profile; not part of "within the box".
QUALITY_VALUES = frozenset({"success", "failure"})
#: Which way is better for the metrics assay knows; others are reported without a side.
DIRECTIONS: dict[str, str] = {
    "success": "higher",
    "success_rate": "higher",
    "quality": "higher",
    "failure": "lower",
    "cost_usd": "lower",
    "latency_s": "lower",
    "input_tokens": "lower",
    "output_tokens": "lower",
    "tool_precision": "higher",
    "tool_recall": "higher",
    "tool_errors": "lower",
    "invalid_calls": "lower",
    "redundant_calls": "lower",
}


def direction_of(metric: str) -> str | None:
    """``"higher"``/``"lower"`` when assay knows which way is better, else ``None``."""
    if metric.startswith("score."):
        return "higher"
    return DIRECTIONS.get(metric)


def trial_values(result: TrialResult) -> dict[str, float]:
    """Every number a counted trial carries: success/failure, cost, latency, tokens,
    process metrics and grader scores (``score.<grader>``). (One trial's view of what
    :class:`RunData` holds as columns.)"""
    if result.reward is None:
        return {}
    values: dict[str, float] = {
        "success": float(result.reward),
        "failure": 1.0 - float(result.reward),
        "latency_s": float(result.latency_s),
    }
    if result.cost_usd is not None:
        values["cost_usd"] = float(result.cost_usd)
    if result.input_tokens is not None:
        values["input_tokens"] = float(result.input_tokens)
    if result.output_tokens is not None:
        values["output_tokens"] = float(result.output_tokens)
    for key, value in result.metrics.items():
        values.setdefault(key, float(value))
    for grade in result.grades:
        if grade.score is not None and not grade.skipped:
            values[f"score.{grade.grader}"] = float(grade.score)
    return values


def task_passed(rewards: Sequence[float], rule: TaskOutcome = "all") -> bool:
    """A task's binary outcome from its counted trials' rewards (see :data:`TaskOutcome`)."""
    if not rewards:
        raise ValueError("a task outcome needs at least one counted trial")
    share = sum(rewards) / len(rewards)
    if rule == "majority":
        return share > 0.5
    if rule == "all":
        return share == 1.0
    if rule == "any":
        return share > 0.0
    raise ValueError(f"task outcome must be 'majority', 'all' or 'any', not {rule!r}")


def passed_tasks(successes: npt.ArrayLike, counted: npt.ArrayLike, rule: TaskOutcome = "all") -> BoolArray:
    """:func:`task_passed` for many tasks at once, from their success and trial counts."""
    c, n = np.asarray(successes), np.asarray(counted)
    if rule == "majority":
        return np.asarray(2 * c > n)
    if rule == "all":
        return np.asarray(c == n)
    if rule == "any":
        return np.asarray(c > 0)
    raise ValueError(f"task outcome must be 'majority', 'all' or 'any', not {rule!r}")
