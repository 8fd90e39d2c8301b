"""Relative checks: the candidate against a baseline run, paired, with a margin.

Each check orients the paired differences so that positive is better, then tests the
boundary "worse by exactly the margin":

- ``quality``: Tango's paired score test (:func:`assay.stats.noninferiority_paired`) on
  task outcomes. Its p-value tests H0 "worse by the margin or more"; one minus it tests
  H0 "not worse by more than the margin".
- every other metric: a sign-flip test of the oriented differences shifted by the
  margin (task-clustered; assumes the differences are symmetric about their centre).

``test: regression`` fails when the (multiplicity-adjusted) p-value of "worse by more
than the margin" is below alpha: noise never fails the gate. ``test: noninferiority``
fails unless "not worse by the margin" is shown at alpha: the candidate must prove it.
Regression p-values are adjusted across the policy's regression checks; a set of
non-inferiority checks that must all pass needs no adjustment.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..compare import Pairing, direction_of, pair_runs
from ..compare.pairing import RunLike
from ..errors import AssayError
from ..stats import (
    adjust_pvalues,
    diff_proportions_paired,
    noninferiority_paired,
    paired_counts,
    paired_mean_difference,
    sign_flip_test,
)
from .policy import GatePolicy, RelativeCheck
from .verdict import CheckResult


def _quality(pairing: Pairing, margin: float, confidence: float) -> dict[str, Any]:
    xb = pairing.b_pass.astype(int)
    ya = pairing.a_pass.astype(int)
    n11, n10, n01, n00 = paired_counts(xb, ya)
    p_ni = noninferiority_paired(n10, n01, len(xb), margin).p_value
    ci = diff_proportions_paired(n11, n10, n01, n00, confidence=confidence)
    return {
        "a": float(ya.mean()),
        "b": float(xb.mean()),
        "delta": ci.estimate,
        "ci": [ci.low, ci.high],
        "p_noninferior": p_ni,
        "p_regression": 1.0 - p_ni,
        "n": len(xb),
        "test": "Tango paired score test on task outcomes",
    }


def allowed_margin(margin: float | None, margin_pct: float | None, baseline: float) -> float:
    """The drop a relative check allows: ``margin``, ``margin_pct`` % of the baseline's
    value, or the larger of the two when both are given."""
    options = [
        m for m in (margin, None if margin_pct is None else baseline * margin_pct / 100) if m is not None
    ]
    return max(options, default=0.0)


def _continuous(
    pairing: Pairing,
    metric: str,
    sign: float,
    margin: float | None,
    margin_pct: float | None,
    confidence: float,
) -> dict[str, Any] | str:
    name = "success" if metric == "success_rate" else metric
    va, vb = pairing.values(name)
    both = ~np.isnan(va) & ~np.isnan(vb)
    clusters = pairing.unit_task[both]
    if np.unique(clusters).size < 2:
        have = [r.run_id for r in (pairing.a, pairing.b) if r.measured(name)]
        return f"{metric} is measured on fewer than two common tasks (runs with it: {have or 'none'})"
    a, b = va[both], vb[both]
    allowed = allowed_margin(margin, margin_pct, abs(float(a.mean())))
    shifted = sign * (b - a) + allowed
    ci = paired_mean_difference(b, a, clusters=clusters, confidence=confidence)
    return {
        "a": float(a.mean()),
        "b": float(b.mean()),
        "delta": ci.estimate,
        "ci": [ci.low, ci.high],
        "margin": allowed,
        "n": int(a.size),
        "p_regression": sign_flip_test(shifted, clusters=clusters, alternative="less").p_value,
        "p_noninferior": sign_flip_test(shifted, clusters=clusters, alternative="greater").p_value,
        "test": "sign-flip test of the differences shifted by the margin, clustered by task",
    }


def relative_checks(
    policy: GatePolicy, run: RunLike, baseline: RunLike, pairing: Pairing | None = None
) -> list[CheckResult]:
    """Evaluate every relative check of ``policy`` for ``run`` against ``baseline``."""
    if pairing is None:
        pairing = pair_runs(
            baseline,
            run,
            match=policy.match,
            task_outcome=policy.task_outcome,
            common_only=policy.common_only,
        )
    stats: list[dict[str, Any] | str] = []
    for i, check in enumerate(policy.relative):
        alpha = check.alpha or policy.alpha
        direction = check.direction or direction_of(check.metric)
        if direction is None:
            raise AssayError(
                f"{policy.where(f'relative[{i}]')}: relative[{i}].direction: assay does not know whether "
                f"higher or lower {check.metric} is better; add direction: higher or direction: lower"
            )
        sign = 1.0 if direction == "higher" else -1.0
        if check.metric == "quality":
            base_rate = float(np.mean(pairing.a_pass))
            margin = allowed_margin(check.margin, check.margin_pct, base_rate)
            result: dict[str, Any] | str = _quality(pairing, min(margin, 0.999), 1 - 2 * alpha)
            if isinstance(result, dict):
                result["margin"] = margin
        else:
            result = _continuous(pairing, check.metric, sign, check.margin, check.margin_pct, 1 - 2 * alpha)
        stats.append(result)
    tested: list[dict[str, Any]] = [
        s
        for c, s in zip(policy.relative, stats, strict=True)
        if c.test == "regression" and isinstance(s, dict)
    ]
    if policy.adjust != "none" and tested:
        adjusted = adjust_pvalues([float(s["p_regression"]) for s in tested], policy.adjust)
        for s, p in zip(tested, adjusted, strict=True):
            s["p_adjusted"] = p
    return [
        _result(policy, i, check, s, pairing)
        for i, (check, s) in enumerate(zip(policy.relative, stats, strict=True))
    ]


def _moved(metric: str, a: float, b: float, drop: float, margin: float) -> str:
    """``tasks solved 100.0% → 93.0% (7.0 pts worse; allowed 5.0)``."""
    if metric == "quality":
        side = f"{abs(drop) * 100:.1f} pts {'worse' if drop > 0 else 'better'}" if drop else "no change"
        return f"tasks solved {a:.1%} → {b:.1%} ({side}; allowed {margin * 100:.1f} pts)"
    side = f"{abs(drop):.3g} {'worse' if drop > 0 else 'better'}" if drop else "no change"
    return f"{metric} {a:.4g} → {b:.4g} ({side}; allowed {margin:.3g})"


def _result(
    policy: GatePolicy, i: int, check: RelativeCheck, s: dict[str, Any] | str, pairing: Pairing
) -> CheckResult:
    name = check.name or f"{check.metric} vs baseline"
    where = policy.where(f"relative[{i}]")
    alpha = check.alpha or policy.alpha
    given = [
        f"{check.margin:g}" if check.margin is not None else "",
        f"{check.margin_pct:g}%" if check.margin_pct is not None else "",
    ]
    margin_text = "margin " + " or ".join(g for g in given if g) + (" (the larger)" if all(given) else "")
    threshold = f"{check.test}, {margin_text}, alpha {alpha:g}"
    if isinstance(s, str):
        return CheckResult(
            "relative", name, "fail", f"cannot check {check.metric}: {s}", None, threshold, where
        )
    direction = check.direction or direction_of(check.metric)
    drop = -s["delta"] if direction == "higher" else s["delta"]
    moved = _moved(check.metric, s["a"], s["b"], drop, s["margin"])
    details = {k: v for k, v in s.items() if k not in ("test",)} | {
        "test": s["test"],
        "units": pairing.n_units,
    }
    if check.test == "regression":
        p = s.get("p_adjusted", s["p_regression"])
        failed = p < alpha
        label = f"p={p:.3g}" + (f" ({policy.adjust})" if "p_adjusted" in s else "")
        why = "a drop beyond the margin is shown" if failed else "no drop beyond the margin is shown"
        return CheckResult(
            "relative",
            name,
            "fail" if failed else "pass",
            f"{moved}: {why} ({label})",
            s["delta"],
            threshold,
            where,
            details,
        )
    p = s["p_noninferior"]
    passed = p < alpha
    why = "non-inferiority is shown" if passed else "non-inferiority is not shown"
    return CheckResult(
        "relative",
        name,
        "pass" if passed else "fail",
        f"{moved}: {why} (p={p:.3g})",
        s["delta"],
        threshold,
        where,
        details,
    )
