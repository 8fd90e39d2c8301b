"""Order-statistic intervals of quantiles, cross-checked against scipy.stats.quantile_test."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as st

from assay.stats import order_statistic_ranks, quantile_interval


@pytest.mark.parametrize("n", [1, 2, 5, 10, 20, 37, 100, 299, 300, 1000])
@pytest.mark.parametrize("p", [0.5, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_matches_scipy_quantile_test(n: int, p: float, confidence: float) -> None:
    x = np.random.default_rng(n).lognormal(size=n)
    ours = quantile_interval(x, p, confidence)
    ref = st.quantile_test(x, q=float(np.median(x)), p=p).confidence_interval(confidence)
    assert ours.low == (None if math.isnan(ref.low) else ref.low)
    assert ours.high == (None if math.isnan(ref.high) else ref.high)
    assert ours.estimate == pytest.approx(float(np.quantile(x, p)))
    assert ours.n == n


def test_small_samples_have_no_upper_bound_for_tail_quantiles() -> None:
    # P(all n below q_.99) = .99^n must be <= .025 for x_(n) to bound p99: n >= 368.
    assert order_statistic_ranks(367, 0.99)[1] is None
    assert order_statistic_ranks(368, 0.99)[1] == 367
    low, high = order_statistic_ranks(20, 0.5)
    assert (low, high) == (5, 14)  # the textbook ranks 6 and 15 (1-based) for n = 20


def test_coverage_is_at_least_the_confidence() -> None:
    rng = np.random.default_rng(7)
    q_true = -math.log(1 - 0.9)  # p90 of Exp(1)
    hits = 0
    for _ in range(2000):
        ci = quantile_interval(rng.exponential(size=60), 0.9, 0.95)
        assert ci.low is not None and ci.high is not None
        hits += ci.low <= q_true <= ci.high
    assert hits / 2000 >= 0.94  # exact coverage is >= .95; allow Monte Carlo error


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        quantile_interval([], 0.5)
    with pytest.raises(ValueError, match="probability"):
        quantile_interval([1.0, 2.0], 1.5)
    with pytest.raises(ValueError, match="confidence"):
        quantile_interval([1.0, 2.0], 0.5, confidence=1.0)
