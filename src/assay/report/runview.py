"""What a run's report shows, as plain JSON-able data: the summary plus intervals,
distributions, failure breakdowns and one compact row per trial.

Shared by the one-file HTML report and the ``assay view`` web viewer, so both show the
same figures. Pure functions over a run's columns (:class:`~assay.metrics.TrialFrame`)
and SQL aggregates (:class:`~assay.metrics.FrameExtras`): no object per trial.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.results import TrialResult
from ..metrics.frame import FrameExtras, TrialFrame
from ..metrics.summary_model import RunSummary, TaskRow
from ..runner.stored import Run


def _r(x: float | None, digits: int = 4) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), digits)


def success_headline(summary: RunSummary) -> dict[str, Any]:
    """The run's success rate with its interval, as the summary computed it (one method
    everywhere: the console, JSON, HTML report and viewer show the same numbers)."""
    o = summary.overall
    return {
        "value": o.success_rate,
        "low": o.success_rate_ci[0],
        "high": o.success_rate_ci[1],
        "n": summary.counted_trials(),
        "successes": o.successes,
        "tasks": o.tasks,
        "method": "task-clustered Wilson",
    }


def curve_points(summary: RunSummary) -> dict[str, list[dict[str, Any]]]:
    """pass^k and pass@k for k = 1..K with the summary's intervals, and how many tasks
    (with at least k counted trials) each averages."""
    o = summary.overall
    counted = np.sort(np.array([t.trials - t.excluded for t in summary.tasks], dtype=np.int64))

    def at_least(k: int) -> int:  # tasks with at least k counted trials
        return int(counted.size - np.searchsorted(counted, k, side="left"))

    out: dict[str, list[dict[str, Any]]] = {}
    for name, values, cis in (
        ("pass_hat_k", o.pass_hat_k, o.pass_hat_k_ci),
        ("pass_at_k", o.pass_at_k, o.pass_at_k_ci),
    ):
        out[name] = [
            {
                "k": int(k),
                "value": value,
                "low": cis.get(k, (None, None))[0],
                "high": cis.get(k, (None, None))[1],
                "tasks": at_least(int(k)),
            }
            for k, value in values.items()
        ]
    return out


def _failed_graders(r: TrialResult) -> list[str]:
    return [g.grader for g in r.grades if g.gating and g.passed is False]


def _row(
    task_id: str,
    trial: int,
    reward: float | None,
    termination: str,
    category: str | None,
    root_cause: str | None,
    failed: list[str],
    latency: float,
    cost: float | None,
    t_in: float | None,
    t_out: float | None,
) -> dict[str, Any]:
    known = [t for t in (t_in, t_out) if t is not None and t == t]
    return {
        "task_id": task_id,
        "trial": trial,
        "reward": reward,
        "outcome": "excluded" if reward is None else "pass" if reward == 1 else "fail",
        "termination": termination,
        "category": category,
        "root_cause": root_cause,
        "failed": failed,
        "latency_s": _r(latency, 4),
        "cost_usd": _r(cost, 6),
        "tokens": int(sum(known)) if known else None,
    }


def trial_rows(results: Sequence[TrialResult]) -> list[dict[str, Any]]:
    """One compact row per trial (no transcript): what tables and links need."""
    return [
        _row(
            r.task_id,
            r.trial_index,
            r.reward,
            r.termination,
            r.error_category,
            r.root_cause,
            _failed_graders(r),
            r.latency_s,
            r.cost_usd,
            r.input_tokens,
            r.output_tokens,
        )
        for r in results
    ]


def frame_rows(
    frame: TrialFrame, rows: npt.ArrayLike, failed: dict[tuple[str, int], list[str]]
) -> list[dict[str, Any]]:
    """:func:`trial_rows` of the frame's rows ``rows`` (positions), from columns;
    ``failed`` gives the gating graders that failed each trial."""
    out = []
    category = frame.error_category
    for i in np.asarray(rows, dtype=np.intp).tolist():
        task_id, index = frame.task_ids[frame.task[i]], int(frame.trial_index[i])
        reward = frame.reward[i]
        out.append(
            _row(
                task_id,
                index,
                None if reward != reward else int(reward),
                frame.termination[i],
                None if category is None else category[i],
                frame.root_cause[i],
                failed.get((task_id, index), []),
                float(frame.latency_s[i]),
                float(frame.cost_usd[i]),
                float(frame.input_tokens[i]),
                float(frame.output_tokens[i]),
            )
        )
    return out


def _counts(values: npt.NDArray[Any]) -> dict[str, int]:
    names, counts = np.unique(np.asarray(values, dtype=object).astype(str), return_counts=True)
    pairs = sorted(zip(names.tolist(), counts.tolist(), strict=True), key=lambda kv: -kv[1])
    return {str(k): int(v) for k, v in pairs}


def _either(values: npt.NDArray[Any], fallback: npt.NDArray[Any] | str) -> npt.NDArray[Any]:
    """``values`` where not None, else ``fallback``."""
    missing = np.fromiter((v is None for v in values.tolist()), dtype=bool, count=values.size)
    return np.where(missing, fallback, values)


def failure_breakdown(frame: TrialFrame, extras: FrameExtras) -> dict[str, dict[str, int]]:
    """Failed trials by failure category and root-cause layer; excluded trials by
    root cause apart (they are not the agent's failures); the gating graders that
    failed trials. Most frequent first."""
    failed = frame.reward == 0
    excluded = np.isnan(frame.reward)
    category = frame.error_category if frame.error_category is not None else np.full(len(frame), None)
    return {
        "categories": _counts(_either(category[failed], frame.termination[failed])),
        "root_causes": _counts(_either(frame.root_cause[failed], "UNKNOWN")),
        "excluded_root_causes": _counts(_either(frame.root_cause[excluded], "UNKNOWN")),
        "graders": dict(extras.failed_graders),
    }


def tokens_by_role(frame: TrialFrame, extras: FrameExtras) -> dict[str, dict[str, int]]:
    """Tokens per role where recorded: from the model usage the trials reported per role
    (agent, user, judge) when there is any, else the trials' own token counts as the
    agent's; plus roles from trial metrics named ``<role>_input_tokens`` /
    ``<role>_output_tokens``."""
    table: dict[str, dict[str, int]] = {}
    if extras.usage_by_role:
        for role, u in extras.usage_by_role.items():
            table[role] = {"input": int(u.get("input_tokens", 0)), "output": int(u.get("output_tokens", 0))}
    else:
        t_in, t_out = frame.input_tokens, frame.output_tokens
        if (~np.isnan(t_in)).any() or (~np.isnan(t_out)).any():
            table["agent"] = {"input": int(np.nansum(t_in)), "output": int(np.nansum(t_out))}
    for key, total in extras.process_totals.items():
        for side in ("input", "output"):
            suffix = f"_{side}_tokens"
            if key.endswith(suffix) and key != suffix[1:]:
                counts = table.setdefault(key[: -len(suffix)], {"input": 0, "output": 0})
                counts[side] += int(total)
    return dict(sorted(table.items()))


def distributions(frame: TrialFrame) -> dict[str, npt.NDArray[np.float64]]:
    """Per-trial latency and (where recorded) cost, for histograms."""
    return {
        "latency_s": frame.latency_s,
        "cost_usd": frame.cost_usd[~np.isnan(frame.cost_usd)],
    }


def lowest_first(tasks: Sequence[TaskRow], limit: int) -> list[TaskRow]:
    """The ``limit`` tasks of lowest success rate (tasks with no counted trial first),
    ties by id: the task rows a bounded report embeds."""
    return sorted(tasks, key=lambda t: (-1.0 if t.success_rate is None else t.success_rate, t.task_id))[
        :limit
    ]


def build_run_view(run: Run, task_rows: int | None = None) -> dict[str, Any]:
    """Everything a run page or report section shows, as JSON-able data (but the
    ``distributions``, numpy arrays for the charts): the run's summary (its figures and
    intervals, unchanged) plus breakdowns of its trials, all from columns and SQL
    aggregates. ``all_tasks`` counts the run's tasks; with ``task_rows``, a run of more
    tasks has only that many rows in its summary's task table, chosen by
    :func:`lowest_first` and in that order (the rest are not made into JSON at all)."""
    summary = run.summary()
    frame, extras = run.frame(), run.extras()
    typed = summary.tasks
    if task_rows is not None and len(typed) > task_rows:
        typed = lowest_first(typed, task_rows)
        data = summary.model_copy(update={"tasks": typed}).to_dict()
    else:
        data = summary.to_dict()
    tasks = data["tasks"]
    for row, typed_row in zip(tasks, typed, strict=True):
        row["outcome"] = typed_row.outcome
    every = summary.tasks
    outcomes = (
        Counter(row["outcome"] for row in tasks) if typed is every else Counter(t.outcome for t in every)
    )
    return {
        "run_id": run.run_id,
        "all_tasks": len(every),
        "label": f"{run.run_id} ({run.info.config.agent})",
        "summary": data,
        "headline": {
            "success": success_headline(summary),
            "curves": curve_points(summary),
            "task_outcomes": {k: outcomes.get(k, 0) for k in ("pass", "flaky", "fail", "excluded")},
        },
        "failures": failure_breakdown(frame, extras),
        "tokens_by_role": tokens_by_role(frame, extras),
        "distributions": distributions(frame),
        "filters": {
            "stratum": sorted({t.stratum for t in every}),
            "split": sorted({t.split for t in every}),
            "tag": sorted({tag for t in every for tag in t.tags}),
            "outcome": [k for k in ("pass", "flaky", "fail", "excluded") if outcomes.get(k)],
        },
    }
