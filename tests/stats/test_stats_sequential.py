"""Sequential tests: always-valid mixture tests, by simulation (the calibrated SPRTs
adaptive runs stop on are tested in tests/compare/test_plan_sequential.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.stats import discordant_mixture_log_lr, discordant_msprt, msprt_mean


def _slack(alpha: float, runs: int) -> float:
    return alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)


def test_discordant_mixture_hand_value() -> None:
    # a = 1 (uniform prior): Λ = B(1+b, 1+c)/B(1,1)·2^(b+c) = b!c!/(b+c+1)!·2^(b+c)
    # b=3, c=0: 3!/4!·8 = 2
    assert math.exp(discordant_mixture_log_lr(3, 0)) == pytest.approx(2.0)
    assert discordant_mixture_log_lr(0, 0) == pytest.approx(0.0)


def test_discordant_msprt_matches_closed_form_and_reports_pairs() -> None:
    x = [1, 1, 0, 1, 1, 1]
    y = [0, 1, 0, 0, 0, 0]  # discordant: pairs 1, 4, 5, 6 all won by x
    r = discordant_msprt(x, y, alpha=0.05)
    assert r.decision == "continue" and r.n == 6
    assert r.log_lr == pytest.approx(discordant_mixture_log_lr(4, 0))
    assert r.p_value == pytest.approx(1 / math.exp(discordant_mixture_log_lr(4, 0)))


def test_discordant_msprt_type_one_error_and_power() -> None:
    rng = np.random.default_rng(1)
    runs, n, alpha = 1000, 500, 0.05
    rejections = 0
    for _ in range(runs):
        x = rng.random(n) < 0.7
        y = rng.random(n) < 0.7
        rejections += discordant_msprt(x.astype(int), y.astype(int), alpha).stopped
    assert rejections / runs <= _slack(alpha, runs)
    stops = []
    for _ in range(200):
        x = (rng.random(n) < 0.8).astype(int)
        y = (rng.random(n) < 0.6).astype(int)
        r = discordant_msprt(x, y, alpha)
        assert r.p_value <= 1.0
        stops.append(r.n if r.stopped else n + 1)
    assert np.mean(np.array(stops) <= n) >= 0.9
    assert np.median(stops) < 250  # stops well before the horizon


def test_discordant_msprt_errors() -> None:
    with pytest.raises(ValueError, match="same length"):
        discordant_msprt([1, 0], [1])
    with pytest.raises(ValueError, match="0/1"):
        discordant_msprt([1, 3], [1, 0])


def test_msprt_mean_type_one_error_and_power() -> None:
    rng = np.random.default_rng(2)
    runs, n, alpha = 1000, 400, 0.05
    null = rng.normal(0.0, 1.0, size=(runs, n))
    rejected = sum(msprt_mean(row, sigma=1.0, alpha=alpha).stopped for row in null)
    assert rejected / runs <= _slack(alpha, runs)
    alt = rng.normal(0.3, 1.0, size=(200, n))
    results = [msprt_mean(row, sigma=1.0, alpha=alpha) for row in alt]
    assert np.mean([r.stopped for r in results]) >= 0.9
    assert np.median([r.n for r in results]) < 200


def test_msprt_mean_hand_value() -> None:
    # n=1, x=2, σ=τ=1: Λ = sqrt(1/2)·exp(1·1·4/(2·1·2)) = e/√2
    r = msprt_mean([2.0], sigma=1.0, alpha=0.05)
    assert r.log_lr == pytest.approx(1.0 - 0.5 * math.log(2.0))
    assert r.p_value == pytest.approx(math.sqrt(2.0) / math.e)
    assert msprt_mean([], sigma=1.0).decision == "continue"
    with pytest.raises(ValueError, match="sigma"):
        msprt_mean([1.0], sigma=0.0)
