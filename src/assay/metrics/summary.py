"""A run's summary: rates, pass^k / pass@k curves, breakdowns, per-task table.

Pure functions over trial results and task metadata. Trials whose reward is None
(harness, environment or grader errors) are excluded from every rate and counted
apart, so they never count as agent failures.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..core.results import TaskMeta, TrialResult
from ..stats.clustered import clustered_rate_interval
from .passk import mean_over_tasks, pass_at_k, pass_hat_k


def _rate(values: Sequence[int]) -> float | None:
    return sum(values) / len(values) if values else None


def _round(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(float(x), digits)


def task_counts(results: Iterable[TrialResult]) -> dict[str, tuple[int, int]]:
    """task id -> (valid trials, successes)."""
    n: Counter[str] = Counter()
    c: Counter[str] = Counter()
    for r in results:
        if r.reward is not None:
            n[r.task_id] += 1
            c[r.task_id] += r.reward
    return {t: (n[t], c[t]) for t in n}


def _interval(values: Sequence[float], clusters: Sequence[str]) -> list[float | None]:
    if not values:
        return [None, None]
    r = clustered_rate_interval(values, clusters)
    return [_round(r.low), _round(r.high)]


def passk_curves(counts: dict[str, tuple[int, int]], k_max: int) -> dict[str, dict[str, Any]]:
    """pass^k and pass@k averaged over tasks, for k = 1..k_max, each with a 95%
    interval (Wilson over the tasks that have k trials; see clustered_rate_interval)."""
    out: dict[str, dict[str, Any]] = {
        "pass_hat_k": {},
        "pass_at_k": {},
        "pass_hat_k_ci": {},
        "pass_at_k_ci": {},
    }
    for name, estimator in (("pass_hat_k", pass_hat_k), ("pass_at_k", pass_at_k)):
        for k in range(1, k_max + 1):
            per_task = {t: estimator(n, c, k) for t, (n, c) in counts.items() if n >= k}
            out[name][str(k)] = _round(mean_over_tasks(counts.values(), k, estimator)[0])
            out[f"{name}_ci"][str(k)] = _interval(list(per_task.values()), list(per_task))
    return out


def _group(results: Sequence[TrialResult], k_max: int) -> dict[str, Any]:
    counted = [r for r in results if r.reward is not None]
    valid = [r.reward for r in counted if r.reward is not None]
    counts = task_counts(results)
    return {
        "tasks": len({r.task_id for r in results}),
        "trials": len(results),
        "excluded": len(results) - len(valid),
        "successes": int(sum(valid)),
        "success_rate": _round(_rate(valid)),
        "success_rate_ci": _interval(valid, [r.task_id for r in counted]),
        **passk_curves(counts, k_max),
    }


def percentiles(values: Sequence[float], qs: Sequence[int] = (50, 95, 99)) -> dict[str, float | None]:
    if not values:
        return {f"p{q}": None for q in qs}
    arr = np.asarray(values, dtype=float)
    return {f"p{q}": _round(float(np.percentile(arr, q)), 6) for q in qs}


def usage_summary(results: Sequence[TrialResult]) -> dict[str, Any]:
    latencies = [r.latency_s for r in results]
    costs = [r.cost_usd for r in results if r.cost_usd is not None]
    tokens_in = [r.input_tokens for r in results if r.input_tokens is not None]
    tokens_out = [r.output_tokens for r in results if r.output_tokens is not None]
    return {
        "latency_s": {
            "mean": _round(float(np.mean(latencies)), 6) if latencies else None,
            **percentiles(latencies),
        },
        "cost_usd": {
            "total": _round(sum(costs), 6) if costs else None,
            "mean": _round(sum(costs) / len(costs), 6) if costs else None,
            "trials_with_cost": len(costs),
        },
        "tokens": {
            "input": sum(tokens_in) if tokens_in else None,
            "output": sum(tokens_out) if tokens_out else None,
            "trials_with_usage": len(tokens_in),
        },
        "by_role": _usage_by_role(results),
    }


def _usage_by_role(results: Sequence[TrialResult]) -> dict[str, dict[str, Any]]:
    """Model calls, tokens, cost and retries per role (agent, user, judge)."""
    roles: dict[str, dict[str, Any]] = {}
    for r in results:
        for role, u in r.usage.items():
            acc = roles.setdefault(
                role,
                {
                    "calls": 0,
                    "input_tokens": 0,
                    "output_tokens": 0,
                    "cache_read_tokens": 0,
                    "cost_usd": 0.0,
                    "retries": 0,
                    "cached_calls": 0,
                    "missing_usage": 0,
                    "unpriced_trials": 0,
                },
            )
            for key in (
                "calls",
                "input_tokens",
                "output_tokens",
                "cache_read_tokens",
                "retries",
                "cached_calls",
                "missing_usage",
            ):
                acc[key] += u.get(key) or 0
            if u.get("cost_usd") is None:
                acc["unpriced_trials"] += 1
            else:
                acc["cost_usd"] += u["cost_usd"]
    for acc in roles.values():
        acc["cost_usd"] = (
            None if acc["unpriced_trials"] and not acc["cost_usd"] else _round(acc["cost_usd"], 6)
        )
    return dict(sorted(roles.items()))


def process_summary(results: Sequence[TrialResult]) -> dict[str, float | None]:
    keys = sorted({k for r in results for k in r.metrics})
    out: dict[str, float | None] = {}
    for key in keys:
        values = [r.metrics[key] for r in results if key in r.metrics]
        out[f"mean_{key}"] = _round(sum(values) / len(values)) if values else None
    return out


def grader_summary(results: Sequence[TrialResult]) -> dict[str, dict[str, int]]:
    """Per grader: how many trials it passed, failed, skipped, needs review."""
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        for g in r.grades:
            row = table[g.grader]
            row[
                "skipped"
                if g.skipped
                else "passed"
                if g.passed
                else "failed"
                if g.passed is False
                else "no_verdict"
            ] += 1
            row["needs_review"] += g.needs_review
    return {name: dict(sorted(c.items())) for name, c in sorted(table.items())}


def capability_matrix(
    results: Sequence[TrialResult], tasks: dict[str, TaskMeta]
) -> dict[str, dict[str, Any]]:
    """tag -> difficulty -> {trials, success_rate}: where the weak skill is."""
    cells: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        meta = tasks.get(r.task_id)
        if meta is None or r.reward is None:
            continue
        for tag in meta.tags:
            cells[tag][meta.difficulty].append(r.reward)
    return {
        tag: {str(d): {"trials": len(v), "success_rate": _round(_rate(v))} for d, v in sorted(by_d.items())}
        for tag, by_d in sorted(cells.items())
    }


def task_table(
    results: Sequence[TrialResult], tasks: dict[str, TaskMeta], k_max: int
) -> list[dict[str, Any]]:
    by_task: dict[str, list[TrialResult]] = defaultdict(list)
    for r in results:
        by_task[r.task_id].append(r)
    rows = []
    for task_id in sorted(set(tasks) | set(by_task)):
        meta = tasks.get(task_id, TaskMeta(task_id))
        trials = sorted(by_task.get(task_id, []), key=lambda r: r.trial_index)
        valid = [r.reward for r in trials if r.reward is not None]
        n, c = len(valid), int(sum(valid))
        failures: Counter[str] = Counter()
        for r in trials:
            if r.reward == 0:
                failed = [g.grader for g in r.grades if g.gating and g.passed is False] or [r.termination]
                failures.update(failed)
        rows.append(
            {
                "task_id": task_id,
                "stratum": meta.stratum,
                "split": meta.split,
                "tags": list(meta.tags),
                "difficulty": meta.difficulty,
                "trials": len(trials),
                "excluded": len(trials) - n,
                "successes": c,
                "success_rate": _round(c / n) if n else None,
                "pass_hat_k": {str(k): _round(pass_hat_k(n, c, k)) for k in range(1, min(n, k_max) + 1)},
                "rewards": [r.reward for r in trials],
                "terminations": dict(Counter(r.termination for r in trials)),
                "failures": dict(failures.most_common()),
            }
        )
    return rows


def summarize(results: Sequence[TrialResult], tasks: Sequence[TaskMeta], k_max: int) -> dict[str, Any]:
    """Everything a run's report shows, as plain JSON-able data."""
    meta = {t.task_id: t for t in tasks}

    def by(attr: str) -> dict[str, Any]:
        groups: dict[str, list[TrialResult]] = defaultdict(list)
        for r in results:
            if r.task_id in meta:
                groups[getattr(meta[r.task_id], attr)].append(r)
        return {key: _group(rs, k_max) for key, rs in sorted(groups.items())}

    tag_groups: dict[str, list[TrialResult]] = defaultdict(list)
    for r in results:
        for tag in meta.get(r.task_id, TaskMeta(r.task_id)).tags:
            tag_groups[tag].append(r)
    excluded = [r for r in results if r.reward is None]
    return {
        "overall": _group(results, k_max),
        "excluded": {
            "trials": len(excluded),
            "share": _round(len(excluded) / len(results)) if results else None,
            "by_termination": dict(Counter(r.termination for r in excluded)),
            "by_root_cause": dict(Counter(r.root_cause or "UNKNOWN" for r in excluded)),
        },
        "terminations": dict(sorted(Counter(r.termination for r in results).items())),
        "by_stratum": by("stratum"),
        "by_split": by("split"),
        "by_tag": {tag: _group(rs, k_max) for tag, rs in sorted(tag_groups.items())},
        "capability_matrix": capability_matrix(results, meta),
        "graders": grader_summary(results),
        "process": process_summary(results),
        "usage": usage_summary(results),
        "tasks": task_table(results, meta, k_max),
    }
