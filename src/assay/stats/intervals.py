"""Confidence intervals and standard errors for rates: Wilson score interval, binomial SE."""

from __future__ import annotations

import math

from ._checks import check_count, check_probability, z_two_sided


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial rate ``successes / n``.

    ``center = (p + z²/2n) / (1 + z²/n)``, ``half = z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n)``.
    Unlike the Wald interval it never leaves [0, 1] and does not collapse to zero width
    at 0% or 100% (Wilson 1927; Agresti & Coull 1998). Matches
    ``statsmodels.stats.proportion.proportion_confint(method="wilson")``.

    >>> low, high = wilson_interval(70, 100)
    >>> round(low, 3), round(high, 3)
    (0.604, 0.781)
    """
    successes = check_count(successes, "successes")
    n = check_count(n, "n")
    if n == 0:
        raise ValueError("n must be positive: a rate over zero trials has no interval")
    if successes > n:
        raise ValueError(f"successes ({successes}) cannot exceed n ({n})")
    low, high = wilson_bounds(successes / n, n, confidence)
    low = 0.0 if successes == 0 else low
    high = 1.0 if successes == n else high
    return low, high


def wilson_bounds(rate: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score bounds for an observed ``rate`` over an effective sample size ``n``
    (which may be fractional, as with a design-effect-adjusted n)."""
    check_probability(rate, "rate")
    if n <= 0:
        raise ValueError("n must be positive")
    z = z_two_sided(confidence)
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (rate + z2 / (2.0 * n)) / denom
    half = z * math.sqrt(rate * (1.0 - rate) / n + z2 / (4.0 * n * n)) / denom
    return max(0.0, center - half), min(1.0, center + half)


def binomial_se(rate: float, n: int) -> float:
    """Standard error ``sqrt(p(1-p)/n)`` of a rate measured on ``n`` independent cases.

    70% on 100 cases gives ≈ 0.046: a 95% interval of roughly ±9 points, which is why
    a 3-point difference on a 100-task suite is usually noise.
    """
    check_probability(rate, "rate")
    n = check_count(n, "n")
    if n == 0:
        raise ValueError("n must be positive: a rate over zero cases has no standard error")
    return math.sqrt(rate * (1.0 - rate) / n)
