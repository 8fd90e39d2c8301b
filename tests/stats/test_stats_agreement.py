"""Cohen's kappa, confusion matrix and Spearman's rho against sklearn and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sk_confusion_matrix

from assay.stats import cohen_kappa, confusion_matrix, rank_average, raw_agreement, spearman_rho

RNG = np.random.default_rng(0)
CASES: list[tuple[list, list]] = [
    (["pass", "fail", "pass", "pass", "fail"], ["pass", "fail", "fail", "pass", "pass"]),
    ([1, 2, 3, 4, 5, 1, 2, 3], [1, 3, 3, 5, 4, 2, 2, 1]),
    (list(RNG.integers(0, 5, 200)), list(RNG.integers(0, 5, 200))),
    (["b", "a", "c", "c", "a"], ["b", "a", "c", "a", "a"]),
    ([0, 0, 0, 1], [0, 0, 1, 1]),
    ([2, 7, 7, 9], [9, 7, 2, 2]),  # gaps in integer labels: weights use label positions
]


@pytest.mark.parametrize(("a", "b"), CASES)
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_matches_sklearn(a: list, b: list, weights: str | None) -> None:
    expected = cohen_kappa_score(a, b, weights=weights)
    assert cohen_kappa(a, b, weights=weights) == pytest.approx(expected, abs=1e-9)  # type: ignore[arg-type]


def test_kappa_hand_value() -> None:
    # 2x2 table [[20, 5], [10, 15]]: po = .7, pe = .5·.6 + .5·.4 = .5 → κ = .4
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert raw_agreement(a, b) == pytest.approx(0.7)


def test_kappa_perfect_and_undefined() -> None:
    assert cohen_kappa([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa(["x", "x"], ["x", "x"]))


def test_confusion_matrix_matches_sklearn() -> None:
    a, b = CASES[2]
    labels, matrix = confusion_matrix(a, b)
    assert labels == sorted(set(a) | set(b))
    assert np.array_equal(matrix, sk_confusion_matrix(a, b))
    labels, matrix = confusion_matrix(["x"], ["y"], labels=["y", "x", "z"])
    assert labels == ["y", "x", "z"] and matrix[1, 0] == 1 and matrix.sum() == 1


def test_agreement_errors() -> None:
    with pytest.raises(ValueError, match="same items"):
        raw_agreement([1, 2], [1])
    with pytest.raises(ValueError, match="no labels"):
        cohen_kappa([], [])
    with pytest.raises(ValueError, match="not in the given"):
        confusion_matrix([1], [2], labels=[1])
    with pytest.raises(ValueError, match="incomparable"):
        confusion_matrix([1, "a"], [1, "a"])
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa([1, 2], [2, 1], weights="cubic")  # type: ignore[arg-type]


def test_rank_average_matches_scipy() -> None:
    x = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0]
    assert rank_average(x).tolist() == pytest.approx(stats.rankdata(x).tolist())


@pytest.mark.parametrize("seed", range(4))
def test_spearman_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, size=40).astype(float)  # many ties
    y = x + rng.integers(-2, 3, size=40)
    assert spearman_rho(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)


def test_spearman_edges() -> None:
    assert spearman_rho([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert spearman_rho([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(spearman_rho([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ValueError, match="two pairs"):
        spearman_rho([1], [2])
    with pytest.raises(ValueError, match="same length"):
        spearman_rho([1, 2], [1, 2, 3])
