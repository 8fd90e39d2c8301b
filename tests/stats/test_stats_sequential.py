"""Sequential tests: Wald SPRT and always-valid mixture tests, by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.stats import (
    discordant_mixture_log_lr,
    discordant_msprt,
    msprt_mean,
    sprt_bernoulli,
    sprt_bernoulli_path,
)


def _slack(alpha: float, runs: int) -> float:
    return alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)


def test_sprt_hand_values() -> None:
    # p0=.5, p1=.7, α=.05, β=.2: A = log(.8/.05) = 2.7726, B = log(.2/.95) = -1.5581;
    # 8 successes, 2 failures: 8·log(1.4) + 2·log(.6) = 2.6918 - 1.0217 = 1.6701 → continue
    r = sprt_bernoulli(8, 10, 0.5, 0.7)
    assert r.upper == pytest.approx(math.log(0.8 / 0.05))
    assert r.lower == pytest.approx(math.log(0.2 / 0.95))
    assert r.log_lr == pytest.approx(8 * math.log(1.4) + 2 * math.log(0.6))
    assert r.decision == "continue"
    assert sprt_bernoulli(20, 22, 0.5, 0.7).decision == "reject_h0"
    assert sprt_bernoulli(1, 10, 0.5, 0.7).decision == "accept_h0"


def test_sprt_path_stops_at_first_crossing() -> None:
    outcomes = [1] * 30
    r = sprt_bernoulli_path(outcomes, 0.5, 0.7)
    # each success adds log 1.4 = .3365: crosses 2.7726 at the 9th success
    assert r.n == 9 and r.successes == 9 and r.decision == "reject_h0"
    empty = sprt_bernoulli_path([], 0.5, 0.7)
    assert empty.decision == "continue" and empty.n == 0


def test_sprt_type_one_error_and_early_stopping() -> None:
    rng = np.random.default_rng(0)
    runs, horizon = 2000, 400
    p0, p1, alpha = 0.5, 0.65, 0.05
    null = [sprt_bernoulli_path(rng.random(horizon) < p0, p0, p1, alpha) for _ in range(runs)]
    rejected = sum(r.decision == "reject_h0" for r in null)
    assert rejected / runs <= _slack(alpha, runs)
    alt = [sprt_bernoulli_path(rng.random(horizon) < p1, p0, p1, alpha) for _ in range(500)]
    assert np.mean([r.decision == "reject_h0" for r in alt]) >= 0.75
    # Wald's approximate expected sample size under H1 is ~60; far below the horizon
    assert np.median([r.n for r in alt]) < 100


def test_sprt_errors() -> None:
    with pytest.raises(ValueError, match="p0 < p1"):
        sprt_bernoulli(1, 2, 0.7, 0.5)
    with pytest.raises(ValueError, match="exceed"):
        sprt_bernoulli(3, 2, 0.5, 0.7)
    with pytest.raises(ValueError, match="0/1"):
        sprt_bernoulli_path([0, 2], 0.5, 0.7)


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
