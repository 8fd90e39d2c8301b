"""A run's RAG summary: retrieval and generation reported apart, with intervals.

:func:`rag_summary` reads the grades of the RAG grader kinds (:data:`RAG_STAGES` maps
each kind to its stage) and returns, per stage, the pass rate and the mean of every
metric the graders recorded (``recall@5``, ``mrr``, ``ndcg@10``, ``citation_accuracy``,
``support_share``, judge dimensions...) with a percentile bootstrap interval over tasks
(whole tasks are resampled, so repeated trials of a task stay together; one set of
resamples for all figures: :func:`assay.stats.bootstrap.cluster_bootstrap_means`); the
failures located per trial (retrieval only, generation only, both); and a per-task
table.

It is a pure function of :class:`GradeRow` values; :func:`grade_rows` makes them from
in-memory results, the store from SQL (``Store.load_grade_rows``). Skipped grades (no
judge configured, grader errors) count nowhere. It returns None for a run without RAG
grades, so other summaries are unchanged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.results import TrialResult
from ..stats.bootstrap import cluster_bootstrap_means

#: Grader kind -> the stage of a RAG pipeline it grades.
RAG_STAGES: dict[str, str] = {
    "retrieval": "retrieval",
    "citations": "generation",
    "groundedness": "generation",
    "faithfulness": "generation",
    "answer_correctness": "generation",
}
STAGES = ("retrieval", "generation")
LOCATIONS = ("retrieval_only", "generation_only", "both", "neither", "undecided")


@dataclass(frozen=True, slots=True)
class GradeRow:
    """What the RAG summary needs of one grade."""

    task_id: str
    trial_index: int
    grader: str
    kind: str
    passed: bool | None
    skipped: bool
    metrics: Mapping[str, float]


def grade_rows(results: Iterable[TrialResult], stages: Mapping[str, str] = RAG_STAGES) -> list[GradeRow]:
    """The RAG grade rows of in-memory results."""
    return [
        GradeRow(r.task_id, r.trial_index, g.grader, g.kind, g.passed, g.skipped, dict(g.metrics))
        for r in results
        for g in r.grades
        if g.kind in stages
    ]


def _round(x: float) -> float:
    return round(float(x), 4)


def _locate(retrieval: bool | None, generation: bool | None) -> str:
    """Where a trial failed: a stage is False when one of its decided grades failed."""
    if retrieval is None and generation is None:
        return "undecided"
    r_failed, g_failed = retrieval is False, generation is False
    if r_failed and g_failed:
        return "both"
    if r_failed:
        return "retrieval_only"
    return "generation_only" if g_failed else "neither"


Column = tuple[str, ...]


@dataclass
class _Table:
    """Trials x columns (NaN where a trial has no value), rows in (task, trial) order."""

    keys: list[tuple[str, int]]
    columns: list[Column]
    matrix: np.ndarray

    @classmethod
    def of(cls, cells: dict[tuple[str, int], dict[Column, float]]) -> _Table:
        keys = sorted(cells)
        columns = sorted({c for row in cells.values() for c in row})
        where = {c: j for j, c in enumerate(columns)}
        matrix = np.full((len(keys), len(columns)), np.nan)
        for i, key in enumerate(keys):
            for c, value in cells[key].items():
                matrix[i, where[c]] = value
        return cls(keys, columns, matrix)

    def intervals(self, confidence: float, n_resamples: int, seed: int) -> dict[Column, dict[str, Any]]:
        """Mean, interval and count of every column: one cluster bootstrap over tasks
        for all columns (:func:`cluster_bootstrap_means`)."""
        cis = cluster_bootstrap_means(
            self.matrix, [k[0] for k in self.keys], n_resamples=n_resamples, confidence=confidence, seed=seed
        )
        counts = (~np.isnan(self.matrix)).sum(axis=0)
        return {
            c: {"mean": _round(ci.estimate), "ci": [_round(ci.low), _round(ci.high)], "n": int(counts[j])}
            for j, (c, ci) in enumerate(zip(self.columns, cis, strict=True))
            if ci is not None
        }

    def task_means(self) -> dict[str, dict[str, float]]:
        """Per task, the mean of every metric column it has (``<grader>.<metric>``)."""
        tasks = sorted({k[0] for k in self.keys})
        code = {t: i for i, t in enumerate(tasks)}
        rows = np.array([code[k[0]] for k in self.keys], dtype=np.intp)
        metric = [j for j, c in enumerate(self.columns) if c[0] == "metric"]
        values = self.matrix[:, metric]
        present = ~np.isnan(values)
        sums = np.zeros((len(tasks), len(metric)))
        counts = np.zeros((len(tasks), len(metric)))
        np.add.at(sums, rows, np.where(present, values, 0.0))
        np.add.at(counts, rows, present)
        with np.errstate(invalid="ignore"):
            means = np.round(sums / counts, 4).tolist()
        names = [f"{self.columns[j][1]}.{self.columns[j][2]}" for j in metric]
        return {
            t: {n: m for n, m, c in zip(names, means[i], counts[i], strict=True) if c}
            for i, t in enumerate(tasks)
        }


def rag_summary(
    rows: Iterable[GradeRow],
    *,
    stages: Mapping[str, str] = RAG_STAGES,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any] | None:
    """The RAG summary of a run's grade rows (see the module docstring); None when the
    rows hold no decided RAG grade."""
    # (task, trial) -> stage -> verdicts; (task, trial) -> column -> value
    verdicts: dict[tuple[str, int], dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    table: dict[tuple[str, int], dict[Column, float]] = defaultdict(dict)
    graders: dict[str, dict[str, Any]] = {}
    for row in rows:
        stage = stages.get(row.kind)
        if stage is None or row.skipped or row.passed is None:
            continue
        key = (row.task_id, row.trial_index)
        verdicts[key][stage].append(bool(row.passed))
        g = graders.setdefault(row.grader, {"kind": row.kind, "stage": stage, "trials": 0, "metrics": set()})
        g["trials"] += 1
        table[key][("pass", row.grader)] = float(row.passed)
        for name, value in row.metrics.items():
            if value == value:  # not NaN
                table[key][("metric", row.grader, name)] = float(value)
                g["metrics"].add(name)
    if not verdicts:
        return None
    for key, v in verdicts.items():
        for stage, passes in v.items():
            table[key][("stage", stage)] = float(all(passes))
    grid = _Table.of(table)
    stats = grid.intervals(confidence, n_resamples, seed)

    out_stages: dict[str, Any] = {}
    for stage in STAGES:
        decided = [all(v[stage]) for v in verdicts.values() if v.get(stage)]
        block: dict[str, Any] = {"trials": len(decided), "passed": sum(decided)}
        if decided:
            block["pass_rate"] = stats[("stage", stage)]["mean"]
            block["pass_rate_ci"] = stats[("stage", stage)]["ci"]
        block["graders"] = {
            name: {
                "kind": g["kind"],
                "trials": g["trials"],
                "pass_rate": stats[("pass", name)]["mean"],
                "pass_rate_ci": stats[("pass", name)]["ci"],
                "metrics": {m: stats[("metric", name, m)] for m in sorted(g["metrics"])},
            }
            for name, g in sorted(graders.items())
            if g["stage"] == stage
        }
        out_stages[stage] = block

    located: dict[str, int] = dict.fromkeys(LOCATIONS, 0)
    per_task: dict[str, dict[str, Any]] = {}
    for (task_id, _), v in sorted(verdicts.items()):
        r = all(v["retrieval"]) if v.get("retrieval") else None
        gen = all(v["generation"]) if v.get("generation") else None
        where = _locate(r, gen)
        located[where] += 1
        entry = per_task.setdefault(
            task_id, {"task_id": task_id, "trials": 0, "failures": dict.fromkeys(LOCATIONS, 0)}
        )
        entry["trials"] += 1
        entry["failures"][where] += 1
        for stage, ok in (("retrieval", r), ("generation", gen)):
            if ok is not None:
                entry[f"{stage}_passed"] = entry.get(f"{stage}_passed", 0) + int(ok)
    for task_id, means in grid.task_means().items():
        if means:
            per_task[task_id]["metrics"] = means
    for entry in per_task.values():
        entry["failures"] = {k: n for k, n in entry["failures"].items() if n}
    return {
        "schema": "assay.rag-summary/1",
        "trials": len(verdicts),
        "tasks": len(per_task),
        "interval": {
            "method": "percentile bootstrap over tasks",
            "confidence": confidence,
            "resamples": n_resamples,
            "seed": seed,
        },
        "stages": out_stages,
        "failures": located,
        "tasks_table": [per_task[t] for t in sorted(per_task)],
    }
