"""Distribution-free confidence intervals of quantiles (latency p50 / p95 / p99).

The interval of the p-quantile is a pair of order statistics ``(x_(l), x_(u))`` chosen from
the binomial distribution of the number of observations below the quantile, ``B(n, p)``:
``P(x_(l) <= q_p <= x_(u)) >= confidence`` for any continuous distribution, with no
resampling. The ranks are those of ``scipy.stats.quantile_test(...).confidence_interval()``
(two-sided): ``l = ppf(α/2) − 1`` and ``u = isf(α/2)`` (0-based), so the two agree. With
too few observations a side of the interval does not exist (``None``): for example the
upper end of a 95% interval of p99 needs 368 observations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._checks import as_float_array, check_confidence, check_probability


@dataclass(frozen=True)
class QuantileCI:
    """The p-quantile of a sample (linear interpolation, as ``numpy.quantile``) with a
    distribution-free order-statistic interval; ``low``/``high`` are None when the sample
    is too small for that side."""

    p: float
    estimate: float
    low: float | None
    high: float | None
    confidence: float
    n: int


def _binom_cdf(n: int, p: float) -> list[float]:
    """``P(X <= k)`` for ``k = 0..n``, ``X ~ B(n, p)`` (log-space pmf, summed in order)."""
    if p <= 0.0:
        return [1.0] * (n + 1)
    if p >= 1.0:
        return [0.0] * n + [1.0]
    lp, lq = math.log(p), math.log1p(-p)
    lg = math.lgamma(n + 1)
    total = 0.0
    out: list[float] = []
    for k in range(n + 1):
        total += math.exp(lg - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * lp + (n - k) * lq)
        out.append(min(total, 1.0))
    return out


def order_statistic_ranks(n: int, p: float, confidence: float = 0.95) -> tuple[int | None, int | None]:
    """0-based ranks ``(l, u)`` of the order statistics bounding the p-quantile of ``n``
    sorted observations at ``confidence`` (two-sided); None where the rank falls outside
    the sample."""
    check_probability(p, "p")
    check_confidence(confidence)
    if n < 1:
        raise ValueError("n must be at least 1")
    tail = (1.0 - confidence) / 2.0
    cdf = _binom_cdf(n, p)
    eps = 1e-12  # round-off: a CDF that should equal the tail exactly counts as reaching it
    # ppf(tail): the smallest k with cdf[k] >= tail; isf(tail): the smallest k with sf(k) <= tail.
    ppf = next(k for k, c in enumerate(cdf) if c >= tail - eps)
    isf = next(k for k, c in enumerate(cdf) if 1.0 - c <= tail + eps)
    low = ppf - 1
    return (low if low >= 0 else None), (isf if isf < n else None)


def quantile_interval(values: npt.ArrayLike, p: float, confidence: float = 0.95) -> QuantileCI:
    """The p-quantile of ``values`` with a distribution-free interval (see the module)."""
    data = np.sort(as_float_array(values, "values"))
    low, high = order_statistic_ranks(int(data.size), p, confidence)
    return QuantileCI(
        p=float(p),
        estimate=float(np.quantile(data, p)),
        low=None if low is None else float(data[low]),
        high=None if high is None else float(data[high]),
        confidence=float(confidence),
        n=int(data.size),
    )
