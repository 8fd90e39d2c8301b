"""The paired test at the observed discordance: alpha spending is exact, and with a
steady discordance it is the calibrated SPRT."""

from __future__ import annotations

import numpy as np
import pytest

from assay.compare.sequential import paired_path
from assay.compare.spending import Designs, SpendingPaired, _cut, design_grid


def _run(test: SpendingPaired, a: np.ndarray, b: np.ndarray):  # type: ignore[no-untyped-def]
    """Read everything, making designs as the test asks (what the dispatcher does)."""
    while True:
        state = test.read(a, b)
        if test.needs is None:
            return state
        test.designs.make(test.needs)


def test_cut_is_the_largest_two_sided_tail_within_the_allowance() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        m = int(rng.integers(1, 30))
        mass = rng.random(m + 1) * (rng.random(m + 1) < 0.8)
        allowed = float(rng.random() * mass.sum())
        cut = _cut(mass, allowed)
        lead = np.abs(2 * np.arange(m + 1) - m)
        assert mass[lead >= cut].sum() <= allowed + 1e-12
        # no larger region (a smaller lead that occurs) would fit
        assert all(mass[lead >= v].sum() > allowed for v in set(lead.tolist()) if v < cut)


def test_design_grid() -> None:
    assert design_grid(0.153, 0.05) == 0.15 and design_grid(0.333, 0.05) == 0.325
    assert design_grid(0.01, 0.05) == 0.075 and design_grid(0.99, 0.05) == 1.0


@pytest.mark.parametrize("theta", [0.5, 0.75, 0.3])
def test_with_a_steady_discordance_it_is_the_calibrated_sprt(theta: float) -> None:
    """Every pair discordant: ψ̂ = 1 throughout, and the spending test makes the SPRT's
    decisions at the SPRT's steps (its regions spend exactly the SPRT's alpha)."""
    rng = np.random.default_rng(1)
    designs = Designs(0.5, 0.05, 0.8, 200)
    for _ in range(150):
        b = (rng.random(200) < theta).astype(np.int64)
        a = 1 - b
        test = SpendingPaired(designs, burn_in=1)
        state = _run(test, a, b)
        assert test.design is not None and test.discordance == 1.0
        assert state == paired_path(a, b, test.design)


@pytest.mark.slow
def test_type_one_error_is_held_whatever_the_discordance_does() -> None:
    """Under H0 with a discordance that drifts (0.5 then 0.3), rejections stay within
    alpha; the alpha the test spent is never above it."""
    rng = np.random.default_rng(2)
    designs = Designs(0.2, 0.05, 0.8, 400)
    rejected, spent = [], []
    for _ in range(1500):
        psi = np.where(np.arange(400) < 60, 0.5, 0.3)
        disagree = rng.random(400) < psi
        a = (rng.random(400) < 0.5).astype(np.int64)
        b = np.where(disagree, 1 - a, a)
        test = SpendingPaired(designs)
        state = _run(test, a, b)
        rejected.append(state.decision == "reject_h0")
        spent.append(test.now.spent)
    assert max(spent) <= 0.05 + 1e-12
    se = (0.05 * 0.95 / len(rejected)) ** 0.5
    assert np.mean(rejected) <= 0.05 + 2 * se
    assert np.mean(rejected) > 0.02  # and it is not a test that never rejects


@pytest.mark.slow
def test_power_at_the_alternative() -> None:
    """+0.2 at discordance 0.4 (θ₁ = 0.75): rejects for the candidate most of the time."""
    rng = np.random.default_rng(3)
    designs = Designs(0.2, 0.05, 0.8, 400)
    wins = []
    for _ in range(300):
        u = rng.random(400)
        a = (u < 0.05).astype(np.int64)  # only the baseline passes: 0.05
        b = ((u >= 0.05) & (u < 0.4)).astype(np.int64)  # only the candidate: 0.35
        state = _run(SpendingPaired(designs), a, b)
        wins.append(state.decision == "reject_h0" and state.better == "b")
    assert np.mean(wins) >= 0.75
