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

from ..core.results import TrialResult
from ..metrics.summary_model import RunSummary
from ..runner.api import Run


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
    counted = [t.trials - t.excluded for t in summary.tasks]
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
                "tasks": sum(1 for n in counted if n >= int(k)),
            }
            for k, value in values.items()
        ]
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


def build_run_view(run: Run) -> dict[str, Any]:
    """Everything a run page or report section shows, as JSON-able data: the run's
    summary (its figures and intervals, unchanged) plus breakdowns of its trials."""
    summary = run.summary()
    results = run.results
    data = summary.to_dict()
    tasks = data["tasks"]
    for row, typed in zip(tasks, summary.tasks, strict=True):
        row["outcome"] = typed.outcome
    outcomes = Counter(row["outcome"] for row in tasks)
    return {
        "run_id": run.run_id,
        "label": f"{run.run_id} ({run.info.config.agent})",
        "summary": data,
        "headline": {
            "success": success_headline(summary),
            "curves": curve_points(summary),
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
