"""The plain-language decision line of a comparison, and how robust it is to the box.

Rules, for a candidate B against the baseline A (p-values are the adjusted ones):

1. B significantly better on quality: *switch* when B's mean of every other measured
   box metric is inside its τ; *trade-off* when some metric is outside the box.
2. B significantly worse on quality: *do not switch*.
3. Otherwise: *no difference*: do not switch on quality; the line says what the suite
   could have detected, and points at a non-inferiority gate when B is significantly
   cheaper or faster on a box metric.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..box import ScoringProfile
from .boxes import BoxResult
from .outcomes import QUALITY_VALUES
from .paired import MetricRow

Verdict = Literal["switch", "do_not_switch", "trade_off", "no_difference"]
SHORT = {
    "cost_usd": "cost",
    "latency_s": "latency",
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
}


@dataclass(frozen=True)
class Decision:
    """The verdict for one candidate and the sentence that explains it."""

    verdict: Verdict
    line: str

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "line": self.line}


def format_p(p: float | None) -> str:
    """``p<0.001``, ``p=0.003`` or ``p=0.41``."""
    if p is None:
        return "p=n/a"
    if p < 0.001:
        return "p<0.001"
    return f"p={p:.3f}" if p < 0.01 else f"p={p:.2f}"


def pts(x: float) -> str:
    """A difference of shares in percentage points: ``+6.0 pts``."""
    return f"{100 * x:+.1f} pts"


def _name(metric: str) -> str:
    return SHORT.get(metric, metric)


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def _box_clause(
    candidate: str, box: BoxResult | None, profile: ScoringProfile | None
) -> tuple[str, list[str]]:
    """('within the cost and latency box', outside metrics) for the candidate."""
    prof = profile or (box.scored if box else None)
    if box is None or prof is None:
        return "", []
    checked = [m for m in prof.metrics if m not in QUALITY_VALUES]
    skipped = [m for m in box.skipped if m not in QUALITY_VALUES]
    outside = box.outside(candidate, prof)
    if outside:
        parts = []
        for m in outside:
            spec = prof.metrics[m]
            sign = ">" if spec.direction == "lower" else "<"
            parts.append(f"{_name(m)} mean {_fmt(box.means[candidate][m])} {sign} τ {_fmt(spec.tau)}")
        return f"outside the {' and '.join(_name(m) for m in outside)} box ({'; '.join(parts)})", outside
    if not checked:
        return "", []
    clause = f"within the {' and '.join(_name(m) for m in checked)} box"
    if skipped:
        clause += f" ({', '.join(_name(m) for m in skipped)} not measured)"
    return clause, []


def decide(
    quality: MetricRow,
    rows: list[MetricRow],
    *,
    candidate: str,
    name: str,
    box: BoxResult | None,
    alpha: float,
    mde: float | None,
    profile: ScoringProfile | None = None,
) -> Decision:
    """The decision for candidate ``name`` (run id ``candidate``) from its quality row,
    its other metric rows and the box (``profile`` overrides the box's profile)."""
    p = quality.p_adjusted if quality.p_adjusted is not None else quality.p_value
    delta = quality.delta or 0.0
    box_clause, outside = _box_clause(candidate, box, profile)
    moved = [r for r in rows if r.family == "primary" and r.metric != "quality" and r.significant(alpha)]
    if quality.significant(alpha) and delta > 0:
        head = f"{name} is better on quality ({pts(delta)}, {format_p(p)})"
        if outside:
            return Decision("trade_off", f"{head} but {box_clause}; revisit the box or do not switch")
        costs = [r for r in moved if r.improved is False]
        though = ""
        if costs:
            though = " though " + ", ".join(
                f"{_name(r.metric)} {_relative(r)} ({format_p(r.p_adjusted)})" for r in costs
            )
        joined = f" and {box_clause}" if box_clause else ""
        return Decision("switch", f"{head}{joined}{';' if though else ''}{though}; switch")
    if quality.significant(alpha) and delta < 0:
        return Decision(
            "do_not_switch", f"{name} is worse on quality ({pts(delta)}, {format_p(p)}); do not switch"
        )
    detect = (
        "the suite is too small to detect any difference"
        if mde is None
        else (f"the suite can detect ≥ {100 * mde:.0f} pts")
    )
    gains = [r for r in moved if r.improved is True]
    if gains:
        better = ", ".join(f"{_name(r.metric)} {_relative(r)} ({format_p(r.p_adjusted)})" for r in gains)
        return Decision(
            "no_difference",
            f"quality difference within noise ({pts(delta)}, {format_p(p)}); {name} is better on {better}: "
            f"confirm with a non-inferiority gate before switching; {detect}",
        )
    return Decision(
        "no_difference", f"difference within noise ({pts(delta)}, {format_p(p)}); do not switch; {detect}"
    )


def _relative(row: MetricRow) -> str:
    rel = row.relative
    if rel is None:
        return f"{row.delta:+.3g}"
    return f"{100 * rel:+.0f}%"


def decision_sensitivity(
    decide_with: Any, base: Decision, box: BoxResult | None, relative: float = 0.2
) -> list[dict[str, Any]]:
    """Verdict changes when one box threshold moves by ±``relative`` (weights do not
    enter the decision rule; their effect on the ranking is in the box sensitivity).

    ``decide_with(profile)`` recomputes the decision under a perturbed profile.
    """
    if box is None or box.scored is None:
        return []
    changes = []
    for metric, spec in box.scored.metrics.items():
        if metric in QUALITY_VALUES:
            continue
        for factor in (1 - relative, 1 + relative):
            tau = spec.tau * factor if spec.direction == "lower" else 1 - (1 - spec.tau) * factor
            perturbed = box.scored.with_metric(metric, tau=tau)
            decision = decide_with(perturbed)
            if decision.verdict != base.verdict:
                changes.append(
                    {
                        "metric": metric,
                        "parameter": "tau",
                        "factor": round(factor, 6),
                        "value": tau,
                        "verdict": decision.verdict,
                        "line": decision.line,
                    }
                )
    return changes
