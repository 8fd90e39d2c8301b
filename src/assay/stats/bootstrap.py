"""Percentile bootstrap confidence intervals, with optional resampling of whole tasks.

``bootstrap_ci`` resamples observations (or, with ``clusters=``, whole clusters such as
tasks, keeping each task's trials together) and reports the percentile interval of the
statistic. ``cluster_bootstrap_ci`` hands the statistic the resampled *groups*, for
statistics defined per task such as pass^k. All randomness comes from ``seed``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._checks import check_confidence, rng_from
from .clustered import cluster_codes

_CHUNK = 256  # resamples drawn at once in vectorised paths (bounds memory use)


@dataclass(frozen=True)
class BootstrapCI:
    """A point estimate with a percentile bootstrap interval."""

    estimate: float
    low: float
    high: float
    confidence: float
    n_resamples: int


def _percentile_ci(estimate: float, replicates: npt.NDArray[np.float64], confidence: float) -> BootstrapCI:
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(replicates, [tail, 1.0 - tail])
    return BootstrapCI(float(estimate), float(low), float(high), confidence, int(replicates.size))


def _check_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        raise ValueError(f"n_resamples must be an integer, got {n_resamples!r}")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    return int(n_resamples)


def _as_data(values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    data = np.asarray(values, dtype=np.float64)
    if data.ndim == 0 or data.ndim > 2:
        raise ValueError("values must be 1-D (one value per observation) or 2-D (rows)")
    if data.shape[0] == 0:
        raise ValueError("values is empty; at least one observation is needed")
    if not np.all(np.isfinite(data)):
        raise ValueError("values contains NaN or infinite values")
    return data


def percentile_interval(estimate: float, replicates: npt.ArrayLike, confidence: float = 0.95) -> BootstrapCI:
    """The percentile interval of bootstrap ``replicates`` (as :func:`bootstrap_ci`
    computes it from its own): e.g. of the first n of the replicates kept from a
    bootstrap of more resamples, which are the replicates of a bootstrap of n with the
    same seed (the resamples are drawn in the same order, chunk by chunk)."""
    check_confidence(confidence)
    return _percentile_ci(estimate, np.asarray(replicates, dtype=np.float64), confidence)


def bootstrap_ci(
    values: npt.ArrayLike,
    statistic: Callable[[npt.NDArray[np.float64]], float] = np.mean,
    *,
    clusters: Sequence[Hashable] | npt.ArrayLike | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> BootstrapCI:
    """Percentile bootstrap interval of ``statistic(values)``.

    ``values`` is 1-D (one number per trial) or 2-D (one row per trial; rows are
    resampled together). Without ``clusters`` observations are resampled with
    replacement. With ``clusters`` (one label per row, e.g. task ids), whole clusters are
    resampled with replacement and their rows concatenated, so the dependence between
    trials of a task is kept. ``statistic`` gets the resampled array; ``np.mean`` (the
    default) takes a fast vectorised path. The interval is the (α/2, 1-α/2) quantiles of
    the replicates, as ``scipy.stats.bootstrap(method="percentile")``.
    """
    check_confidence(confidence)
    estimate, reps = bootstrap_replicates(
        values, statistic, clusters=clusters, n_resamples=n_resamples, seed=seed
    )
    return _percentile_ci(estimate, reps, confidence)


def bootstrap_replicates(
    values: npt.ArrayLike,
    statistic: Callable[[npt.NDArray[np.float64]], float] = np.mean,
    *,
    clusters: Sequence[Hashable] | npt.ArrayLike | None = None,
    n_resamples: int = 2000,
    seed: int | np.random.Generator = 0,
) -> tuple[float, npt.NDArray[np.float64]]:
    """``statistic(values)`` and its ``n_resamples`` bootstrap replicates, drawn as
    :func:`bootstrap_ci` draws them (it is their percentile interval)."""
    n_resamples = _check_resamples(n_resamples)
    rng = rng_from(seed)
    data = _as_data(values)
    n = data.shape[0]
    estimate = float(statistic(data))
    fast_mean = statistic is np.mean and data.ndim == 1
    if clusters is None:
        if fast_mean:
            reps = np.concatenate(
                [
                    data[rng.integers(0, n, size=(min(_CHUNK, n_resamples - s), n))].mean(axis=1)
                    for s in range(0, n_resamples, _CHUNK)
                ]
            )
        else:
            reps = np.array([float(statistic(data[rng.integers(0, n, size=n)])) for _ in range(n_resamples)])
        return estimate, reps

    codes = cluster_codes(clusters, n)
    n_groups = int(codes.max()) + 1
    if fast_mean:
        sums = np.bincount(codes, weights=data, minlength=n_groups)
        counts = np.bincount(codes, minlength=n_groups).astype(np.float64)
        single = bool(np.all(counts == 1))  # one value per cluster: every resample has n_groups
        parts = []
        for s in range(0, n_resamples, _CHUNK):
            idx = rng.integers(0, n_groups, size=(min(_CHUNK, n_resamples - s), n_groups))
            total = counts.sum() if single else counts[idx].sum(axis=1)
            parts.append(sums[idx].sum(axis=1) / total)
        return estimate, np.concatenate(parts)
    order = np.argsort(codes, kind="stable")
    members = np.split(order, np.cumsum(np.bincount(codes, minlength=n_groups))[:-1])
    reps = np.empty(n_resamples)
    for r in range(n_resamples):
        picked = rng.integers(0, n_groups, size=n_groups)
        rows = np.concatenate([members[g] for g in picked])
        reps[r] = float(statistic(data[rows]))
    return estimate, reps


def cluster_bootstrap_means(
    values: npt.ArrayLike,
    clusters: Sequence[Hashable] | npt.ArrayLike,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> list[BootstrapCI | None]:
    """Percentile bootstrap intervals of the means of several columns at once,
    resampling whole clusters (the same resamples for every column).

    ``values`` is 2-D, one row per observation and one column per quantity; NaN marks a
    missing value, left out of its column's mean (a drawn cluster without a value in a
    column counts for the draw, not for that column's mean). A column without any value
    gets None. For a column without missing values the interval equals
    :func:`bootstrap_ci` of that column with the same ``clusters`` and ``seed`` (same
    draws), but all columns cost one pass of resampling: a summary of dozens of metrics
    over thousands of tasks takes well under a second.
    """
    check_confidence(confidence)
    n_resamples = _check_resamples(n_resamples)
    rng = rng_from(seed)
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 2 or data.shape[0] == 0:
        raise ValueError("values must be 2-D with at least one row (observations x quantities)")
    if np.isinf(data).any():
        raise ValueError("values contains infinite values")
    codes = cluster_codes(clusters, data.shape[0])
    n_groups = int(codes.max()) + 1
    present = ~np.isnan(data)
    sums = np.zeros((n_groups, data.shape[1]))
    counts = np.zeros((n_groups, data.shape[1]))
    np.add.at(sums, codes, np.where(present, data, 0.0))
    np.add.at(counts, codes, present.astype(np.float64))
    chunk = _CHUNK if n_groups <= 8192 else max(1, 2_000_000 // n_groups)
    reps = np.empty((n_resamples, data.shape[1]))
    with np.errstate(invalid="ignore", divide="ignore"):
        for s in range(0, n_resamples, chunk):
            c = min(chunk, n_resamples - s)
            idx = rng.integers(0, n_groups, size=(c, n_groups))
            drawn = np.bincount((np.arange(c)[:, None] * n_groups + idx).ravel(), minlength=c * n_groups)
            weights = drawn.reshape(c, n_groups).astype(np.float64)
            reps[s : s + c] = (weights @ sums) / (weights @ counts)
        estimates = sums.sum(axis=0) / counts.sum(axis=0)
    out: list[BootstrapCI | None] = []
    for j in range(data.shape[1]):
        column = reps[:, j][~np.isnan(reps[:, j])]
        out.append(None if not present[:, j].any() else _percentile_ci(estimates[j], column, confidence))
    return out


def bootstrap_means(
    columns: Sequence[npt.ArrayLike],
    *,
    clusters: Sequence[Hashable] | npt.ArrayLike | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[BootstrapCI]:
    """:func:`bootstrap_ci` of the mean of each column (all of one length, the same
    rows and clusters), each result identical to ``bootstrap_ci(column, np.mean,
    clusters=..., seed=seed)``, but drawing the resamples once for all columns: with
    ten thousand tasks the draws are most of the work."""
    check_confidence(confidence)
    n_resamples = _check_resamples(n_resamples)
    data = [_as_data(c) for c in columns]
    if not data:
        return []
    n = data[0].shape[0]
    if any(d.ndim != 1 or d.shape[0] != n for d in data):
        raise ValueError("every column must be 1-D and of the same length")
    rng = rng_from(seed)
    estimates = [float(np.mean(d)) for d in data]
    parts: list[list[npt.NDArray[np.float64]]] = [[] for _ in data]
    if clusters is None:
        for s in range(0, n_resamples, _CHUNK):
            idx = rng.integers(0, n, size=(min(_CHUNK, n_resamples - s), n))
            for part, d in zip(parts, data, strict=True):
                part.append(d[idx].mean(axis=1))
    else:
        codes = cluster_codes(clusters, n)
        n_groups = int(codes.max()) + 1
        counts = np.bincount(codes, minlength=n_groups).astype(np.float64)
        sums = [np.bincount(codes, weights=d, minlength=n_groups) for d in data]
        single = bool(np.all(counts == 1))
        for s in range(0, n_resamples, _CHUNK):
            idx = rng.integers(0, n_groups, size=(min(_CHUNK, n_resamples - s), n_groups))
            total = counts.sum() if single else counts[idx].sum(axis=1)
            for part, summed in zip(parts, sums, strict=True):
                part.append(summed[idx].sum(axis=1) / total)
    return [
        _percentile_ci(estimate, np.concatenate(part), confidence)
        for estimate, part in zip(estimates, parts, strict=True)
    ]


def group_by_cluster(
    values: npt.ArrayLike, clusters: Sequence[Hashable] | npt.ArrayLike
) -> dict[Hashable, npt.NDArray[np.float64]]:
    """Split per-trial ``values`` into one array per cluster label (first-appearance order)."""
    data = _as_data(values)
    labels = list(np.asarray(clusters, dtype=object).reshape(-1))
    codes = cluster_codes(labels, data.shape[0])
    order: dict[Hashable, int] = {}
    for label, code in zip(labels, codes, strict=True):
        order.setdefault(label, int(code))
    return {label: data[codes == code] for label, code in order.items()}


def cluster_bootstrap_ci(
    groups: Sequence[npt.ArrayLike],
    statistic: Callable[[list[npt.NDArray[np.float64]]], float],
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> BootstrapCI:
    """Percentile bootstrap of a statistic of *groups* (e.g. one array of trials per task).

    Each replicate draws ``len(groups)`` groups with replacement and calls
    ``statistic(list_of_groups)``; a group drawn twice appears twice. Use it for
    statistics computed per task, e.g. mean pass^k::

        cluster_bootstrap_ci(per_task, lambda gs: np.mean([pass_hat_k(len(g), g.sum(), 3)
                                                           for g in gs]))
    """
    check_confidence(confidence)
    n_resamples = _check_resamples(n_resamples)
    rng = rng_from(seed)
    arrays = [np.asarray(g, dtype=np.float64) for g in groups]
    if not arrays:
        raise ValueError("groups is empty; at least one group is needed")
    estimate = float(statistic(arrays))
    n_groups = len(arrays)
    reps = np.empty(n_resamples)
    for r in range(n_resamples):
        picked = rng.integers(0, n_groups, size=n_groups)
        reps[r] = float(statistic([arrays[g] for g in picked]))
    return _percentile_ci(estimate, reps, confidence)
