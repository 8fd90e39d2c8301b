"""Planning: sample sizes, power and minimum detectable effects.

Two designs: two independent arms (compare two success rates) and paired binary outcomes
on the same tasks (McNemar). All tests are two-sided at level ``alpha``; sample sizes
are rounded up.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

from ._checks import check_alpha, check_probability, normal_cdf, z_quantile


def _z_alpha_beta(alpha: float, power: float) -> tuple[float, float]:
    check_alpha(alpha)
    check_alpha(power, "power")
    return z_quantile(1.0 - alpha / 2.0), z_quantile(power)


def _n_two_proportions(p1: float, p2: float, za: float, zb: float) -> float:
    pbar = (p1 + p2) / 2.0
    num = za * math.sqrt(2.0 * pbar * (1.0 - pbar)) + zb * math.sqrt(p1 * (1.0 - p1) + p2 * (1.0 - p2))
    return num**2 / (p1 - p2) ** 2


def sample_size_two_proportions(p1: float, p2: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Trials per arm to detect ``p1`` vs ``p2`` with a two-sided two-proportion z-test.

    Classic pooled-variance formula without continuity correction (Fleiss, Levin & Paik
    2003, eq. 4.14 without the correction term)::

        n = (z_{1-α/2}·sqrt(2·p̄·q̄) + z_{1-β}·sqrt(p1q1 + p2q2))² / (p1 - p2)²

    with ``p̄ = (p1 + p2)/2``, rounded up. 0.75 vs 0.70 at α = .05, power .8 → 1251 per
    arm (the continuity-corrected variant gives ≈ 1291). Equals ``statsmodels``
    ``samplesize_proportions_2indep_onetail(p1 - p2, p2, power, alpha=alpha,
    alternative="two-sided")`` before rounding.
    """
    check_probability(p1, "p1")
    check_probability(p2, "p2")
    if p1 == p2:
        raise ValueError("p1 and p2 are equal: no sample size can detect a zero difference")
    za, zb = _z_alpha_beta(alpha, power)
    return math.ceil(_n_two_proportions(p1, p2, za, zb) - 1e-9)


def power_two_proportions(p1: float, p2: float, n: int, alpha: float = 0.05) -> float:
    """Power of the two-sided two-proportion z-test with ``n`` trials per arm.

    ``Φ((|p1 - p2|·sqrt(n) - z_{1-α/2}·sqrt(2p̄q̄)) / sqrt(p1q1 + p2q2))``: the inverse of
    :func:`sample_size_two_proportions` (the negligible opposite tail is ignored).
    """
    check_probability(p1, "p1")
    check_probability(p2, "p2")
    if n < 1:
        raise ValueError("n must be at least 1")
    za = z_quantile(1.0 - check_alpha(alpha) / 2.0)
    pbar = (p1 + p2) / 2.0
    sd_alt = math.sqrt(p1 * (1.0 - p1) + p2 * (1.0 - p2))
    if sd_alt == 0.0:
        return 1.0 if p1 != p2 else 0.0
    return normal_cdf((abs(p1 - p2) * math.sqrt(n) - za * math.sqrt(2.0 * pbar * (1.0 - pbar))) / sd_alt)


def _bisect_decreasing(f: Callable[[float], float], target: float, lo: float, hi: float) -> float:
    """x in (lo, hi] with f(x) = target for f decreasing in x (bisection, 200 steps)."""
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if f(mid) > target:
            lo = mid
        else:
            hi = mid
    return hi


def mde_two_proportions(
    n: int,
    p_baseline: float,
    alpha: float = 0.05,
    power: float = 0.8,
    direction: Literal["increase", "decrease"] = "increase",
) -> float:
    """Minimum detectable difference from ``p_baseline`` with ``n`` trials per arm.

    The smallest ``d > 0`` such that :func:`sample_size_two_proportions` of
    ``(p_baseline ± d, p_baseline)`` (before rounding) equals ``n``; found by bisection.
    Raises ValueError when even the largest possible change is not detectable.
    """
    check_probability(p_baseline, "p_baseline")
    if n < 1:
        raise ValueError("n must be at least 1")
    za, zb = _z_alpha_beta(alpha, power)
    if direction not in ("increase", "decrease"):
        raise ValueError(f"direction must be 'increase' or 'decrease', not {direction!r}")
    sign = 1.0 if direction == "increase" else -1.0
    room = 1.0 - p_baseline if sign > 0 else p_baseline
    if room <= 0.0:
        raise ValueError(f"a rate of {p_baseline} cannot {direction}")

    def needed(d: float) -> float:
        return _n_two_proportions(p_baseline + sign * d, p_baseline, za, zb)

    if needed(room) > n:
        raise ValueError(f"n={n} per arm cannot detect any {direction} from {p_baseline}")
    return _bisect_decreasing(needed, float(n), 0.0, room)


def _n_mcnemar(psi: float, delta: float, za: float, zb: float) -> float:
    return (za * math.sqrt(psi) + zb * math.sqrt(max(psi - delta**2, 0.0))) ** 2 / delta**2


def sample_size_mcnemar(p10: float, p01: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Pairs needed for a two-sided McNemar test (Connor 1987, Biometrics 43:207).

    ``p10``/``p01`` are the expected shares of pairs where only the first / only the
    second configuration passes. With ``ψ = p10 + p01`` and ``δ = p10 - p01``::

        n = (z_{1-α/2}·sqrt(ψ) + z_{1-β}·sqrt(ψ - δ²))² / δ²

    rounded up; p10 = .10, p01 = .05 → 469 pairs.
    """
    check_probability(p10, "p10")
    check_probability(p01, "p01")
    if p10 + p01 > 1.0:
        raise ValueError("p10 + p01 cannot exceed 1")
    if p10 == p01:
        raise ValueError("p10 and p01 are equal: no sample size can detect a zero difference")
    za, zb = _z_alpha_beta(alpha, power)
    return math.ceil(_n_mcnemar(p10 + p01, p10 - p01, za, zb) - 1e-9)


def power_mcnemar(p10: float, p01: float, n: int, alpha: float = 0.05) -> float:
    """Power of the two-sided McNemar test with ``n`` pairs (inverse of Connor's formula)."""
    check_probability(p10, "p10")
    check_probability(p01, "p01")
    if n < 1:
        raise ValueError("n must be at least 1")
    za = z_quantile(1.0 - check_alpha(alpha) / 2.0)
    psi, delta = p10 + p01, p10 - p01
    sd_alt = math.sqrt(max(psi - delta**2, 0.0))
    if sd_alt == 0.0:
        return 1.0 if delta != 0 else 0.0
    return normal_cdf((abs(delta) * math.sqrt(n) - za * math.sqrt(psi)) / sd_alt)


def mde_mcnemar(n: int, discordant_rate: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Minimum detectable ``p10 - p01`` with ``n`` pairs when ``p10 + p01 = discordant_rate``.

    Inverts Connor's formula by bisection. More discordance means more noise: the same
    ``n`` detects smaller differences when the configurations disagree on fewer tasks.
    """
    check_probability(discordant_rate, "discordant_rate")
    if discordant_rate == 0.0:
        raise ValueError("discordant_rate must be positive: without discordant pairs nothing can be detected")
    if n < 1:
        raise ValueError("n must be at least 1")
    za, zb = _z_alpha_beta(alpha, power)

    def needed(d: float) -> float:
        return _n_mcnemar(discordant_rate, d, za, zb)

    if needed(discordant_rate) > n:
        raise ValueError(f"n={n} pairs cannot detect any difference at discordant rate {discordant_rate}")
    return _bisect_decreasing(needed, float(n), 0.0, discordant_rate)
