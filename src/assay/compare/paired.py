"""Paired tests of one metric between a baseline (a) and a candidate (b).

- ``quality``: McNemar's exact test on the units' binary outcomes (by default each task's
  majority outcome), effect = difference of pass shares with Newcombe's paired interval.
- every number trials carry (success rate, cost, latency, tokens, process metrics,
  grader scores): a sign-flip permutation test of the mean paired difference and a
  paired bootstrap interval, both resampling whole tasks.

Differences are always ``b - a`` (candidate minus baseline).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..stats import (
    bootstrap_means,
    diff_proportions_paired,
    mcnemar_exact,
    paired_counts,
    sign_flip_test,
)
from .outcomes import direction_of
from .pairing import Pairing

Family = Literal["primary", "secondary"]

OUTCOME_WORDS = {"all": "every trial: pass^k", "majority": "most trials", "any": "any trial: pass@k"}
LABELS = {
    "quality": "tasks solved",
    "success_rate": "trial success rate",
    "cost_usd": "cost per trial ($)",
    "latency_s": "latency per trial (s)",
    "input_tokens": "input tokens per trial",
    "output_tokens": "output tokens per trial",
}


@dataclass
class MetricRow:
    """One metric's paired comparison. ``p_adjusted`` is filled by the multiplicity step."""

    metric: str
    label: str
    kind: Literal["binary", "continuous"]
    direction: str | None
    family: Family
    n: int
    a: float | None = None
    b: float | None = None
    delta: float | None = None
    low: float | None = None
    high: float | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    test: str = ""
    skipped: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def relative(self) -> float | None:
        """``delta / a`` (e.g. -0.3 for 30% cheaper); None when undefined."""
        if self.delta is None or not self.a:
            return None
        return self.delta / abs(self.a)

    def significant(self, alpha: float) -> bool:
        p = self.p_adjusted if self.p_adjusted is not None else self.p_value
        return p is not None and p < alpha

    @property
    def improved(self) -> bool | None:
        """True if b moved the good way, False the bad way, None when neutral or equal."""
        if self.delta is None or self.direction is None or self.delta == 0:
            return None
        return (self.delta > 0) == (self.direction == "higher")

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "label": self.label,
            "kind": self.kind,
            "direction": self.direction,
            "family": self.family,
            "n": self.n,
            "a": self.a,
            "b": self.b,
            "delta": self.delta,
            "ci": None if self.low is None else [self.low, self.high],
            "relative": self.relative,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "test": self.test,
            "skipped": self.skipped,
            **({"counts": self.extra} if self.extra else {}),
        }


def quality_row(pairing: Pairing, confidence: float = 0.95) -> MetricRow:
    """McNemar exact on the units' outcomes; effect = b's pass share minus a's."""
    xb = pairing.b_pass.astype(int)
    ya = pairing.a_pass.astype(int)
    n11, n10, n01, n00 = paired_counts(xb, ya)
    ci = diff_proportions_paired(n11, n10, n01, n00, confidence=confidence)
    unit = f"task ({OUTCOME_WORDS[pairing.task_outcome]})" if pairing.match == "task" else "trial pair"
    label = (
        f"tasks solved ({OUTCOME_WORDS[pairing.task_outcome]})"
        if pairing.match == "task"
        else "trials passed"
    )
    return MetricRow(
        metric="quality",
        label=label,
        kind="binary",
        direction="higher",
        family="primary",
        n=pairing.n_units,
        a=float(ya.mean()),
        b=float(xb.mean()),
        delta=ci.estimate,
        low=ci.low,
        high=ci.high,
        p_value=mcnemar_exact(n10, n01),
        test=f"McNemar exact, unit = {unit}; CI Newcombe paired",
        extra={"both": n11, "only_b": n10, "only_a": n01, "neither": n00},
    )


def continuous_row(
    pairing: Pairing,
    metric: str,
    *,
    family: Family = "secondary",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> MetricRow:
    """Paired mean difference of ``metric`` with a task-clustered bootstrap interval and
    a task-clustered sign-flip p-value; a skipped row when the runs lack the metric."""
    return continuous_rows(
        pairing, [(metric, family)], confidence=confidence, n_resamples=n_resamples, seed=seed
    )[0]


def continuous_rows(
    pairing: Pairing,
    metrics: list[tuple[str, Family]],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[MetricRow]:
    """:func:`continuous_row` of several metrics. Metrics measured on the same units
    share their bootstrap draws (:func:`assay.stats.bootstrap_means`): the same
    intervals as one by one, at a fraction of the cost on thousands of tasks."""
    rows: list[MetricRow] = []
    pending: dict[bytes, list[tuple[MetricRow, np.ndarray, np.ndarray, np.ndarray]]] = {}
    for metric, family in metrics:
        value_name = "success" if metric == "success_rate" else metric
        row = MetricRow(metric, LABELS.get(metric, metric), "continuous", direction_of(metric), family, 0)
        rows.append(row)
        va, vb = pairing.values(value_name)
        have_a, have_b = ~np.isnan(va), ~np.isnan(vb)
        has_a, has_b = bool(have_a.any()), bool(have_b.any())
        if not (has_a or has_b):
            row.skipped = "neither run measured it"
            continue
        if not (has_a and has_b):
            row.skipped = f"only {pairing.a.run_id if has_a else pairing.b.run_id} measured it"
            continue
        both = have_a & have_b
        a, b = va[both], vb[both]
        clusters = pairing.unit_task[both]
        row.n, row.a, row.b = int(a.size), float(a.mean()), float(b.mean())
        if np.unique(clusters).size < 2:
            row.delta = float((b - a).mean())
            row.skipped = "fewer than two tasks have it in both runs"
            continue
        pending.setdefault(np.packbits(both).tobytes() + both.size.to_bytes(8, "little"), []).append(
            (row, a, b, clusters)
        )
    for group in pending.values():
        clusters = group[0][3]
        cis = bootstrap_means(
            [b - a for _, a, b, _ in group],
            clusters=clusters,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        )
        for (row, a, b, _), ci in zip(group, cis, strict=True):
            test = sign_flip_test(b, a, clusters=clusters, seed=seed)
            row.delta, row.low, row.high, row.p_value = ci.estimate, ci.low, ci.high, test.p_value
            kind = "exact" if test.exact else f"{test.n_resamples} random flips"
            row.test = f"sign-flip permutation ({kind}), clustered by task; CI paired bootstrap by task"
    return rows
