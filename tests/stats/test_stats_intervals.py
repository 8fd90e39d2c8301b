"""Wilson interval, binomial SE and pass@k / pass^k closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from assay.stats import (
    binomial_se,
    pass_at_k,
    pass_at_k_rate,
    pass_hat_k,
    pass_hat_k_rate,
    wilson_interval,
)


@pytest.mark.parametrize(
    ("successes", "n"), [(0, 1), (1, 1), (0, 10), (3, 10), (10, 10), (70, 100), (1, 1000)]
)
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_wilson_matches_statsmodels(successes: int, n: int, confidence: float) -> None:
    low, high = wilson_interval(successes, n, confidence)
    ref_low, ref_high = proportion_confint(successes, n, alpha=1 - confidence, method="wilson")
    assert low == pytest.approx(ref_low, abs=1e-12)
    assert high == pytest.approx(ref_high, abs=1e-12)


def test_wilson_hand_value_and_bounds() -> None:
    # p = .7, z = 1.96: centre (.7 + 1.92/100)/1.0384 = .6926, half ≈ .0885
    low, high = wilson_interval(70, 100)
    assert (round(low, 3), round(high, 3)) == (0.604, 0.781)
    assert wilson_interval(0, 5)[0] == 0.0
    assert wilson_interval(5, 5)[1] == 1.0
    assert wilson_interval(5, 5)[0] < 1.0  # never zero width at 100%


@pytest.mark.parametrize(
    ("args", "message"),
    [((0, 0), "n must be positive"), ((5, 3), "cannot exceed"), ((-1, 3), ">= 0")],
)
def test_wilson_rejects_bad_counts(args: tuple[int, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        wilson_interval(*args)


def test_wilson_rejects_bad_confidence() -> None:
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 2, confidence=1.0)


def test_binomial_se_seed_number() -> None:
    # seed: "70% on 100 cases" → SE ≈ 4.6 points
    assert binomial_se(0.7, 100) == pytest.approx(math.sqrt(0.21 / 100))
    assert round(binomial_se(0.7, 100), 3) == 0.046
    assert binomial_se(1.0, 10) == 0.0
    with pytest.raises(ValueError):
        binomial_se(0.5, 0)
    with pytest.raises(ValueError):
        binomial_se(1.5, 10)


def test_pass_k_closed_forms_seed_numbers() -> None:
    # seed: per-trial success 0.6 → pass@5 = 1 - 0.4^5 ≈ 0.99, pass^5 = 0.6^5 ≈ 0.078
    assert pass_at_k_rate(0.6, 5) == pytest.approx(1 - 0.4**5)
    assert round(pass_at_k_rate(0.6, 5), 2) == 0.99
    assert pass_hat_k_rate(0.6, 5) == pytest.approx(0.07776)
    assert round(pass_hat_k_rate(0.6, 5), 3) == 0.078
    assert pass_at_k_rate(0.6, 1) == pass_hat_k_rate(0.6, 1) == pytest.approx(0.6)


def test_unbiased_estimators() -> None:
    # 3 passes in 5 trials: pass^2 = C(3,2)/C(5,2) = 3/10; pass@2 = 1 - C(2,2)/C(5,2) = 0.9
    assert pass_hat_k(5, 3, 2) == pytest.approx(0.3)
    assert pass_at_k(5, 3, 2) == pytest.approx(0.9)
    assert pass_hat_k(4, 4, 4) == 1.0
    assert pass_at_k(4, 0, 4) == 0.0
    # k = 1 is the plain pass rate
    assert pass_hat_k(7, 3, 1) == pytest.approx(3 / 7) == pass_at_k(7, 3, 1)


def test_unbiased_estimators_are_unbiased() -> None:
    # E[C(c,k)/C(n,k)] over c ~ Binomial(n, p) equals p^k exactly
    n, k, p = 8, 3, 0.6
    probs = [math.comb(n, c) * p**c * (1 - p) ** (n - c) for c in range(n + 1)]
    hat = sum(pr * pass_hat_k(n, c, k) for c, pr in enumerate(probs))
    at = sum(pr * pass_at_k(n, c, k) for c, pr in enumerate(probs))
    assert hat == pytest.approx(p**k, abs=1e-12)
    assert at == pytest.approx(1 - (1 - p) ** k, abs=1e-12)


def test_pass_k_edge_cases() -> None:
    with pytest.raises(ValueError, match="cannot exceed"):
        pass_hat_k(3, 2, 4)
    with pytest.raises(ValueError, match="at least 1"):
        pass_at_k_rate(0.5, 0)
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    assert np.isclose(pass_hat_k_rate(0.0, 3), 0.0)
