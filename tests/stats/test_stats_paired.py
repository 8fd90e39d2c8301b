"""McNemar exact test, paired bootstrap and the sign-flip permutation test."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from assay.stats import mcnemar_exact, paired_mean_difference, sign_flip_test


@pytest.mark.parametrize(("b", "c"), [(0, 1), (1, 0), (3, 3), (10, 2), (2, 10), (0, 12), (25, 14), (40, 60)])
def test_mcnemar_matches_scipy_and_statsmodels(b: int, c: int) -> None:
    p = mcnemar_exact(b, c)
    assert p == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-12)
    table = [[50, b], [c, 50]]
    assert p == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)


def test_mcnemar_hand_values_and_edges() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    # b=0, c=5: p = 2 · 0.5^5 = 0.0625
    assert mcnemar_exact(0, 5) == pytest.approx(0.0625)
    assert mcnemar_exact(5, 5) == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


def test_mcnemar_large_counts_use_log_space() -> None:
    p = mcnemar_exact(1100, 980)
    assert p == pytest.approx(stats.binomtest(1100, 2080, 0.5).pvalue, rel=1e-9)
    assert mcnemar_exact(3000, 2000) < 1e-40


def test_paired_mean_difference_uses_the_pairing() -> None:
    rng = np.random.default_rng(0)
    task_difficulty = rng.normal(0, 1, size=50)
    base = task_difficulty + rng.normal(0, 0.1, size=50)
    cand = task_difficulty + 0.1 + rng.normal(0, 0.1, size=50)
    paired = paired_mean_difference(cand, base, n_resamples=2000, seed=1)
    assert paired.estimate == pytest.approx(np.mean(cand - base))
    assert paired.low > 0.0  # the improvement is visible once pairing removes task noise
    assert paired.high - paired.low < 0.2
    with pytest.raises(ValueError, match="pair up"):
        paired_mean_difference([1.0, 2.0], [1.0])


def _scipy_sign_flip(d: np.ndarray, alternative: str) -> float:
    res = stats.permutation_test(
        (d,),
        lambda x, axis: np.mean(x, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
        alternative=alternative,
    )
    return float(res.pvalue)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_sign_flip_matches_scipy(alternative: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = np.round(rng.normal(0.3, 1.0, size=11), 2)
    ours = sign_flip_test(d, alternative=alternative)  # type: ignore[arg-type]
    assert ours.exact
    assert ours.p_value == pytest.approx(_scipy_sign_flip(d, alternative), rel=1e-9)


def test_sign_flip_two_arrays_equals_differences() -> None:
    x = np.array([0.9, 0.8, 0.75, 0.6, 0.95, 0.7])
    y = np.array([0.7, 0.8, 0.65, 0.5, 0.9, 0.72])
    assert sign_flip_test(x, y) == sign_flip_test(x - y)


def test_sign_flip_hand_value() -> None:
    # 4 positive differences, no zeros: only the all-plus and all-minus flips are as
    # extreme, so two-sided p = 2/16
    assert sign_flip_test([1.0, 2.0, 1.0, 3.0]).p_value == pytest.approx(2 / 16)
    assert sign_flip_test([1.0, 2.0, 1.0, 3.0], alternative="greater").p_value == pytest.approx(1 / 16)
    assert sign_flip_test([0.0, 0.0]).p_value == 1.0


def test_zero_differences_do_not_change_the_p_value() -> None:
    d = [0.5, -0.2, 0.3, 0.4, 0.1]
    assert sign_flip_test(d).p_value == pytest.approx(sign_flip_test([*d, 0.0, 0.0]).p_value)


def test_monte_carlo_path_close_to_exact_and_seeded() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(0.4, 1.0, size=14)
    exact = sign_flip_test(d)
    mc = sign_flip_test(d, exact_max=0, n_resamples=20000, seed=4)
    assert not mc.exact
    assert mc.p_value == pytest.approx(exact.p_value, abs=0.01)
    assert mc == sign_flip_test(d, exact_max=0, n_resamples=20000, seed=4)
    assert mc.p_value > 0


def test_cluster_flips_whole_tasks() -> None:
    d = np.array([1.0, 1.0, 1.0, -0.5, 2.0, 0.5])
    tasks = ["a", "a", "b", "b", "c", "c"]
    # task sums 2.0, 0.5, 2.5 — all positive: 2 of 8 flips as extreme
    assert sign_flip_test(d, clusters=tasks).p_value == pytest.approx(2 / 8)
    singletons = sign_flip_test(d, clusters=range(6))
    assert singletons.p_value == pytest.approx(sign_flip_test(d).p_value)


def test_monte_carlo_type_one_error_is_controlled() -> None:
    rng = np.random.default_rng(10)
    rejections = 0
    runs = 300
    for i in range(runs):
        d = rng.normal(0.0, 1.0, size=30)
        if sign_flip_test(d, n_resamples=499, seed=i).p_value <= 0.05:
            rejections += 1
    # expected 15; binomial sd ≈ 3.8
    assert rejections / runs <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / runs)


def test_sign_flip_errors() -> None:
    with pytest.raises(ValueError, match="alternative"):
        sign_flip_test([1.0], alternative="bigger")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        sign_flip_test([])
