"""Sample sizes, power and minimum detectable effects."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.power import normal_power_het
from statsmodels.stats.proportion import samplesize_proportions_2indep_onetail

from assay.stats import (
    mde_mcnemar,
    mde_two_proportions,
    power_mcnemar,
    power_two_proportions,
    sample_size_mcnemar,
    sample_size_two_proportions,
)


def test_two_proportions_seed_number() -> None:
    # 0.75 vs 0.70: pbar .725, z.975·sqrt(2·.725·.275) = 1.2377, z.8·sqrt(.1875+.21) = .5306,
    # (1.7683)² / .0025 = 1250.7 → 1251 per arm
    assert sample_size_two_proportions(0.75, 0.70) == 1251
    assert sample_size_two_proportions(0.70, 0.75) == 1251


@pytest.mark.parametrize(
    ("p1", "p2", "alpha", "power"),
    [(0.75, 0.70, 0.05, 0.8), (0.5, 0.6, 0.05, 0.9), (0.1, 0.05, 0.01, 0.8), (0.9, 0.7, 0.1, 0.8)],
)
def test_two_proportions_matches_statsmodels(p1: float, p2: float, alpha: float, power: float) -> None:
    n_ref = samplesize_proportions_2indep_onetail(p1 - p2, p2, power, alpha=alpha, alternative="two-sided")
    assert sample_size_two_proportions(p1, p2, alpha, power) == math.ceil(n_ref)


@pytest.mark.parametrize("n", [50, 500, 1251])
def test_power_two_proportions_matches_statsmodels_one_tail(n: int) -> None:
    p1, p2 = 0.75, 0.70
    pbar = (p1 + p2) / 2
    ref = normal_power_het(
        p1 - p2,
        n,
        0.025,
        std_null=math.sqrt(2 * pbar * (1 - pbar)),
        std_alternative=math.sqrt(p1 * (1 - p1) + p2 * (1 - p2)),
        alternative="larger",
    )
    assert power_two_proportions(p1, p2, n) == pytest.approx(ref, rel=1e-9)
    if n == 1251:
        assert power_two_proportions(p1, p2, n) >= 0.8 > power_two_proportions(p1, p2, n - 1)


def test_mcnemar_connor_example() -> None:
    # Connor (1987): p10 = .10, p01 = .05 → 469 pairs
    assert sample_size_mcnemar(0.10, 0.05) == 469
    assert power_mcnemar(0.10, 0.05, 469) >= 0.8 > power_mcnemar(0.10, 0.05, 468)


def test_mcnemar_power_by_simulation() -> None:
    # the normal approximation should be close to the exact test's simulated power
    from assay.stats import mcnemar_exact

    rng = np.random.default_rng(0)
    n = sample_size_mcnemar(0.10, 0.05)
    runs = 800
    tables = rng.multinomial(n, [0.10, 0.05, 0.85], size=runs)
    hits = sum(mcnemar_exact(int(b), int(c)) <= 0.05 for b, c, _ in tables)
    assert hits / runs == pytest.approx(0.8, abs=0.06)


@pytest.mark.parametrize(("n", "p"), [(100, 0.7), (500, 0.5), (1251, 0.70)])
def test_mde_two_proportions_inverts_sample_size(n: int, p: float) -> None:
    d = mde_two_proportions(n, p)
    assert sample_size_two_proportions(p + d, p) in (n, n + 1)
    assert power_two_proportions(p + d, p, n) == pytest.approx(0.8, abs=1e-6)
    down = mde_two_proportions(n, p, direction="decrease")
    assert power_two_proportions(p - down, p, n) == pytest.approx(0.8, abs=1e-6)
    if n == 1251:
        assert d == pytest.approx(0.05, abs=0.001)


@pytest.mark.parametrize(("n", "psi"), [(469, 0.15), (100, 0.3), (2000, 0.05)])
def test_mde_mcnemar_inverts_sample_size(n: int, psi: float) -> None:
    d = mde_mcnemar(n, psi)
    p10, p01 = (psi + d) / 2, (psi - d) / 2
    assert power_mcnemar(p10, p01, n) == pytest.approx(0.8, abs=1e-6)
    if n == 469:
        assert d == pytest.approx(0.05, abs=0.001)


def test_power_planning_errors() -> None:
    with pytest.raises(ValueError, match="equal"):
        sample_size_two_proportions(0.5, 0.5)
    with pytest.raises(ValueError, match="equal"):
        sample_size_mcnemar(0.1, 0.1)
    with pytest.raises(ValueError, match="power"):
        sample_size_two_proportions(0.5, 0.6, power=1.0)
    with pytest.raises(ValueError, match="cannot detect"):
        mde_two_proportions(3, 0.99)
    with pytest.raises(ValueError, match="cannot detect"):
        mde_mcnemar(2, 0.01)
    with pytest.raises(ValueError, match="discordant_rate"):
        mde_mcnemar(100, 0.0)
    with pytest.raises(ValueError, match="cannot increase"):
        mde_two_proportions(100, 1.0)
