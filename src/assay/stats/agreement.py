"""Agreement between raters (e.g. an LLM judge and humans) and rank correlation.

Raw agreement overstates how well two raters agree when one label dominates; Cohen's
kappa discounts the agreement expected by chance. Spearman's rho compares two rankings
(e.g. of configurations by two metrics).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from ._checks import as_float_array


def _pair(rater_a: Sequence[Hashable], rater_b: Sequence[Hashable]) -> tuple[list[Hashable], list[Hashable]]:
    a, b = list(rater_a), list(rater_b)
    if len(a) != len(b):
        raise ValueError(f"the two raters must label the same items: {len(a)} vs {len(b)} labels")
    if not a:
        raise ValueError("no labels given; at least one rated item is needed")
    return a, b


def raw_agreement(rater_a: Sequence[Hashable], rater_b: Sequence[Hashable]) -> float:
    """Share of items on which the two raters gave the same label."""
    a, b = _pair(rater_a, rater_b)
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def confusion_matrix(
    rater_a: Sequence[Hashable],
    rater_b: Sequence[Hashable],
    labels: Sequence[Hashable] | None = None,
) -> tuple[list[Hashable], npt.NDArray[np.int64]]:
    """Counts ``m[i, j]`` of items labelled ``labels[i]`` by rater A and ``labels[j]`` by B.

    ``labels`` defaults to the sorted union of both raters' labels (as scikit-learn).
    """
    a, b = _pair(rater_a, rater_b)
    if labels is None:
        try:
            labels = sorted(set(a) | set(b))  # type: ignore[type-var]
        except TypeError as exc:
            raise ValueError("labels of mixed, incomparable types cannot be ordered") from exc
    label_list = list(labels)
    index = {label: i for i, label in enumerate(label_list)}
    if len(index) != len(label_list):
        raise ValueError("labels contains duplicates")
    missing = (set(a) | set(b)) - set(index)
    if missing:
        raise ValueError(f"labels {sorted(map(str, missing))} are not in the given label list")
    matrix = np.zeros((len(label_list), len(label_list)), dtype=np.int64)
    for x, y in zip(a, b, strict=True):
        matrix[index[x], index[y]] += 1
    return label_list, matrix


def cohen_kappa(
    rater_a: Sequence[Hashable],
    rater_b: Sequence[Hashable],
    weights: Literal["linear", "quadratic"] | None = None,
) -> float:
    """Cohen's kappa ``1 - Σ w·O / Σ w·E`` between two raters.

    ``O`` is the confusion matrix, ``E`` the matrix expected by chance from the two
    raters' marginals (same total). Unweighted: ``w = 1`` off the diagonal. Weighted:
    label ``i`` is the i-th of the sorted union of labels and ``w = |i - j|``
    (``"linear"``) or ``(i - j)²`` (``"quadratic"``), which credits near misses on
    ordinal scales. Equals ``sklearn.metrics.cohen_kappa_score``; NaN when it is
    undefined (no disagreement expected by chance, e.g. both raters use one label).
    Interpretation (Landis & Koch 1977): < 0.2 slight, 0.2–0.4 fair, 0.4–0.6 moderate,
    0.6–0.8 substantial, > 0.8 almost perfect.
    """
    _, observed = confusion_matrix(rater_a, rater_b)
    k = observed.shape[0]
    obs = observed.astype(np.float64)
    expected = np.outer(obs.sum(axis=1), obs.sum(axis=0)) / obs.sum()
    i, j = np.indices((k, k))
    if weights is None:
        w = (i != j).astype(np.float64)
    elif weights == "linear":
        w = np.abs(i - j).astype(np.float64)
    elif weights == "quadratic":
        w = ((i - j) ** 2).astype(np.float64)
    else:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', not {weights!r}")
    denom = float(np.sum(w * expected))
    if denom == 0.0:
        return float("nan")
    return 1.0 - float(np.sum(w * obs)) / denom


def rank_average(values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Ranks 1..n of ``values``; tied values share the average of their ranks."""
    x = as_float_array(values, "values")
    order = np.argsort(x, kind="mergesort")
    sorted_x = x[order]
    # start index of each run of equal values
    new_run = np.concatenate(([True], sorted_x[1:] != sorted_x[:-1]))
    run_id = np.cumsum(new_run) - 1
    starts = np.flatnonzero(new_run)
    ends = np.concatenate((starts[1:], [x.size]))
    avg = (starts + ends + 1) / 2.0  # mean of ranks start+1 .. end
    ranks = np.empty(x.size)
    ranks[order] = avg[run_id]
    return ranks


def spearman_rho(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Spearman's rank correlation: Pearson correlation of average ranks (ties allowed).

    Equals ``scipy.stats.spearmanr(x, y).statistic``; NaN if either input is constant.
    """
    xa = as_float_array(x, "x")
    ya = as_float_array(y, "y")
    if xa.size != ya.size:
        raise ValueError(f"x and y must have the same length: {xa.size} vs {ya.size}")
    if xa.size < 2:
        raise ValueError("at least two pairs are needed for a correlation")
    rx = rank_average(xa) - (xa.size + 1) / 2.0
    ry = rank_average(ya) - (ya.size + 1) / 2.0
    denom = float(np.sqrt(np.sum(rx * rx) * np.sum(ry * ry)))
    if denom == 0.0:
        return float("nan")
    return float(np.sum(rx * ry)) / denom
