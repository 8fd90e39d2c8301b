"""The box formulas pinned on hand-computed values."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from assay.box import normalized_badness, rms_loss, softplus, threshold_loss


def test_normalized_badness_both_directions() -> None:
    # cost $0.15 vs τ = $0.10 → 1.5; accuracy .70 vs τ = .80 → (1-.7)/(1-.8) = 1.5
    assert normalized_badness(0.15, 0.10, "lower") == pytest.approx(1.5)
    assert normalized_badness(0.70, 0.80, "higher") == pytest.approx(1.5)
    assert normalized_badness(0.80, 0.80, "higher") == pytest.approx(1.0)
    assert normalized_badness(1.0, 0.80, "higher") == 0.0
    # the seed's spelling of the directions is accepted
    assert normalized_badness(5.0, 5.0, "lower_is_better") == 1.0
    assert normalized_badness(0.9, 0.8, "higher_is_better") == pytest.approx(0.5)


def test_normalized_badness_arrays_in_arrays_out() -> None:
    out = normalized_badness(np.array([0.05, 0.10, 0.20]), 0.10, "lower")
    assert isinstance(out, np.ndarray)
    assert out.tolist() == pytest.approx([0.5, 1.0, 2.0])
    assert isinstance(normalized_badness(0.05, 0.10, "lower"), float)
    assert normalized_badness([0.6, 1.0], 0.8, "higher") == pytest.approx([2.0, 0.0])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((1.0, 0.5, "sideways"), "unknown direction"),
        ((1.0, 0.0, "lower"), "tau must be > 0"),
        ((0.5, 1.0, "higher"), "tau must be < 1"),
        ((0.5, math.nan, "lower"), "finite"),
    ],
)
def test_normalized_badness_errors(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        normalized_badness(*args)


def test_threshold_loss_hand_values() -> None:
    # at the threshold: softplus(0)² = (ln 2)² = 0.480453
    assert threshold_loss(1.0) == pytest.approx(math.log(2) ** 2)
    assert threshold_loss(1.0) == pytest.approx(0.4804530139)
    # x = 1.5, k = 2: softplus(1)² = ln(1 + e)² = 1.724656
    assert threshold_loss(1.5) == pytest.approx(math.log1p(math.e) ** 2)
    assert threshold_loss(1.5) == pytest.approx(1.7246562599)
    # x = 0.5, k = 2: softplus(-1)² = ln(1 + 1/e)² = 0.098133
    assert threshold_loss(0.5) == pytest.approx(0.0981328849)
    # x = 1.5, k = 4: softplus(2)² = 4.523823
    assert threshold_loss(1.5, k=4) == pytest.approx(4.5238227642)
    # steeper k punishes violations more and in-box values less
    assert threshold_loss(1.2, k=8) > threshold_loss(1.2, k=2)
    assert threshold_loss(0.5, k=8) < threshold_loss(0.5, k=2)


def test_threshold_loss_is_stable_at_extremes() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = threshold_loss(1e6)
        tiny = threshold_loss(-1e6)
        arr = threshold_loss(np.array([-1e6, -30.0, 1.0, 1e6]), k=3.0)
    assert big == pytest.approx((2 * (1e6 - 1)) ** 2)  # softplus(z) = z for large z
    assert math.isfinite(big)
    assert tiny == 0.0
    assert np.all(np.isfinite(arr)) and np.all(arr >= 0)
    # far inside but not absurdly so: still positive, ≈ e^(2z)
    assert threshold_loss(-10.0) == pytest.approx(math.exp(-22.0) ** 2, rel=1e-6)
    assert threshold_loss(-10.0) > 0


def test_threshold_loss_is_monotone() -> None:
    x = np.linspace(-3, 5, 200)
    assert np.all(np.diff(threshold_loss(x)) > 0)
    with pytest.raises(ValueError, match="k must be positive"):
        threshold_loss(1.0, k=0)


def test_softplus() -> None:
    assert softplus(0.0) == pytest.approx(math.log(2))
    assert softplus(800.0) == 800.0
    assert softplus(-800.0) == 0.0


def test_rms_loss_hand_value_and_identity() -> None:
    # losses 0 and e - 1 → y = 0 and 1 → sqrt((0 + 1)/2)
    assert rms_loss([0.0, math.e - 1]) == pytest.approx(math.sqrt(0.5))
    rng = np.random.default_rng(0)
    losses = rng.lognormal(0, 1, 500)
    y = np.log1p(losses)
    # RMS² = mean² + population variance
    assert rms_loss(losses) ** 2 == pytest.approx(y.mean() ** 2 + y.var(ddof=0))
    assert rms_loss([0.0, 0.0]) == 0.0


def test_rms_loss_prefers_lower_spread_at_equal_median() -> None:
    steady = [1.0, 1.0, 1.0, 1.0, 1.0]
    spiky = [0.2, 0.5, 1.0, 1.5, 30.0]
    assert np.median(steady) == np.median(spiky)
    assert rms_loss(spiky) > rms_loss(steady)


@pytest.mark.parametrize(
    ("losses", "message"),
    [([], "empty"), ([1.0, math.nan], "NaN"), ([-0.1], ">= 0")],
)
def test_rms_loss_errors(losses: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rms_loss(losses)
