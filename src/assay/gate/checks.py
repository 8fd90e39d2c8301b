"""Absolute, high-risk and harness-error checks: thresholds on one run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..core.results import TrialResult
from ..metrics.summary_model import RunSummary
from ..stats import wilson_interval
from .policy import AbsoluteCheck, GatePolicy, HighRiskGate
from .verdict import CheckResult, Status


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def absolute_check(check: AbsoluteCheck, summary: RunSummary, where: str) -> CheckResult:
    """``min <= value <= max`` on the run summary's number at ``check.metric``."""
    name = check.name or check.metric
    bounds = " and ".join(
        b
        for b in (
            f">= {_fmt(check.min)}" if check.min is not None else "",
            f"<= {_fmt(check.max)}" if check.max is not None else "",
        )
        if b
    )
    value, why = summary.value_at(check.metric)
    if why is not None:
        return CheckResult(
            "absolute", name, "fail", f"cannot check {check.metric}: {why}", None, bounds, where
        )
    if not isinstance(value, (int, float)):
        return CheckResult("absolute", name, "fail", f"{check.metric} is not a number", None, bounds, where)
    low_ok = check.min is None or value >= check.min
    high_ok = check.max is None or value <= check.max
    status: Status = "pass" if low_ok and high_ok else "fail"
    verb = "meets" if status == "pass" else "misses"
    return CheckResult(
        "absolute",
        name,
        status,
        f"{check.metric} = {_fmt(value)} {verb} {bounds}",
        float(value),
        bounds,
        where,
    )


def failure_reasons(trials: Sequence[TrialResult]) -> list[str]:
    """One line per failed trial: the failing gating graders' reasons, or how it ended."""
    lines = []
    for r in sorted(trials, key=lambda t: t.trial_index):
        if r.reward != 0:
            continue
        failed = [g for g in r.grades if g.gating and g.passed is False]
        vetoes = [g for g in r.grades if g.veto and g not in failed]
        parts = [f"{g.grader}: {g.reason or 'failed'}" for g in failed + vetoes]
        if not parts:
            parts = [f"ended with {r.termination}"]
        lines.append(f"trial {r.trial_index}: " + "; ".join(parts))
    return lines


def high_risk_check(
    gate: HighRiskGate, summary: RunSummary, reasons: Callable[[str], list[str]], where: str
) -> CheckResult:
    """Every selected task judged on its own (pass^k per task) and/or their pooled rate;
    ``reasons(task_id)`` gives the failure reasons of a failing task's trials."""
    k = summary.trials_k()
    tags = set(gate.tags)
    chosen = {
        t.task_id: t
        for t in summary.tasks
        if (gate.stratum and t.stratum == gate.stratum) or tags & set(t.tags)
    }
    label = " or ".join(
        x
        for x in (
            (f"stratum {gate.stratum}" if gate.stratum else ""),
            (f"tags {sorted(tags)}" if tags else ""),
        )
        if x
    )
    parts = []
    if gate.each_task_min_pass_hat_k is not None:
        parts.append(f"each task pass^{k} >= {_fmt(gate.each_task_min_pass_hat_k)}")
    if gate.min_success_rate is not None:
        parts.append(f"success rate >= {_fmt(gate.min_success_rate)}")
    threshold = " and ".join(parts)
    if len(chosen) < gate.min_tasks:
        return CheckResult(
            "high_risk",
            "high-risk tasks",
            "fail",
            f"the run has {len(chosen)} task(s) in {label}, fewer than the {gate.min_tasks} the gate needs",
            None,
            threshold,
            where,
        )
    failing: list[dict[str, Any]] = []
    successes = counted = 0
    for task_id in sorted(chosen):
        row = chosen[task_id]
        n, c = row.trials - row.excluded, row.successes
        successes, counted = successes + c, counted + n
        value = row.pass_hat_k.get(str(min(n, k))) if n else None
        if gate.each_task_min_pass_hat_k is not None and (
            value is None or value < gate.each_task_min_pass_hat_k
        ):
            failing.append(
                {
                    "task_id": task_id,
                    "successes": c,
                    "trials": n,
                    "pass_hat_k": value,
                    "reasons": reasons(task_id) or ["no counted trial (harness or environment errors)"],
                }
            )
    rate = successes / counted if counted else None
    details: dict[str, Any] = {
        "tasks": len(chosen),
        "trials": counted,
        "success_rate": rate,
        "failing_tasks": failing,
    }
    if counted:
        details["success_rate_ci"] = list(wilson_interval(successes, counted))
    problems = []
    if failing:
        problems.append(
            f"{len(failing)} of {len(chosen)} task(s) fail pass^{k}: "
            + ", ".join(f["task_id"] for f in failing[:5])
            + (" ..." if len(failing) > 5 else "")
        )
    if gate.min_success_rate is not None and (rate is None or rate < gate.min_success_rate):
        problems.append(
            f"success rate {'n/a' if rate is None else f'{rate:.1%}'} < {gate.min_success_rate:.1%}"
        )
    if problems:
        return CheckResult(
            "high_risk",
            "high-risk tasks",
            "fail",
            f"{label}: " + "; ".join(problems),
            rate,
            threshold,
            where,
            details,
        )
    return CheckResult(
        "high_risk",
        "high-risk tasks",
        "pass",
        f"{label}: all {len(chosen)} task(s) hold ({successes}/{counted} trials passed)",
        rate,
        threshold,
        where,
        details,
    )


def harness_error_check(policy: GatePolicy, summary: RunSummary, where: str) -> CheckResult:
    """The share of trials excluded as not the agent's doing stays under the cap."""
    cap = policy.max_harness_error_share
    assert cap is not None
    excluded = summary.excluded
    total = summary.overall.trials
    share = excluded.trials / total if total else 0.0
    status: Status = "pass" if share <= cap else "fail"
    by = ", ".join(f"{k} {v}" for k, v in excluded.by_termination.items()) or "none"
    return CheckResult(
        "harness_errors",
        "harness-error share",
        status,
        f"{excluded.trials} of {total} trials ({share:.1%}) ended in harness, environment or grader "
        f"errors ({by}); cap {cap:.1%}",
        share,
        f"<= {_fmt(cap)}",
        where,
        {"by_termination": excluded.by_termination},
    )
