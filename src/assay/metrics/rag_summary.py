"""A run's RAG summary: retrieval and generation reported apart, with intervals.

:func:`rag_summary` reads the grades of the RAG grader kinds (:data:`RAG_STAGES` maps
each kind to its stage) and returns, per stage, the pass rate and the mean of every
metric the graders recorded (``recall@5``, ``mrr``, ``ndcg@10``, ``citation_accuracy``,
``support_share``, judge dimensions...) with a percentile bootstrap interval over tasks
(whole tasks are resampled, so repeated trials of a task stay together); the failures
located per trial (retrieval only, generation only, both); and a per-task table.

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
from ..stats.bootstrap import bootstrap_ci

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


class _Interval:
    def __init__(self, confidence: float, n_resamples: int, seed: int):
        self.confidence, self.n_resamples, self.seed = confidence, n_resamples, seed

    def __call__(self, values: list[float], tasks: list[str]) -> dict[str, Any]:
        ci = bootstrap_ci(
            np.asarray(values, dtype=float),
            clusters=tasks,
            n_resamples=self.n_resamples,
            confidence=self.confidence,
            seed=self.seed,
        )
        return {"mean": _round(ci.estimate), "ci": [_round(ci.low), _round(ci.high)], "n": len(values)}


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
    interval = _Interval(confidence, n_resamples, seed)
    # (task, trial) -> stage -> list of passed; grader -> metric -> [(task, value)]
    verdicts: dict[tuple[str, int], dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    graders: dict[str, dict[str, Any]] = {}
    values: dict[tuple[str, str], list[tuple[str, float]]] = defaultdict(list)
    for row in rows:
        stage = stages.get(row.kind)
        if stage is None or row.skipped or row.passed is None:
            continue
        verdicts[(row.task_id, row.trial_index)][stage].append(bool(row.passed))
        g = graders.setdefault(row.grader, {"kind": row.kind, "stage": stage, "passes": []})
        g["passes"].append((row.task_id, float(row.passed)))
        for name, value in row.metrics.items():
            if value == value:  # not NaN
                values[(row.grader, name)].append((row.task_id, float(value)))
    if not verdicts:
        return None

    def stat(pairs: list[tuple[str, float]]) -> dict[str, Any]:
        return interval([v for _, v in pairs], [t for t, _ in pairs])

    out_stages: dict[str, Any] = {}
    for stage in STAGES:
        trials = [(key, all(v[stage])) for key, v in sorted(verdicts.items()) if v.get(stage)]
        block: dict[str, Any] = {"trials": len(trials), "passed": sum(ok for _, ok in trials)}
        if trials:
            passes = stat([(key[0], float(ok)) for key, ok in trials])
            block["pass_rate"], block["pass_rate_ci"] = passes["mean"], passes["ci"]
        block["graders"] = {}
        for name, g in sorted(graders.items()):
            if g["stage"] != stage:
                continue
            passes = stat(g["passes"])
            block["graders"][name] = {
                "kind": g["kind"],
                "trials": len(g["passes"]),
                "pass_rate": passes["mean"],
                "pass_rate_ci": passes["ci"],
                "metrics": {
                    metric: stat(pairs)
                    for (grader, metric), pairs in sorted(values.items())
                    if grader == name
                },
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
    sums: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (grader, metric), pairs in values.items():
        for task_id, value in pairs:
            sums[(task_id, f"{grader}.{metric}")].append(value)
    for (task_id, key), vs in sorted(sums.items()):
        per_task[task_id].setdefault("metrics", {})[key] = _round(sum(vs) / len(vs))
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
