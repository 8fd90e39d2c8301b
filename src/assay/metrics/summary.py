"""A run's summary: rates with intervals, pass^k / pass@k curves, breakdowns by
stratum, split and tag, the capability matrix, usage, the per-task table.

Pure functions over a :class:`TrialFrame` (vectorised: a million trials take well
under a second) plus :class:`FrameExtras`. Trials whose reward is None (harness,
environment, grader or simulator errors) are excluded from every rate and counted
apart, so they never count as agent failures.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.results import RunInfo, TaskMeta, TrialResult
from ..stats.clustered import clustered_rate_interval
from ..stats.intervals import wilson_bounds, wilson_interval
from .best_at_k import score_stats
from .frame import FrameExtras, TrialFrame
from .rag_summary import grade_rows, rag_summary
from .safety import SAFETY_KINDS, safety_summary
from .summary_model import (
    CapabilityCell,
    ConfigView,
    Excluded,
    GroupStats,
    RoleUsage,
    RunHeader,
    RunSummary,
    SuiteRef,
    TaskRow,
    Usage,
)

BoolArray = npt.NDArray[np.bool_]


def _round(x: float | None, digits: int = 4) -> float | None:
    return None if x is None or x != x else round(float(x), digits)


def task_counts(results: Iterable[TrialResult]) -> dict[str, tuple[int, int]]:
    """task id -> (counted trials, successes)."""
    n: Counter[str] = Counter()
    c: Counter[str] = Counter()
    for r in results:
        if r.reward is not None:
            n[r.task_id] += 1
            c[r.task_id] += r.reward
    return {t: (n[t], c[t]) for t in n}


def _interval(values: npt.ArrayLike, clusters: npt.ArrayLike) -> tuple[float | None, float | None]:
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return (None, None)
    r = clustered_rate_interval(values, np.asarray(clusters))
    return (_round(r.low), _round(r.high))


def passk_matrix(n: npt.ArrayLike, c: npt.ArrayLike, k_max: int) -> tuple[npt.NDArray[np.float64], ...]:
    """Per-task pass^k and pass@k for k = 1..k_max, vectorised: rows are tasks, column
    k-1 is k; NaN where a task has fewer than k counted trials. Uses
    C(c,k)/C(n,k) = prod_{i<k} (c-i)/(n-i) and 1 - prod_{i<k} (n-c-i)/(n-i)."""
    n = np.asarray(n, dtype=np.float64)[:, None]
    c = np.asarray(c, dtype=np.float64)[:, None]
    i = np.arange(k_max, dtype=np.float64)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        hat = np.cumprod(np.clip(c - i, 0, None) / (n - i), axis=1)
        miss = np.cumprod(np.clip(n - c - i, 0, None) / (n - i), axis=1)
    valid = n >= i + 1
    return np.where(valid, hat, np.nan), np.where(valid, 1.0 - miss, np.nan)


def _curves(n: npt.ArrayLike, c: npt.ArrayLike, k_max: int) -> dict[str, dict[str, Any]]:
    hat, at = passk_matrix(n, c, k_max)
    return _curves_of(hat, at, k_max)


def _curves_of(
    hat: npt.NDArray[np.float64], at: npt.NDArray[np.float64], k_max: int
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {
        name: {} for name in ("pass_hat_k", "pass_at_k", "pass_hat_k_ci", "pass_at_k_ci")
    }
    for name, matrix in (("pass_hat_k", hat), ("pass_at_k", at)):
        for k in range(1, k_max + 1):
            column = matrix[:, k - 1]
            column = column[~np.isnan(column)]
            if column.size == 0:
                out[name][str(k)], out[f"{name}_ci"][str(k)] = None, (None, None)
                continue
            p = float(column.mean())
            low, high = wilson_bounds(min(1.0, max(0.0, p)), float(column.size))
            out[name][str(k)] = _round(p)
            out[f"{name}_ci"][str(k)] = (_round(0.0 if p == 0 else low), _round(1.0 if p == 1 else high))
    return out


def passk_curves(counts: dict[str, tuple[int, int]], k_max: int) -> dict[str, dict[str, Any]]:
    """pass^k and pass@k averaged over the tasks that have k counted trials, for
    k = 1..k_max, each with a 95% Wilson interval over those tasks (conservative: a
    task's pass^k lies in [0, 1])."""
    pairs = list(counts.values())
    return _curves([p[0] for p in pairs], [p[1] for p in pairs], k_max)


class _Aggregates:
    """Per-task counts of a frame, computed once."""

    def __init__(self, frame: TrialFrame, k_max: int):
        self.frame = frame
        self.valid: BoolArray = ~np.isnan(frame.reward)
        size = len(frame.task_ids)
        self.trials = np.bincount(frame.task, minlength=size)
        self.n = np.bincount(frame.task[self.valid], minlength=size)
        self.c = np.bincount(frame.task[self.valid], weights=frame.reward[self.valid], minlength=size).round()
        # every task's pass^k and pass@k, once: a group's are their rows (each row is
        # computed on its own, so the rows of a group's tasks are what the group's gives)
        self.k_max = k_max
        self.passk = passk_matrix(self.n, self.c, k_max)

    def group(self, task_mask: BoolArray, k_max: int) -> GroupStats:
        f = self.frame
        trial_mask = task_mask[f.task]
        counted = trial_mask & self.valid
        tasks = np.flatnonzero(task_mask & (self.trials > 0))
        rewards = f.reward[counted]
        if k_max == self.k_max:
            curves = _curves_of(self.passk[0][tasks], self.passk[1][tasks], k_max)
        else:
            curves = _curves(self.n[tasks], self.c[tasks], k_max)
        return GroupStats(
            tasks=int(tasks.size),
            trials=int(trial_mask.sum()),
            excluded=int((trial_mask & ~self.valid).sum()),
            successes=int(rewards.sum()),
            success_rate=_round(rewards.mean()) if rewards.size else None,
            success_rate_ci=_interval(rewards, f.task[counted]),
            **curves,
        )


def _percentiles(
    values: npt.NDArray[np.float64], qs: Sequence[int] = (50, 95, 99)
) -> dict[str, float | None]:
    if values.size == 0:
        return {f"p{q}": None for q in qs}
    return {f"p{q}": _round(float(np.percentile(values, q)), 6) for q in qs}


def _usage(frame: TrialFrame, extras: FrameExtras) -> Usage:
    costs = frame.cost_usd[~np.isnan(frame.cost_usd)]
    t_in = frame.input_tokens[~np.isnan(frame.input_tokens)]
    t_out = frame.output_tokens[~np.isnan(frame.output_tokens)]
    by_role = {}
    for role, acc in extras.usage_by_role.items():
        unknown = acc["unpriced_trials"] and not acc["cost_usd"]
        by_role[role] = RoleUsage(**{**acc, "cost_usd": None if unknown else _round(acc["cost_usd"], 6)})
    return Usage.model_validate(
        {
            "latency_s": {
                "mean": _round(float(frame.latency_s.mean()), 6) if len(frame) else None,
                **_percentiles(frame.latency_s),
            },
            "cost_usd": {
                "total": _round(float(costs.sum()), 6) if costs.size else None,
                "mean": _round(float(costs.mean()), 6) if costs.size else None,
                "trials_with_cost": int(costs.size),
            },
            "tokens": {
                "input": int(t_in.sum()) if t_in.size else None,
                "output": int(t_out.sum()) if t_out.size else None,
                "trials_with_usage": int(t_in.size),
            },
            "by_role": by_role,
            "by_model": by_model(extras.model_calls),
        }
    )


def by_model(calls: Sequence[tuple[str, float | None, float | None, bool]]) -> dict[str, dict[str, Any]]:
    """Per model: calls, failed calls, and mean/p50/p95/p99 of the answered calls'
    latency and of their time to first token (where the call reported one)."""
    grouped: dict[str, list[tuple[float | None, float | None, bool]]] = defaultdict(list)
    for model, latency, ttft, failed in calls:
        grouped[model].append((latency, ttft, failed))
    out: dict[str, dict[str, Any]] = {}
    for model, rows in sorted(grouped.items()):
        answered = [(lat, ttft) for lat, ttft, failed in rows if not failed]
        latencies = np.array([lat for lat, _ in answered if lat is not None], dtype=np.float64)
        ttfts = np.array([t for _, t in answered if t is not None], dtype=np.float64)
        out[model] = {
            "calls": len(rows),
            "failed": len(rows) - len(answered),
            "latency_s": _latency(latencies),
            "ttft_s": _latency(ttfts),
            "calls_with_ttft": int(ttfts.size),
        }
    return out


def _latency(values: npt.NDArray[np.float64]) -> dict[str, float | None]:
    return {"mean": _round(float(values.mean()), 6) if values.size else None, **_percentiles(values)}


def _ci(bounds: tuple[float, float]) -> tuple[float | None, float | None]:
    return (_round(bounds[0]), _round(bounds[1]))


def reward_list(rewards: npt.NDArray[np.float64]) -> list[int | None]:
    """Rewards as the task table lists them: ``int(r)``, None where excluded (NaN)."""
    missing = np.isnan(rewards)
    out = np.where(missing, 0, rewards).astype(np.int64).astype(object)
    out[missing] = None
    values: list[int | None] = out.tolist()
    return values


def _counts_by_task(task: npt.NDArray[np.intp], values: list[Any], size: int) -> list[dict[Any, int]]:
    """Per task, ``dict(Counter(its values))`` (keys in order of first appearance), for
    rows grouped by ``task`` (ascending), counted at once."""
    index: dict[Any, int] = dict.fromkeys(values, 0)  # distinct values, first appearance first
    if len(index) <= 64 and all(v is None or type(v) is str for v in index):
        # few distinct strings (terminations): coded by comparing the column with each
        column = np.asarray(values, dtype=object)
        codes = np.zeros(len(values), dtype=np.int64)
        for code, value in enumerate(index):
            index[value] = code
            if code:
                codes[column == value] = code
    else:
        index = {}
        coded = (index.setdefault(v, len(index)) for v in values)
        codes = np.fromiter(coded, dtype=np.int64, count=len(values))
    out: list[dict[Any, int]] = [{} for _ in range(size)]
    if not values:
        return out
    names, width = list(index), len(index)
    keys = task.astype(np.int64) * width + codes
    pairs, first, counts = np.unique(keys, return_index=True, return_counts=True)
    by_first = np.lexsort((first, pairs // width))
    for pair, count in zip(pairs[by_first].tolist(), counts[by_first].tolist(), strict=True):
        out[pair // width][names[pair % width]] = count
    return out


def _task_table(
    agg: _Aggregates, meta: dict[str, TaskMeta], failures: dict[str, dict[str, int]], k_max: int
) -> list[TaskRow]:
    f = agg.frame
    order = np.lexsort((f.trial_index, f.task))
    starts = np.searchsorted(f.task[order], np.arange(len(f.task_ids)))
    ends = np.searchsorted(f.task[order], np.arange(len(f.task_ids)), side="right")
    hat = agg.passk[0] if agg.k_max == k_max else passk_matrix(agg.n, agg.c, k_max)[0]
    hat_rows = np.round(hat, 4).tolist()
    keys = [str(k) for k in range(1, k_max + 1)]
    rewards = reward_list(f.reward[order])
    terminations = _counts_by_task(f.task[order], f.termination[order].tolist(), len(f.task_ids))
    bounds = list(zip(starts.tolist(), ends.tolist(), strict=True))
    counted = [int(v) for v in agg.n.tolist()]
    successes = [int(v) for v in agg.c.tolist()]
    rows: dict[str, TaskRow] = {}
    for t, task_id in enumerate(f.task_ids):
        start, end = bounds[t]
        n, c = counted[t], successes[t]
        m = meta.get(task_id)
        if m is None:
            m = TaskMeta(task_id)
        # built without validation: every value is computed here with its declared type
        rows[task_id] = TaskRow.model_construct(
            task_id=task_id,
            stratum=m.stratum,
            split=m.split,
            tags=list(m.tags),
            difficulty=m.difficulty,
            trials=end - start,
            excluded=end - start - n,
            successes=c,
            success_rate=_round(c / n) if n else None,
            success_rate_ci=_ci(wilson_interval(c, n)) if n else (None, None),
            pass_hat_k=dict(zip(keys[: min(n, k_max)], hat_rows[t], strict=False)),
            rewards=rewards[start:end],
            terminations=terminations[t],
            failures=failures.get(task_id, {}),
        )
    for task_id, m in meta.items():  # planned tasks with no trial yet
        if task_id not in rows:
            rows[task_id] = TaskRow(
                task_id=task_id, stratum=m.stratum, split=m.split, tags=list(m.tags), difficulty=m.difficulty
            )
    return [rows[t] for t in sorted(rows)]


def _capability_matrix(agg: _Aggregates, metas: list[TaskMeta], tags: list[str]) -> dict[str, Any]:
    matrix: dict[str, dict[str, CapabilityCell]] = {}
    difficulty = np.array([m.difficulty for m in metas], dtype=object)
    for tag in tags:
        cells: dict[str, CapabilityCell] = {}
        tagged = np.array([tag in m.tags for m in metas], dtype=bool)
        for d in sorted({m.difficulty for m in metas if tag in m.tags}):
            sel = np.flatnonzero(tagged & (difficulty == d))
            n, c = int(agg.n[sel].sum()), int(agg.c[sel].sum())
            cells[str(d)] = CapabilityCell(trials=n, success_rate=_round(c / n) if n else None)
        matrix[tag] = cells
    return matrix


def summarize_frame(
    frame: TrialFrame, extras: FrameExtras, tasks: Sequence[TaskMeta], k_max: int
) -> RunSummary:
    """Everything a run's report shows, computed from columns (no run header)."""
    meta = {t.task_id: t for t in tasks}
    agg = _Aggregates(frame, k_max)
    metas = [meta[t] if t in meta else TaskMeta(t) for t in frame.task_ids]

    def by(values: list[str]) -> dict[str, GroupStats]:
        arr = np.asarray(values, dtype=object)
        return {key: agg.group(arr == key, k_max) for key in sorted(set(values))}

    tags = sorted({tag for m in metas for tag in m.tags})
    excluded = ~agg.valid
    return RunSummary(
        overall=agg.group(np.ones(len(frame.task_ids), dtype=bool), k_max),
        excluded=Excluded(
            trials=int(excluded.sum()),
            share=_round(excluded.mean()) if len(frame) else None,
            by_termination=dict(Counter(frame.termination[excluded].tolist())),
            by_root_cause=dict(Counter((r or "UNKNOWN") for r in frame.root_cause[excluded].tolist())),
        ),
        terminations=dict(sorted(Counter(frame.termination.tolist()).items())),
        by_stratum=by([m.stratum for m in metas]),
        by_split=by([m.split for m in metas]),
        by_tag={tag: agg.group(np.array([tag in m.tags for m in metas], dtype=bool), k_max) for tag in tags},
        capability_matrix=_capability_matrix(agg, metas, tags),
        graders=extras.graders,
        process={f"mean_{name}": _round(value) for name, value in sorted(extras.process.items())},
        usage=_usage(frame, extras),
        tasks=_task_table(agg, meta, extras.failures, k_max),
    )


def run_header(info: RunInfo, completed: int, attempts: int = 0) -> RunHeader:
    """The identity and provenance block of a stored run's summary."""
    return RunHeader(
        run_id=info.run_id,
        status=info.status,
        created_at=info.created_at,
        finished_at=info.finished_at,
        suite=SuiteRef(
            name=info.suite_name, version=info.suite_version, hash=info.suite_hash, source=info.suite_source
        ),
        config=ConfigView.of(info.config),
        seed=info.seed,
        trials_per_task=info.trials_per_task,
        planned_trials=info.planned_trials,
        completed_trials=completed,
        retried_attempts=attempts,
        filters=info.filters,
        spec=info.spec,
        git_commit=info.git_commit,
        versions=info.versions,
    )


def summarize_run(
    info: RunInfo, frame: TrialFrame, extras: FrameExtras, tasks: Sequence[TaskMeta], attempts: int = 0
) -> RunSummary:
    """The summary of a stored run: its header plus :func:`summarize_frame`."""
    summary = summarize_frame(frame, extras, tasks, info.trials_per_task)
    summary.run = run_header(info, len(frame), attempts)
    return summary


def _scores(results: Sequence[TrialResult]) -> list[tuple[str, str, float]]:
    """(task, grader, score) of graders that score beyond 0/1, as the store selects them."""
    graded = [(r.task_id, g) for r in results for g in r.grades if not g.skipped and g.score is not None]
    beyond = {g.grader for _, g in graded if g.score not in (0, 1)}
    return [
        (task, g.grader, float(g.score)) for task, g in graded if g.grader in beyond and g.score is not None
    ]


def summarize(results: Sequence[TrialResult], tasks: Sequence[TaskMeta], k_max: int) -> RunSummary:
    """The summary of in-memory results (see :func:`summarize_frame`; ``rag`` as a
    stored run's: :func:`assay.metrics.rag_summary.rag_summary`)."""
    summary = summarize_frame(
        TrialFrame.from_results(results), FrameExtras.from_results(results), tasks, k_max
    )
    summary.rag = rag_summary(grade_rows(results))
    summary.scores = score_stats(_scores(results), k_max)
    summary.safety = safety_summary(
        g.metrics for r in results for g in r.grades if g.kind in SAFETY_KINDS and not g.skipped
    )
    return summary
