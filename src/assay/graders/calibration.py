"""Judge calibration: a grader's verdicts against human labels of the same trials.

For each grader with labels: raw agreement, Cohen's kappa, and for ordinal rubric levels
the linearly and quadratically weighted kappas, per dimension with confusion matrices,
plus every case of disagreement. The grader is "usable" when its kappa reaches the
threshold (default 0.7, the seeds' bar) - the overall pass/fail kappa when the overall
verdict was labelled, else the lowest per-dimension kappa (quadratic-weighted for
levelled dimensions). With too few labels or a single label in use, kappa is undefined
and the verdict is "undetermined".

Judge values come from the stored grades: ``passed`` for the overall verdict,
``dim:<name>`` metrics (rounded to the nearest level when a panel averaged them) and
``pass:<name>`` metrics for veto and pitfall items (pass when at least half the judges
passed it). Labels on the trial as a whole (grader "") are compared with the reward.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..core.results import TrialResult
from ..stats.agreement import cohen_kappa, confusion_matrix, raw_agreement
from .bias import LengthBias
from .registry import is_judge_kind

TRIAL = "(trial reward)"


def _ordinal(value: str) -> int:
    return 1 if value == "pass" else 0 if value == "fail" else int(value)


def judge_values(results: list[TrialResult]) -> dict[tuple[str, str, int, str], str]:
    """(grader, task, trial, dimension) -> the grader's value, as labels are written."""
    out: dict[tuple[str, str, int, str], str] = {}
    for r in results:
        if r.reward is not None:
            out[("", r.task_id, r.trial_index, "")] = "pass" if r.reward == 1 else "fail"
        for g in r.grades:
            if g.skipped:
                continue
            if g.passed is not None:
                out[(g.grader, r.task_id, r.trial_index, "")] = "pass" if g.passed else "fail"
            for key, value in g.metrics.items():
                kind, _, name = key.partition(":")
                if kind == "dim" and name:
                    out[(g.grader, r.task_id, r.trial_index, name)] = str(math.floor(value + 0.5))
                elif kind == "pass" and name:
                    out[(g.grader, r.task_id, r.trial_index, name)] = "pass" if value >= 0.5 else "fail"
    return out


@dataclass
class Agreement:
    """Agreement of judge and human on one grader's overall verdict or one dimension."""

    dimension: str
    n: int
    raw_agreement: float
    kappa: float
    kappa_linear: float | None
    kappa_quadratic: float | None
    labels: list[str]
    matrix: list[list[int]]

    @property
    def primary(self) -> float:
        return self.kappa_quadratic if self.kappa_quadratic is not None else self.kappa


def agreement(dimension: str, judge: list[str], human: list[str]) -> Agreement:
    """Kappas and confusion matrix (rows: judge, columns: human) of paired values."""
    ordinal = any(v not in ("pass", "fail") for v in judge + human)
    a, b = [_ordinal(v) for v in judge], [_ordinal(v) for v in human]
    labels, matrix = confusion_matrix(a, b)
    shown = [str(v) if ordinal else ("pass" if v == 1 else "fail") for v in labels]
    return Agreement(
        dimension,
        len(a),
        raw_agreement(a, b),
        cohen_kappa(a, b),
        cohen_kappa(a, b, "linear") if ordinal else None,
        cohen_kappa(a, b, "quadratic") if ordinal else None,
        shown,
        matrix.tolist(),
    )


@dataclass
class GraderCalibration:
    grader: str
    threshold: float
    dimensions: list[Agreement] = field(default_factory=list)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    unmatched: int = 0
    length_bias: LengthBias | None = None

    @property
    def overall(self) -> Agreement | None:
        return next((d for d in self.dimensions if d.dimension == ""), None)

    @property
    def kappa(self) -> float | None:
        """The kappa the verdict rests on (see the module docstring)."""
        if self.overall is not None:
            return self.overall.kappa
        values = [d.primary for d in self.dimensions]
        return min(values) if values else None

    @property
    def verdict(self) -> str:
        k = self.kappa
        if k is None or math.isnan(k):
            return "undetermined"
        return "judge usable" if k >= self.threshold else "judge not usable"

    def to_dict(self) -> dict[str, Any]:
        def num(x: float | None) -> float | None:
            return None if x is None or math.isnan(x) else x

        return {
            "grader": self.grader,
            "threshold": self.threshold,
            "kappa": num(self.kappa),
            "verdict": self.verdict,
            "usable": self.verdict == "judge usable",
            "dimensions": [
                {
                    "dimension": d.dimension or "overall",
                    "n": d.n,
                    "raw_agreement": d.raw_agreement,
                    "kappa": num(d.kappa),
                    "kappa_linear": num(d.kappa_linear),
                    "kappa_quadratic": num(d.kappa_quadratic),
                    "confusion": {
                        "labels": d.labels,
                        "rows": "judge",
                        "columns": "human",
                        "matrix": d.matrix,
                    },
                }
                for d in self.dimensions
            ],
            "disagreements": self.disagreements,
            "unmatched_labels": self.unmatched,
            "length_bias": None
            if self.length_bias is None
            else {"rho": self.length_bias.rho, "n": self.length_bias.n, "warning": self.length_bias.warning},
        }


def needs_review(result: TrialResult) -> list[str]:
    """Graders whose verdict on this trial waits for a human: a panel that disagreed or a
    judge unsure (``needs_review``), or a gating judge that answered ``unknown`` (no
    verdict, not skipped: the trial is excluded until someone decides). The review
    queue of ``assay label --review`` and the viewer's ``/label`` screen."""
    return [
        g.grader
        for g in result.grades
        if is_judge_kind(g.kind) and (g.needs_review or (g.passed is None and not g.skipped))
    ]
