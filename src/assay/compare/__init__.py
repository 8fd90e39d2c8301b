"""Paired comparisons of runs, planning, and adaptive (sequential) trials.

- :func:`compare_runs`: baseline vs candidates on one suite version: McNemar on task
  outcomes, sign-flip tests and bootstrap intervals for cost, latency, process metrics
  and grader scores, multiplicity adjustment, per-slice deltas, flipped tasks, box
  scores with sensitivity, and a plain-language decision line.
- :func:`plan`: sample sizes and detectable differences for a suite of tasks × trials.
- :func:`run_until_decided`: run a candidate in rounds until a sequential test decides.

See docs/statistics.md ("Comparing runs", "Planning") and docs/box-score.md.
"""

from typing import TYPE_CHECKING, Any

from .boxes import BoxResult, default_profile, resolve_profile, score_runs
from .breakdown import FlippedTask, GroupDelta, detectable_difference, flipped_tasks, group_deltas
from .comparison import ADJUST_METHODS, Comparison, PairResult, compare_runs
from .decision import Decision, decide, format_p
from .outcomes import DIRECTIONS, TaskOutcome, direction_of, task_passed, trial_values
from .paired import MetricRow, continuous_row, quality_row
from .pairing import MatchBy, Pairing, RunData, Unit, pair_runs
from .planning import Plan, design_effect, plan, task_icc
from .sequential import (
    SequentialDesign,
    SequentialState,
    design_paired,
    design_rate,
    msprt_path,
    operating_characteristic,
    paired_path,
    rate_path,
    theta_for,
)

if TYPE_CHECKING:
    from .adaptive import AdaptiveResult, RoundReport, run_until_decided, run_until_decided_async

_ADAPTIVE = ("AdaptiveResult", "RoundReport", "run_until_decided", "run_until_decided_async")


def __getattr__(name: str) -> Any:
    """The adaptive runs' names, imported on first use: they need the runner (executor,
    orchestrator, environments), which ``compare`` and ``report`` of stored runs do not."""
    if name in _ADAPTIVE:
        from . import adaptive

        return getattr(adaptive, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ADJUST_METHODS",
    "DIRECTIONS",
    "AdaptiveResult",
    "BoxResult",
    "Comparison",
    "Decision",
    "FlippedTask",
    "GroupDelta",
    "MatchBy",
    "MetricRow",
    "PairResult",
    "Pairing",
    "Plan",
    "RoundReport",
    "RunData",
    "SequentialDesign",
    "SequentialState",
    "TaskOutcome",
    "Unit",
    "compare_runs",
    "continuous_row",
    "decide",
    "default_profile",
    "design_effect",
    "design_paired",
    "design_rate",
    "detectable_difference",
    "direction_of",
    "flipped_tasks",
    "format_p",
    "group_deltas",
    "msprt_path",
    "operating_characteristic",
    "pair_runs",
    "paired_path",
    "plan",
    "quality_row",
    "rate_path",
    "resolve_profile",
    "run_until_decided",
    "run_until_decided_async",
    "score_runs",
    "task_icc",
    "task_passed",
    "theta_for",
    "trial_values",
]
