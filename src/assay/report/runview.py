"""What a run's report shows, as plain JSON-able data: the summary plus intervals,
distributions, failure breakdowns and one compact row per trial.

Shared by the one-file HTML report and the ``assay view`` web viewer, so both show the
same figures. Pure functions over a loaded :class:`~assay.runner.Run`.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.results import TrialResult
from ..runner.api import Run
from ..stats import bootstrap_ci, clustered_mean, wilson_interval
from ..stats.passk import pass_at_k, pass_hat_k

CONFIDENCE = 0.95
N_RESAMPLES = 1000


def _r(x: float | None, digits: int = 4) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), digits)


def task_outcome(rewards: Sequence[int | None]) -> str:
    """A task's outcome over its trials: pass (all counted trials passed), fail (none
    did), flaky (some did), excluded (no counted trial)."""
    counted = [r for r in rewards if r is not None]
    if not counted:
        return "excluded"
    if all(counted):
        return "pass"
    return "fail" if not any(counted) else "flaky"


def success_interval(results: Sequence[TrialResult]) -> dict[str, Any]:
    """Success rate over counted trials with a 95% interval that treats the task as the
    unit (trials of one task are correlated); Wilson when there is only one task."""
    counted = [r for r in results if r.reward is not None]
    n = len(counted)
    tasks = {r.task_id for r in counted}
    if n == 0:
        return {"value": None, "low": None, "high": None, "n": 0, "tasks": 0, "method": "none"}
    successes = sum(r.reward or 0 for r in counted)
    if len(tasks) >= 2:
        cm = clustered_mean([float(r.reward or 0) for r in counted], [r.task_id for r in counted], CONFIDENCE)
        low, high, method = max(0.0, cm.low), min(1.0, cm.high), "task-clustered"
    else:
        low, high = wilson_interval(successes, n, CONFIDENCE)
        method = "wilson"
    return {
        "value": _r(successes / n),
        "low": _r(low),
        "high": _r(high),
        "n": n,
        "successes": successes,
        "tasks": len(tasks),
        "method": method,
    }


def passk_intervals(results: Sequence[TrialResult], k_max: int) -> dict[str, list[dict[str, Any]]]:
    """pass^k and pass@k for k = 1..k_max, each with a bootstrap interval over tasks
    (tasks resampled; a task counts once k of its trials are counted)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in results:
        if r.reward is not None:
            counts[r.task_id][0] += 1
            counts[r.task_id][1] += r.reward
    out: dict[str, list[dict[str, Any]]] = {"pass_hat_k": [], "pass_at_k": []}
    for name, estimator in (("pass_hat_k", pass_hat_k), ("pass_at_k", pass_at_k)):
        for k in range(1, k_max + 1):
            values = [estimator(n, c, k) for n, c in counts.values() if n >= k]
            if not values:
                out[name].append({"k": k, "value": None, "low": None, "high": None, "tasks": 0})
                continue
            if len(values) >= 2 and len(set(values)) > 1:
                ci = bootstrap_ci(values, n_resamples=N_RESAMPLES, confidence=CONFIDENCE, seed=k)
                low, high = ci.low, ci.high
            else:
                low = high = float(np.mean(values))
            out[name].append(
                {
                    "k": k,
                    "value": _r(float(np.mean(values))),
                    "low": _r(low),
                    "high": _r(high),
                    "tasks": len(values),
                }
            )
    return out


def _failed_graders(r: TrialResult) -> list[str]:
    return [g.grader for g in r.grades if g.gating and g.passed is False]


def trial_rows(results: Sequence[TrialResult]) -> list[dict[str, Any]]:
    """One compact row per trial (no transcript): what tables and links need."""
    return [
        {
            "task_id": r.task_id,
            "trial": r.trial_index,
            "reward": r.reward,
            "outcome": "excluded" if r.reward is None else "pass" if r.reward == 1 else "fail",
            "termination": r.termination,
            "category": r.error_category,
            "root_cause": r.root_cause,
            "failed": _failed_graders(r),
            "latency_s": _r(r.latency_s, 4),
            "cost_usd": _r(r.cost_usd, 6),
            "tokens": None
            if r.input_tokens is None and r.output_tokens is None
            else (r.input_tokens or 0) + (r.output_tokens or 0),
        }
        for r in results
    ]


def failure_breakdown(results: Sequence[TrialResult]) -> dict[str, dict[str, int]]:
    """Failed trials by failure category and root-cause layer; excluded trials by
    root cause apart (they are not the agent's failures)."""
    failed = [r for r in results if r.reward == 0]
    excluded = [r for r in results if r.reward is None]
    graders: Counter[str] = Counter(g for r in failed for g in _failed_graders(r))
    return {
        "categories": dict(Counter(r.error_category or r.termination for r in failed).most_common()),
        "root_causes": dict(Counter(r.root_cause or "UNKNOWN" for r in failed).most_common()),
        "excluded_root_causes": dict(Counter(r.root_cause or "UNKNOWN" for r in excluded).most_common()),
        "graders": dict(graders.most_common()),
    }


def tokens_by_role(results: Sequence[TrialResult]) -> dict[str, dict[str, int]]:
    """Tokens per role where recorded: the agent (the trial's own token counts), other
    roles from trial metrics named ``<role>_input_tokens`` / ``<role>_output_tokens``,
    and LLM graders from their grade metrics ``input_tokens`` / ``output_tokens``."""
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        if r.input_tokens is not None:
            table["agent"]["input"] += r.input_tokens
        if r.output_tokens is not None:
            table["agent"]["output"] += r.output_tokens
        for key, value in r.metrics.items():
            for side in ("input", "output"):
                suffix = f"_{side}_tokens"
                if key.endswith(suffix) and key != suffix[1:]:
                    table[key[: -len(suffix)]][side] += int(value)
        for g in r.grades:
            for side in ("input", "output"):
                if f"{side}_tokens" in g.metrics:
                    table[f"grader:{g.grader}"][side] += int(g.metrics[f"{side}_tokens"])
    return {role: {"input": c["input"], "output": c["output"]} for role, c in sorted(table.items())}


def distributions(results: Sequence[TrialResult]) -> dict[str, list[float]]:
    """Per-trial latency and (where recorded) cost, for histograms."""
    return {
        "latency_s": [float(r.latency_s) for r in results],
        "cost_usd": [float(r.cost_usd) for r in results if r.cost_usd is not None],
    }


def build_run_view(run: Run, *, summary: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything a run page or report section shows, as JSON-able data."""
    summary = summary if summary is not None else run.summary()
    results = run.results
    k_max = run.info.trials_per_task
    tasks = summary["tasks"]
    for row in tasks:
        row["outcome"] = task_outcome(row["rewards"])
    outcomes = Counter(row["outcome"] for row in tasks)
    return {
        "run_id": run.run_id,
        "label": f"{run.run_id} ({run.info.config.agent})",
        "summary": summary,
        "headline": {
            "success": success_interval(results),
            "curves": passk_intervals(results, k_max),
            "task_outcomes": {k: outcomes.get(k, 0) for k in ("pass", "flaky", "fail", "excluded")},
        },
        "failures": failure_breakdown(results),
        "tokens_by_role": tokens_by_role(results),
        "distributions": distributions(results),
        "filters": {
            "stratum": sorted({t["stratum"] for t in tasks}),
            "split": sorted({t["split"] for t in tasks}),
            "tag": sorted({tag for t in tasks for tag in t["tags"]}),
            "outcome": [k for k in ("pass", "flaky", "fail", "excluded") if outcomes.get(k)],
        },
    }
