"""Paired comparisons of two configurations run on the same tasks.

When both configurations run the same tasks, compare them task by task: the shared
difficulty of each task cancels and the test is far more sensitive than comparing two
independent rates. Binary outcomes: McNemar's exact test on the discordant pairs.
Continuous scores: a paired bootstrap interval and a sign-flip permutation test of the
mean difference.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from ._checks import as_float_array, check_count, rng_from
from .bootstrap import BootstrapCI, bootstrap_ci
from .clustered import cluster_codes

Alternative = Literal["two-sided", "greater", "less"]


def _log_binom_cdf_half(k: int, n: int) -> float:
    """log P(X <= k) for X ~ Binomial(n, 1/2), computed in log space."""
    logs = np.array([math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(k + 1)])
    top = float(logs.max())
    return top + math.log(float(np.sum(np.exp(logs - top)))) - n * math.log(2.0)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts ``b`` and ``c``.

    ``b`` = pairs where only the first configuration passed, ``c`` = pairs where only
    the second did. Under H0 each discordant pair is a fair coin, so
    ``p = min(1, 2·P(X <= min(b, c)))`` with ``X ~ Binomial(b + c, 1/2)``; ``p = 1`` when
    ``b = c = 0``. Concordant pairs carry no information about the difference.
    Matches ``scipy.stats.binomtest(b, b + c, 0.5).pvalue``.
    """
    b = check_count(b, "b")
    c = check_count(c, "c")
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    if n <= 1000:
        tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    else:
        tail = math.exp(_log_binom_cdf_half(k, n))
    return min(1.0, 2.0 * tail)


def paired_differences(x: npt.ArrayLike, y: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``x - y`` element by element, after checking the two arrays pair up."""
    xa = as_float_array(x, "x")
    ya = as_float_array(y, "y")
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must pair up: {xa.size} vs {ya.size} values")
    return xa - ya


def paired_mean_difference(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    *,
    clusters: Sequence[Hashable] | npt.ArrayLike | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> BootstrapCI:
    """Mean of ``x - y`` over pairs with a paired (optionally task-clustered) bootstrap CI.

    Pairs are resampled together, so the interval reflects the variability of the
    *difference*, not of each configuration separately. With ``clusters`` (task ids)
    whole tasks are resampled.
    """
    d = paired_differences(x, y)
    return bootstrap_ci(
        d, np.mean, clusters=clusters, n_resamples=n_resamples, confidence=confidence, seed=seed
    )


@dataclass(frozen=True)
class PermutationResult:
    """Result of a sign-flip permutation test of a mean difference."""

    statistic: float
    p_value: float
    exact: bool
    n_resamples: int
    alternative: str


def _tail_counts(
    flipped: npt.NDArray[np.float64], observed: float, alternative: Alternative, tol: float
) -> int:
    if alternative == "greater":
        return int(np.count_nonzero(flipped >= observed - tol))
    if alternative == "less":
        return int(np.count_nonzero(flipped <= observed + tol))
    return int(np.count_nonzero(np.abs(flipped) >= abs(observed) - tol))


def sign_flip_test(
    x: npt.ArrayLike,
    y: npt.ArrayLike | None = None,
    *,
    clusters: Sequence[Hashable] | npt.ArrayLike | None = None,
    alternative: Alternative = "two-sided",
    n_resamples: int = 10000,
    exact_max: int = 16,
    seed: int | np.random.Generator = 0,
) -> PermutationResult:
    """Sign-flip permutation test that the paired differences ``x - y`` are centred on 0.

    Under H0 (the two configurations are exchangeable within a pair) each difference is
    as likely to be positive as negative, so flipping signs at random gives the null
    distribution of the mean difference. With ``clusters`` whole tasks are flipped
    (their differences summed first). Zero differences are dropped (flipping them
    changes nothing). When at most ``exact_max`` non-zero units remain all 2^m flips are
    enumerated (exact p-value); otherwise ``n_resamples`` random flips give the Monte
    Carlo p-value ``(1 + #{as extreme}) / (1 + n_resamples)``, which is never zero and
    keeps the test valid. Pass only ``x`` to test a single sample of differences.
    """
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"alternative must be 'two-sided', 'greater' or 'less', not {alternative!r}")
    d = as_float_array(x, "x") if y is None else paired_differences(x, y)
    n_total = d.size
    if clusters is not None:
        codes = cluster_codes(clusters, n_total)
        d = np.bincount(codes, weights=d).astype(np.float64)
    units = d[d != 0.0]
    observed = float(units.sum()) / n_total
    scale = float(np.abs(units).sum()) / n_total if units.size else 0.0
    tol = 1e-9 * max(scale, 1e-300)
    m = units.size
    if m == 0:
        return PermutationResult(0.0, 1.0, True, 1, alternative)
    if m <= exact_max:
        bits = (np.arange(2**m)[:, None] >> np.arange(m)) & 1
        flipped = ((1 - 2 * bits) @ units) / n_total
        p = _tail_counts(flipped, observed, alternative, tol) / 2**m
        return PermutationResult(observed, float(p), True, 2**m, alternative)
    check_count(n_resamples, "n_resamples")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    rng = rng_from(seed)
    # Random signs as random bytes, eight units a byte: sum(s * u) = 2 * (sum of the units
    # whose bit is set) - sum(u), and each byte's part comes from a 256-entry table of the
    # partial sums of its eight units, so a flip costs m/8 lookups, not m products.
    cols = -(-m // 8)
    padded = np.zeros(cols * 8)
    padded[:m] = units
    bit_of = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float64)
    table = (padded.reshape(cols, 8) @ bit_of.T).ravel()  # table[256 * j + byte]
    column = (256 * np.arange(cols, dtype=np.intp))[None, :]
    total = float(units.sum())
    chunk = max(1, min(1024, (8 << 20) // (8 * cols)))
    hits = 0
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        raw = rng.integers(0, 256, size=(size, cols), dtype=np.uint8)
        # np.take on flat offsets: the same values as table[j, byte], gathered 3x faster;
        # the offsets widened first, then added in place (``column + raw`` mixes integer
        # types, a loop twice as slow as the gather)
        offsets = raw.astype(np.intp)
        offsets += column
        flipped = (2.0 * np.take(table, offsets).sum(axis=1) - total) / n_total
        hits += _tail_counts(flipped, observed, alternative, tol)
    p = (1 + hits) / (1 + n_resamples)
    return PermutationResult(observed, float(p), False, n_resamples, alternative)
