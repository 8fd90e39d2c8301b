"""Sample sizes and power of the non-inferiority tests of :mod:`.proportions`.

A non-inferiority test (one-sided at ``alpha``) shows the candidate's rate ``p_new`` is
not worse than the baseline's ``p_ref`` by ``margin`` or more. Planning needs the rates
expected under the alternative (often ``p_new = p_ref``: "as good") and uses the
variance of the test's own statistic under H0 (at the restricted maximum-likelihood
rates on the boundary ``p_new - p_ref = -margin``) and under H1:

    n = ((z_{1-alpha}·σ0 + z_{power}·σ1) / (p_new - p_ref + margin))²

- two independent arms, Farrington–Manning score test (:func:`noninferiority_unpaired`):
  ``σ0² = p̃1q̃1 + p̃2q̃2`` (Miettinen–Nurminen restricted MLE), ``σ1² = p1q1 + p2q2``;
  n is per arm. With ``margin = 0`` this is the classic pooled formula, equal to
  ``statsmodels`` ``samplesize_proportions_2indep_onetail(..., alternative="larger")``.
- paired outcomes on the same tasks, Tango's score test (:func:`noninferiority_paired`;
  Nam 1997): with ``p10``/``p01`` the shares of tasks only the candidate / only the
  baseline solves (``ψ = p10 + p01``, ``d = p10 - p01``), ``σ0² = 2q̃ + δ - δ²`` at
  ``δ = -margin`` and ``σ1² = ψ - d²``; n is tasks. With ``margin = 0`` it is Connor's
  McNemar formula at one-sided ``alpha``.
"""

from __future__ import annotations

import math

from ._checks import check_alpha, check_probability, normal_cdf, z_quantile
from .proportions import _restricted_mle_unpaired


def _check_margin(margin: float) -> float:
    if not 0.0 <= margin < 1.0:
        raise ValueError(f"margin must be in [0, 1), got {margin}")
    return float(margin)


def _sigmas_unpaired(p_ref: float, p_new: float, margin: float) -> tuple[float, float]:
    r1, r2 = _restricted_mle_unpaired(p_new, 1, p_ref, 1, -margin)  # type: ignore[arg-type]
    r1, r2 = min(max(r1, 0.0), 1.0), min(max(r2, 0.0), 1.0)
    s0 = math.sqrt(r1 * (1 - r1) + r2 * (1 - r2))
    s1 = math.sqrt(p_new * (1 - p_new) + p_ref * (1 - p_ref))
    return s0, s1


def _gap(p_ref: float, p_new: float, margin: float) -> float:
    gap = p_new - p_ref + margin
    if gap <= 0:
        raise ValueError(
            f"the expected difference {p_new - p_ref:+g} is not above -margin ({-margin:g}): "
            "no sample size shows non-inferiority"
        )
    return gap


def sample_size_noninferiority(
    p_ref: float, p_new: float, margin: float, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Trials per arm for the Farrington–Manning non-inferiority test (one-sided ``alpha``)."""
    check_probability(p_ref, "p_ref")
    check_probability(p_new, "p_new")
    margin = _check_margin(margin)
    za, zb = z_quantile(1 - check_alpha(alpha)), z_quantile(check_alpha(power, "power"))
    s0, s1 = _sigmas_unpaired(p_ref, p_new, margin)
    n = ((za * s0 + zb * s1) / _gap(p_ref, p_new, margin)) ** 2
    return max(1, math.ceil(n - 1e-9))


def power_noninferiority(p_ref: float, p_new: float, margin: float, n: int, alpha: float = 0.05) -> float:
    """Power of the Farrington–Manning test with ``n`` trials per arm."""
    margin = _check_margin(margin)
    za = z_quantile(1 - check_alpha(alpha))
    s0, s1 = _sigmas_unpaired(p_ref, p_new, margin)
    if s1 == 0:
        return 1.0 if p_new - p_ref + margin > 0 else 0.0
    return normal_cdf((math.sqrt(n) * (p_new - p_ref + margin) - za * s0) / s1)


def _sigmas_paired(p10: float, p01: float, margin: float) -> tuple[float, float]:
    delta = -margin
    b = -(p10 + p01) + delta * (2 - p10 + p01)
    c = -p01 * delta * (1 - delta)
    q = (-b + math.sqrt(max(b * b - 8 * c, 0.0))) / 4
    s0 = math.sqrt(max(2 * q + delta - delta * delta, 0.0))
    s1 = math.sqrt(max(p10 + p01 - (p10 - p01) ** 2, 0.0))
    return s0, s1


def _paired_cells(p_ref: float, p_new: float, discordance: float) -> tuple[float, float]:
    d = p_new - p_ref
    if discordance < abs(d) or discordance > 1:
        raise ValueError(
            f"discordance {discordance:g} must be at least |p_new - p_ref| ({abs(d):g}) and at most 1"
        )
    return (discordance + d) / 2, (discordance - d) / 2


def sample_size_noninferiority_paired(
    p_ref: float, p_new: float, margin: float, discordance: float, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Tasks (pairs) for Tango's paired non-inferiority test (one-sided ``alpha``);
    ``discordance`` is the expected share of tasks the two disagree on."""
    check_probability(p_ref, "p_ref")
    check_probability(p_new, "p_new")
    margin = _check_margin(margin)
    p10, p01 = _paired_cells(p_ref, p_new, discordance)
    za, zb = z_quantile(1 - check_alpha(alpha)), z_quantile(check_alpha(power, "power"))
    s0, s1 = _sigmas_paired(p10, p01, margin)
    n = ((za * s0 + zb * s1) / _gap(p_ref, p_new, margin)) ** 2
    return max(1, math.ceil(n - 1e-9))


def power_noninferiority_paired(
    p_ref: float, p_new: float, margin: float, discordance: float, n: int, alpha: float = 0.05
) -> float:
    """Power of Tango's paired non-inferiority test with ``n`` tasks."""
    margin = _check_margin(margin)
    p10, p01 = _paired_cells(p_ref, p_new, discordance)
    za = z_quantile(1 - check_alpha(alpha))
    s0, s1 = _sigmas_paired(p10, p01, margin)
    if s1 == 0:
        return 1.0 if p_new - p_ref + margin > 0 else 0.0
    return normal_cdf((math.sqrt(n) * (p_new - p_ref + margin) - za * s0) / s1)
