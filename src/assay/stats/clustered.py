"""Task-clustered (cluster-robust) standard error of a mean of per-trial scores.

Trials of the same task are not independent: an agent that fails a task tends to fail
all of its k trials. Treating k·T trials as independent understates the standard error
by up to a factor sqrt(k). The cluster-robust (CR1) variance of the mean treats each
task as one independent unit.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._checks import as_float_array, check_confidence, z_two_sided
from .intervals import wilson_bounds


@dataclass(frozen=True)
class ClusteredMean:
    """A mean of per-trial values with its task-clustered standard error and interval."""

    mean: float
    se: float
    low: float
    high: float
    confidence: float
    n: int
    n_clusters: int


def cluster_codes(clusters: Sequence[Hashable] | npt.ArrayLike, n: int) -> npt.NDArray[np.intp]:
    """Integer codes 0..G-1 for cluster labels (in order of first appearance, except
    for integer arrays, which are coded by value: fast for a million trials)."""
    array = np.asarray(clusters)
    if array.dtype.kind in "iu":
        if array.size != n:
            raise ValueError(f"clusters has {array.size} labels but there are {n} values")
        flat = array.reshape(-1)
        if flat.size and bool(np.all(flat[1:] >= flat[:-1])):  # sorted (tasks in order): no sort
            starts = np.ones(flat.size, dtype=np.intp)
            starts[0] = 0
            starts[1:] = flat[1:] != flat[:-1]
            return np.cumsum(starts, dtype=np.intp)
        return np.unique(flat, return_inverse=True)[1].astype(np.intp)
    labels = list(np.asarray(clusters, dtype=object).reshape(-1))
    if len(labels) != n:
        raise ValueError(f"clusters has {len(labels)} labels but there are {n} values")
    index: dict[Hashable, int] = {}
    codes = np.empty(n, dtype=np.intp)
    for i, label in enumerate(labels):
        codes[i] = index.setdefault(label, len(index))
    return codes


def clustered_se(values: npt.ArrayLike, clusters: Sequence[Hashable] | npt.ArrayLike) -> float:
    """Cluster-robust standard error of ``mean(values)``, clustering on ``clusters``.

    With residuals ``e_i = y_i - ȳ``, cluster sums ``S_g = Σ_{i∈g} e_i``, ``N`` values and
    ``G`` clusters::

        SE² = G / (G - 1) · Σ_g S_g² / N²

    This is the CR1 sandwich estimator of an intercept-only regression with the usual
    small-sample factor ``G/(G-1) · (N-1)/(N-K)``; with K = 1 parameter the second factor
    is 1. It equals ``statsmodels`` OLS ``fit(cov_type="cluster")`` (default
    ``use_correction=True``). With one value per cluster it reduces to ``s/sqrt(N)``.
    """
    y = as_float_array(values, "values")
    codes = cluster_codes(clusters, y.size)
    n_clusters = int(codes.max()) + 1
    if n_clusters < 2:
        raise ValueError("at least two clusters (tasks) are needed for a clustered standard error")
    resid = y - y.mean()
    sums = np.bincount(codes, weights=resid, minlength=n_clusters)
    var = n_clusters / (n_clusters - 1) * float(np.sum(sums**2)) / y.size**2
    return math.sqrt(var)


def clustered_mean(
    values: npt.ArrayLike,
    clusters: Sequence[Hashable] | npt.ArrayLike,
    confidence: float = 0.95,
) -> ClusteredMean:
    """Mean of per-trial values with a task-clustered SE and a normal-approximation interval.

    The interval is ``mean ± z·SE`` (normal, like statsmodels' default ``conf_int`` for
    ``cov_type="cluster"``). With few clusters (say < 30 tasks) prefer
    :func:`assay.stats.bootstrap_ci` with ``clusters=``.
    """
    check_confidence(confidence)
    y = as_float_array(values, "values")
    se = clustered_se(y, clusters)
    n_clusters = int(cluster_codes(clusters, y.size).max()) + 1
    z = z_two_sided(confidence)
    mean = float(y.mean())
    return ClusteredMean(
        mean=mean,
        se=se,
        low=mean - z * se,
        high=mean + z * se,
        confidence=confidence,
        n=int(y.size),
        n_clusters=n_clusters,
    )


@dataclass(frozen=True)
class RateInterval:
    """A rate with a task-aware Wilson interval and the effective sample size used."""

    rate: float
    low: float
    high: float
    n: int
    n_clusters: int
    n_effective: float


def clustered_rate_interval(
    values: npt.ArrayLike,
    clusters: Sequence[Hashable] | npt.ArrayLike,
    confidence: float = 0.95,
) -> RateInterval:
    """Interval for the mean of per-trial values in [0, 1] whose trials cluster by task.

    A Wilson interval over an *effective* sample size: ``n_eff = p(1-p) / SE²`` with the
    task-clustered SE (``n / design effect``), kept between the number of tasks G
    (trials of a task perfectly correlated) and the number of trials n (independent).
    When ``p`` is 0 or 1 the design effect is undefined and ``n_eff = G`` (conservative).
    With one value per task this is the Wilson interval with n = G; for values in
    [0, 1] that are not 0/1 (e.g. per-task pass^k) it is conservative, since such
    values have variance at most p(1-p).
    """
    check_confidence(confidence)
    y = as_float_array(values, "values")
    if y.size == 0:
        raise ValueError("values is empty: a rate over zero trials has no interval")
    if np.any((y < 0) | (y > 1)):
        raise ValueError("values must lie in [0, 1]")
    codes = cluster_codes(clusters, y.size)
    g = int(codes.max()) + 1
    p = float(y.mean())
    n_eff = float(g)
    if g >= 2 and 0.0 < p < 1.0:
        se = clustered_se(y, clusters)
        # SE 0 with 0 < p < 1: every task has the same rate, all variation is within tasks
        n_eff = float(y.size) if se == 0 else min(float(y.size), max(float(g), p * (1 - p) / se**2))
    low, high = wilson_bounds(min(1.0, max(0.0, p)), n_eff, confidence)
    low, high = (0.0 if p == 0 else low), (1.0 if p == 1 else high)
    return RateInterval(p, low, high, int(y.size), g, n_eff)
