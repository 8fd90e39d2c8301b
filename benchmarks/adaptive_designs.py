"""Paired adaptive designs when the discordance is unknown: which one to use by default.

A paired SPRT powered for a difference δ depends on the share ψ of pairs on which the
two configurations disagree, which is unknown before the runs. This simulates, on
seeded synthetic pairs, the designs one could use without knowing ψ, against the SPRT
told the true ψ (the best a design can do) and the fixed-sample design at the true ψ:

- ``ψ = 3δ``: the previous default (a fixed guess);
- ``pilot, plug-in`` / ``pilot, 70% upper``: read pairs up to the 25th discordant one
  (no stopping), design the calibrated SPRT for ψ̂ (or its one-sided 70% Clopper–Pearson
  upper bound, to keep the power), then run it on all pairs; exact, since the pilot reads
  only whether pairs disagree;
- ``mixture SPRT``: the always-valid beta-binomial mixture (``--method msprt``): no ψ, no
  futility stop;
- ``spending`` (assay's default): the SPRT for the ψ̂ seen so far at every pair, its
  type-I error kept exact by alpha spending (assay.compare.spending), designed for a
  power raised to pay for estimating ψ (``design_power``: 0.83 for 0.8); ``spending, no
  power margin``: the same designed for the power asked (assay's default before).

Two pairs of agents, baseline 0.80, candidate 0.80 (H0) or 0.85 (+MDE, δ = 0.05):
*correlated* (they disagree on 15% of pairs at +MDE, 15.8% at H0) and *independent*
(29% and 32%). "saved" is 1 − mean pairs read / Connor's pairs at the true ψ of +MDE;
the CLI benchmark (adaptive_cli.py) adds what in-flight trials cost.

Usage: python benchmarks/adaptive_designs.py [--sims 1000] [--seed 0] [--exactness 20000]
Everything printed is measured in this run.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable

import numpy as np

from assay.compare.sequential import (
    SequentialDesign,
    SequentialState,
    design_paired,
    msprt_path,
    paired_path,
    theta_for,
)
from assay.compare.spending import Designs, SpendingPaired
from assay.stats import sample_size_mcnemar

ALPHA, POWER, MDE, BUDGET = 0.05, 0.8, 0.05, 3000
#: (p11, p10, p01): both pass, only the baseline, only the candidate
AGENTS = {
    "correlated": {"H0": (0.720737, 0.079263, 0.079263), "+MDE": (0.75, 0.05, 0.10)},
    "independent": {"H0": (0.64, 0.16, 0.16), "+MDE": (0.68, 0.12, 0.17)},
}
_designs: dict[float, SequentialDesign] = {}

Method = Callable[[np.ndarray, np.ndarray, float], tuple[SequentialState, int]]


def design(psi: float) -> SequentialDesign:
    if psi not in _designs:
        _designs[psi] = design_paired(theta_for(MDE, psi), ALPHA, POWER, mde=MDE)
    return _designs[psi]


def upper_bound(k: int, n: int, level: float) -> float:
    """One-sided Clopper–Pearson upper bound of k/n at ``level`` (bisection)."""

    def cdf(p: float) -> float:
        return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))

    lo, hi = k / n, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) > 1 - level else (lo, mid)
    return hi


def fixed_guess(a: np.ndarray, b: np.ndarray, psi1: float) -> tuple[SequentialState, int]:
    state = paired_path(a, b, design(round(3 * MDE, 4)))
    return state, state.observations


def oracle(a: np.ndarray, b: np.ndarray, psi1: float) -> tuple[SequentialState, int]:
    state = paired_path(a, b, design(round(psi1, 4)))
    return state, state.observations


def pilot(level: float | None) -> Method:
    def run(a: np.ndarray, b: np.ndarray, psi1: float) -> tuple[SequentialState, int]:
        where = np.flatnonzero(a != b)
        end = int(where[24]) + 1 if where.size >= 25 else a.size
        psi = 25 / end if level is None else upper_bound(25, end, level)
        grid = max(math.ceil(psi / 0.01 - 1e-9) * 0.01, 1.5 * MDE)
        state = paired_path(a, b, design(round(min(grid, 1.0), 4)))
        return state, max(state.observations, end) if state.reason != "discordance" else state.observations

    return run


def mixture(a: np.ndarray, b: np.ndarray, psi1: float) -> tuple[SequentialState, int]:
    state = msprt_path(a, b, ALPHA, MDE)
    return state, state.observations


def spending_with(designs: Designs) -> Method:
    """The spending test with ``designs`` (the default's, or made for the power asked)."""

    def run(a: np.ndarray, b: np.ndarray, psi1: float) -> tuple[SequentialState, int]:
        test = SpendingPaired(designs)
        while True:
            state = test.read(a, b)
            if test.needs is None:
                return state, state.observations
            designs.make(test.needs)

    return run


spending = spending_with(Designs(MDE, ALPHA, POWER, BUDGET))


METHODS: dict[str, Method] = {
    "SPRT told the true ψ": oracle,
    "ψ = 3δ (previous default)": fixed_guess,
    "pilot, plug-in": pilot(None),
    "pilot, 70% upper bound": pilot(0.7),
    "mixture SPRT (msprt)": mixture,
    "spending, no power margin": spending_with(Designs(MDE, ALPHA, POWER, BUDGET, beta_share=1.0)),
    "spending (default)": spending,
}


def simulate(
    method: Method, cells: tuple[float, float, float], psi1: float, sims: int, seed: int
) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    p11, p10, p01 = cells
    rejected, pairs = [], []
    for _ in range(sims):
        u = rng.random(BUDGET)
        a = (u < p11 + p10).astype(np.int64)
        b = ((u < p11) | ((u >= p11 + p10) & (u < p11 + p10 + p01))).astype(np.int64)
        state, n = method(a, b, psi1)
        rejected.append(state.decision == "reject_h0")
        pairs.append(n if state.decision != "continue" else BUDGET)
    return float(np.mean(rejected)), float(np.mean(pairs))


def exactness(sims: int) -> None:
    """Type-I error of the spending test under H0 at ψ = 0.4, δ = 0.2 (cheap designs, so
    many runs), next to the SPRT designed for the true ψ on the same pairs."""
    designs = Designs(0.2, ALPHA, POWER, 2000)
    oracle_design = design_paired(theta_for(0.2, 0.4), ALPHA, POWER, mde=0.2)
    rng = np.random.default_rng(123)
    rejected = oracle_rejected = 0
    most = 0.0
    for _ in range(sims):
        disagree = rng.random(2000) < 0.4
        a = (rng.random(2000) < 0.5).astype(np.int64)
        b = np.where(disagree, 1 - a, a)
        test = SpendingPaired(designs)
        while True:
            state = test.read(a, b)
            if test.needs is None:
                break
            designs.make(test.needs)
        rejected += state.decision == "reject_h0"
        most = max(most, test.now.spent)
        oracle_rejected += paired_path(a, b, oracle_design).decision == "reject_h0"
    se = math.sqrt(ALPHA * (1 - ALPHA) / sims)
    print(
        f"exactness, H0 at ψ = 0.4, δ = 0.2, {sims} runs: spending test rejects {rejected / sims:.4f}, "
        f"the SPRT for the true ψ {oracle_rejected / sims:.4f} (exact alpha {oracle_design.exact_alpha:.4f}; "
        f"SE {se:.4f}); the most alpha any run spent: {most:.4f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sims", type=int, default=1000, help="simulated decisions per scenario")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exactness", type=int, default=0, metavar="N", help="check alpha on N null runs")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.exactness:
        exactness(args.exactness)
        if not args.sims:
            return 0
    print(
        f"alpha {ALPHA}, power {POWER}, δ = {MDE}, budget {BUDGET} pairs, "
        f"{args.sims} decisions per scenario\n"
    )
    head = (
        f"{'agents':<12} {'design':<26} {'type-I':>7} {'power':>6} {'pairs H0':>9} {'pairs +MDE':>10} "
        f"{'fixed':>6} {'saved':>6}"
    )
    print(head)
    print("-" * len(head))
    for name, truth in AGENTS.items():
        _, p10, p01 = truth["+MDE"]
        psi1 = p10 + p01
        fixed = sample_size_mcnemar(p01, p10, ALPHA, POWER)
        for label, method in METHODS.items():
            seed = args.seed  # the same pairs for every design
            alpha, n0 = simulate(method, truth["H0"], psi1, args.sims, seed)
            power, n1 = simulate(method, truth["+MDE"], psi1, args.sims, seed + 1)
            saved = 1 - (n0 + n1) / 2 / fixed
            print(
                f"{name:<12} {label:<26} {alpha:7.3f} {power:6.3f} {n0:9.1f} {n1:10.1f} {fixed:6d} "
                f"{saved:6.1%}"
            )
        print()
    se_a, se_p = math.sqrt(ALPHA * (1 - ALPHA) / args.sims), math.sqrt(POWER * (1 - POWER) / args.sims)
    print(
        f"(Monte Carlo SE: ±{se_a:.3f} near {ALPHA}, ±{se_p:.3f} near {POWER}; "
        "every design is fed the same pairs)"
    )
    print(f"elapsed {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
