"""Differences of two success rates: effect sizes with intervals and non-inferiority tests.

Unpaired (two independent samples) and paired (both configurations on the same tasks)
variants. Differences are always ``first - second`` (e.g. candidate - baseline).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from ._checks import check_count, normal_sf, z_two_sided
from .intervals import wilson_interval


@dataclass(frozen=True)
class DifferenceCI:
    """A difference of two proportions with its confidence interval."""

    estimate: float
    low: float
    high: float
    confidence: float
    method: str


@dataclass(frozen=True)
class TestResult:
    """A one-sided test: its z statistic, p-value and the method used."""

    statistic: float
    p_value: float
    method: str


def _z_statistic(diff: float, var: float) -> float:
    """``diff / sqrt(var)``; ±inf (or 0) when the variance is zero."""
    if var > 0.0:
        return diff / math.sqrt(var)
    return math.inf if diff > 0 else (-math.inf if diff < 0 else 0.0)


def _check_arm(successes: int, n: int, name: str) -> tuple[int, int]:
    successes = check_count(successes, f"successes{name}")
    n = check_count(n, f"n{name}")
    if n == 0:
        raise ValueError(f"n{name} must be positive")
    if successes > n:
        raise ValueError(f"successes{name} ({successes}) cannot exceed n{name} ({n})")
    return successes, n


def diff_proportions_unpaired(
    x1: int,
    n1: int,
    x2: int,
    n2: int,
    confidence: float = 0.95,
    method: Literal["newcombe", "wald"] = "newcombe",
) -> DifferenceCI:
    """``x1/n1 - x2/n2`` for two independent samples with a confidence interval.

    ``"newcombe"`` is Newcombe's (1998) hybrid score interval (method 10), built from
    the Wilson intervals ``(l_i, u_i)`` of each rate::

        low  = d - sqrt((p1 - l1)² + (u2 - p2)²)
        high = d + sqrt((u1 - p1)² + (p2 - l2)²)

    ``"wald"`` is ``d ± z·sqrt(p1q1/n1 + p2q2/n2)`` (poor near 0 or 1). Both match
    ``statsmodels`` ``confint_proportions_2indep`` (methods ``"newcomb"``, ``"wald"``).
    """
    x1, n1 = _check_arm(x1, n1, "1")
    x2, n2 = _check_arm(x2, n2, "2")
    p1, p2 = x1 / n1, x2 / n2
    d = p1 - p2
    if method == "wald":
        z = z_two_sided(confidence)
        half = z * math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
        return DifferenceCI(d, d - half, d + half, confidence, method)
    if method != "newcombe":
        raise ValueError(f"method must be 'newcombe' or 'wald', not {method!r}")
    l1, u1 = wilson_interval(x1, n1, confidence)
    l2, u2 = wilson_interval(x2, n2, confidence)
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return DifferenceCI(d, low, high, confidence, method)


def paired_counts(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[int, int, int, int]:
    """The paired 2x2 table ``(n11, n10, n01, n00)`` of two aligned binary outcome arrays.

    ``n10`` counts pairs where only ``x`` passed, ``n01`` pairs where only ``y`` passed.
    """
    xa = np.asarray(x)
    ya = np.asarray(y)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise ValueError("x and y must be 1-D arrays of the same length")
    for name, arr in (("x", xa), ("y", ya)):
        if not np.all(np.isin(arr, (0, 1))):
            raise ValueError(f"{name} must contain only 0/1 (or False/True) outcomes")
    xb, yb = xa.astype(bool), ya.astype(bool)
    return (
        int(np.sum(xb & yb)),
        int(np.sum(xb & ~yb)),
        int(np.sum(~xb & yb)),
        int(np.sum(~xb & ~yb)),
    )


def diff_proportions_paired(
    n11: int,
    n10: int,
    n01: int,
    n00: int,
    confidence: float = 0.95,
    method: Literal["newcombe", "wald"] = "newcombe",
) -> DifferenceCI:
    """Difference of paired rates ``p1 - p2 = (n10 - n01) / n`` with a confidence interval.

    ``"newcombe"``: Newcombe (1998, Stat Med 17:2635, method 10): Wilson intervals for
    the two marginal rates combined with the correlation ``φ`` between them::

        low  = d - sqrt((p1 - l1)² - 2φ(p1 - l1)(u2 - p2) + (u2 - p2)²)
        high = d + sqrt((u1 - p1)² - 2φ(u1 - p1)(p2 - l2) + (p2 - l2)²)

    with ``φ = C / sqrt(r1·r0·c1·c0)`` (margins), ``A = n11·n00 - n10·n01`` and
    ``C = A - n/2`` if ``A > n/2``, ``0`` if ``0 <= A <= n/2``, ``A`` if ``A < 0``
    (``φ = 0`` when a margin is empty), as in Newcombe's paper and the R packages
    ``contingencytables`` and ``biostatUZH``.
    ``"wald"``: ``d ± z·sqrt(n10 + n01 - (n10 - n01)²/n) / n`` (zero width without
    discordant pairs; not recommended for small samples).
    """
    counts = [check_count(v, name) for v, name in ((n11, "n11"), (n10, "n10"), (n01, "n01"), (n00, "n00"))]
    n11, n10, n01, n00 = counts
    n = sum(counts)
    if n == 0:
        raise ValueError("the paired table is empty; at least one pair is needed")
    d = (n10 - n01) / n
    if method == "wald":
        z = z_two_sided(confidence)
        half = z * math.sqrt(max(n10 + n01 - (n10 - n01) ** 2 / n, 0.0)) / n
        return DifferenceCI(d, d - half, d + half, confidence, method)
    if method != "newcombe":
        raise ValueError(f"method must be 'newcombe' or 'wald', not {method!r}")
    r1, r0, c1, c0 = n11 + n10, n01 + n00, n11 + n01, n10 + n00
    p1, p2 = r1 / n, c1 / n
    l1, u1 = wilson_interval(r1, n, confidence)
    l2, u2 = wilson_interval(c1, n, confidence)
    phi = 0.0
    if min(r1, r0, c1, c0) > 0:
        a = n11 * n00 - n10 * n01
        corr = a - n / 2 if a > n / 2 else (0.0 if a >= 0 else float(a))
        phi = corr / math.sqrt(float(r1) * r0 * c1 * c0)
    dl1, du2 = p1 - l1, u2 - p2
    du1, dl2 = u1 - p1, p2 - l2
    low = d - math.sqrt(max(dl1**2 - 2 * phi * dl1 * du2 + du2**2, 0.0))
    high = d + math.sqrt(max(du1**2 - 2 * phi * du1 * dl2 + dl2**2, 0.0))
    return DifferenceCI(d, max(-1.0, low), min(1.0, high), confidence, method)


def _restricted_mle_unpaired(x1: int, n1: int, x2: int, n2: int, delta: float) -> tuple[float, float]:
    """MLE of ``(p1, p2)`` under ``p1 - p2 = delta`` (Miettinen & Nurminen 1985 cubic)."""
    n, x = n1 + n2, x1 + x2
    if delta == 0.0:
        pooled = x / n
        return pooled, pooled
    a3 = n
    a2 = (n1 + 2 * n2) * delta - n - x
    a1 = (n2 * delta - n - 2 * x2) * delta + x
    a0 = x2 * delta * (1 - delta)
    q = (a2 / (3 * a3)) ** 3 - a1 * a2 / (6 * a3**2) + a0 / (2 * a3)
    p = math.copysign(math.sqrt(max((a2 / (3 * a3)) ** 2 - a1 / (3 * a3), 0.0)), q)
    if p == 0.0:
        p2 = -a2 / (3 * a3)
    else:
        angle = (math.pi + math.acos(max(-1.0, min(1.0, q / p**3)))) / 3
        p2 = 2 * p * math.cos(angle) - a2 / (3 * a3)
    return p2 + delta, p2


def noninferiority_unpaired(
    x1: int,
    n1: int,
    x2: int,
    n2: int,
    margin: float,
    method: Literal["score", "wald"] = "score",
    correction: bool = True,
) -> TestResult:
    """One-sided non-inferiority test of rate 1 (candidate) against rate 2 (baseline).

    H0: ``p1 - p2 <= -margin`` (the candidate is worse by at least the margin) against
    H1: ``p1 - p2 > -margin``. A small p-value shows the candidate is not worse by
    ``margin`` or more. ``"score"`` is the Farrington–Manning score test with the
    variance at the restricted MLE under H0 (Miettinen–Nurminen closed form) and,
    with ``correction=True``, the Miettinen–Nurminen factor ``N/(N-1)``; ``"wald"``
    uses the observed rates. ``"wald"`` and ``margin=0`` match ``statsmodels``
    ``test_proportions_2indep(..., value=-margin, alternative="larger")``; for
    ``"score"`` with a margin statsmodels <= 0.15 uses a wrong coefficient in the
    restricted MLE (statsmodels issue #10269), so results differ from it there; ours
    maximise the restricted likelihood.
    """
    x1, n1 = _check_arm(x1, n1, "1")
    x2, n2 = _check_arm(x2, n2, "2")
    if not 0.0 <= margin < 1.0:
        raise ValueError(f"margin must be in [0, 1), got {margin}")
    delta = -float(margin)
    p1, p2 = x1 / n1, x2 / n2
    if method == "wald":
        var = p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2
    elif method == "score":
        r1, r2 = _restricted_mle_unpaired(x1, n1, x2, n2, delta)
        var = r1 * (1 - r1) / n1 + r2 * (1 - r2) / n2
        if correction:
            var *= (n1 + n2) / (n1 + n2 - 1)
    else:
        raise ValueError(f"method must be 'score' or 'wald', not {method!r}")
    diff = p1 - p2 - delta
    z = _z_statistic(diff, var)
    return TestResult(z, normal_sf(z), method)


def noninferiority_paired(n10: int, n01: int, n: int, margin: float) -> TestResult:
    """One-sided non-inferiority score test for paired rates (Tango 1998; Nam 1997).

    ``n10``: pairs where only the candidate passed, ``n01``: only the baseline passed,
    ``n``: all pairs. H0: ``p_candidate - p_baseline <= -margin``. With ``δ = -margin``
    the restricted MLE of the baseline-only cell solves ``2n·q² + B·q + C = 0`` with
    ``B = -(n10 + n01) + δ(2n - n10 + n01)``, ``C = -n01·δ(1 - δ)``, and::

        z = (n10 - n01 - nδ) / sqrt(n(2q + δ - δ²))

    At ``margin = 0`` this is the (uncorrected) McNemar z statistic.
    """
    n10 = check_count(n10, "n10")
    n01 = check_count(n01, "n01")
    n = check_count(n, "n")
    if n == 0 or n10 + n01 > n:
        raise ValueError(f"need n >= n10 + n01 and n > 0, got n10={n10}, n01={n01}, n={n}")
    if not 0.0 <= margin < 1.0:
        raise ValueError(f"margin must be in [0, 1), got {margin}")
    delta = -float(margin)
    b_coef = -(n10 + n01) + delta * (2 * n - n10 + n01)
    c_coef = -n01 * delta * (1 - delta)
    q = (-b_coef + math.sqrt(b_coef**2 - 8 * n * c_coef)) / (4 * n)
    var = n * (2 * q + delta - delta**2)
    diff = n10 - n01 - n * delta
    z = _z_statistic(diff, var)
    return TestResult(z, normal_sf(z), "tango-score")
