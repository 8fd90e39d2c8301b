"""Adaptive trials vs a fixed-sample design: trials used and realised error rates.

Simulates many decisions on synthetic, seeded outcomes and runs each through

- the fixed-sample design at the configured alpha and power (exact McNemar on Connor's
  number of pairs; exact one-sided binomial test at the smallest n with the power), and
- the calibrated SPRT of ``assay run --until-decided`` (assay.compare.sequential; for the
  paired case the design for a known discordance, ``--discordance``; when it is not known
  see adaptive_designs.py),
  truncated where the design was calibrated (about three times the fixed n),
- the same SPRT with Wald's textbook boundaries log((1 - beta)/alpha), log(beta/(1 - alpha))
  instead of calibrated ones, to show what the calibration buys,
- and, for the paired case, the always-valid beta-binomial mixture SPRT
  (``assay.stats.discordant_msprt``, no futility stop) for reference.

Usage: python benchmarks/adaptive.py [--sims 4000] [--seed 0]
Everything printed is measured in this run.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, replace

import numpy as np

from assay.compare.sequential import (
    SequentialDesign,
    design_paired,
    design_rate,
    paired_path,
    rate_path,
    theta_for,
)
from assay.stats import discordant_msprt, mcnemar_exact, sample_size_mcnemar

ALPHA, POWER = 0.05, 0.8


@dataclass
class Row:
    design: str
    scenario: str
    truth: str
    fixed_n: int
    fixed_reject: float
    seq_n: float
    seq_reject: float
    wald_n: float
    wald_reject: float
    msprt_n: float | None = None
    msprt_reject: float | None = None

    @property
    def saved(self) -> float:
        return 1 - self.seq_n / self.fixed_n


def _binom_sf(c: int, n: int, p: float) -> float:
    """P(X >= c) for X ~ Binomial(n, p), exact."""
    return float(sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(c, n + 1)))


def wald(design: SequentialDesign, sides: int) -> SequentialDesign:
    """The design with Wald's approximate boundaries (alpha split over the sides)."""
    a = design.alpha / sides
    return replace(design, upper=math.log((1 - design.beta) / a), lower=math.log(design.beta / (1 - a)))


def fixed_rate_design(p0: float, p1: float) -> tuple[int, int]:
    """Smallest n (and critical count) whose exact one-sided binomial test has size <= alpha
    and power >= POWER at p1."""
    for n in range(5, 5000):
        c = next(c for c in range(n + 2) if _binom_sf(c, n, p0) <= ALPHA)
        if c <= n and _binom_sf(c, n, p1) >= POWER:
            return n, c
    raise RuntimeError("no fixed design found")


def paired_rows(sims: int, rng: np.random.Generator) -> list[Row]:
    mde, psi = 0.05, 0.15
    design = design_paired(theta_for(mde, psi), ALPHA, POWER, mde=mde)
    n_fix = sample_size_mcnemar((psi + mde) / 2, (psi - mde) / 2, ALPHA, POWER)
    budget = 3 * n_fix  # ≈ the design's truncation (3× the fixed number of discordant pairs)
    textbook = wald(design, 2)
    scenarios = [
        ("H0: no difference", 0.075, 0.075),
        ("H1: +5 pts (MDE)", 0.10, 0.05),
        ("H1: -5 pts (MDE)", 0.05, 0.10),
        ("+10 pts", 0.125, 0.025),
    ]
    rows = []
    for name, p10, p01 in scenarios:
        fixed, seq_n, seq_rej, ms_n, ms_rej, wald_n, wald_rej = [], [], [], [], [], [], []
        for _ in range(sims):
            u = rng.random(budget)
            b = (u < p10).astype(np.int64)  # only the candidate passed
            a = ((u >= p10) & (u < p10 + p01)).astype(np.int64)  # only the baseline passed
            fixed.append(mcnemar_exact(int(b[:n_fix].sum()), int(a[:n_fix].sum())) < ALPHA)
            state = paired_path(a, b, design)
            seq_n.append(state.observations)
            seq_rej.append(state.decision == "reject_h0")
            textbook_state = paired_path(a, b, textbook)
            wald_n.append(textbook_state.observations)
            wald_rej.append(textbook_state.decision == "reject_h0")
            ms = discordant_msprt(b, a, alpha=ALPHA)
            ms_n.append(ms.n)
            ms_rej.append(ms.stopped)
        rows.append(
            Row(
                "paired (McNemar)",
                name,
                f"p10={p10}, p01={p01}",
                n_fix,
                float(np.mean(fixed)),
                float(np.mean(seq_n)),
                float(np.mean(seq_rej)),
                float(np.mean(wald_n)),
                float(np.mean(wald_rej)),
                float(np.mean(ms_n)),
                float(np.mean(ms_rej)),
            )
        )
    return rows


def rate_rows(sims: int, rng: np.random.Generator) -> list[Row]:
    p0, p1 = 0.80, 0.90
    design = design_rate(p0, p1, ALPHA, POWER)
    n_fix, c_fix = fixed_rate_design(p0, p1)
    budget = design.max_steps  # the truncation the design was calibrated for
    textbook = wald(design, 1)
    rows = []
    for name, p in [
        ("H0: rate = 0.80", p0),
        ("H1: rate = 0.90", p1),
        ("rate = 0.70", 0.70),
        ("rate = 0.97", 0.97),
    ]:
        fixed, seq_n, seq_rej, wald_n, wald_rej = [], [], [], [], []
        for _ in range(sims):
            x = (rng.random(budget) < p).astype(np.int64)
            fixed.append(int(x[:n_fix].sum()) >= c_fix)
            state = rate_path(x, design)
            seq_n.append(state.observations)
            seq_rej.append(state.decision == "reject_h0")
            textbook_state = rate_path(x, textbook)
            wald_n.append(textbook_state.observations)
            wald_rej.append(textbook_state.decision == "reject_h0")
        rows.append(
            Row(
                "rate threshold (SPRT)",
                name,
                f"p={p}",
                n_fix,
                float(np.mean(fixed)),
                float(np.mean(seq_n)),
                float(np.mean(seq_rej)),
                float(np.mean(wald_n)),
                float(np.mean(wald_rej)),
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=4000, help="simulated decisions per scenario")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    rows = paired_rows(args.sims, rng) + rate_rows(args.sims, rng)
    print(f"alpha={ALPHA}, power={POWER}, {args.sims} simulated decisions per scenario, seed {args.seed}\n")
    head = (
        f"{'design':<22} {'scenario':<21} {'fixed n':>7} {'seq. n':>7} {'saved':>6} {'Wald n':>7} "
        f"{'saved':>6} {'mSPRT n':>8} | {'P(reject): fixed':>16} {'seq.':>5} {'Wald':>5} {'mSPRT':>5}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        ms_n = f"{r.msprt_n:8.1f}" if r.msprt_n is not None else f"{'':8}"
        ms_rej = f"{r.msprt_reject:5.3f}" if r.msprt_reject is not None else ""
        print(
            f"{r.design:<22} {r.scenario:<21} {r.fixed_n:7d} {r.seq_n:7.1f} {r.saved:6.1%} {r.wald_n:7.1f} "
            f"{1 - r.wald_n / r.fixed_n:6.1%} {ms_n} | {r.fixed_reject:16.3f} {r.seq_reject:5.3f} "
            f"{r.wald_reject:5.3f} {ms_rej}"
        )
    saved = float(np.mean([r.saved for r in rows]))
    design_points = [r for r in rows if r.scenario.startswith(("H0", "H1"))]
    saved_design = float(np.mean([r.saved for r in design_points]))
    wald_saved = float(np.mean([1 - r.wald_n / r.fixed_n for r in design_points]))
    se = math.sqrt(ALPHA * (1 - ALPHA) / args.sims)
    print()
    print(f"average trials saved, all scenarios:          {saved:.1%}")
    print(f"average trials saved, H0/H1 design points:    {saved_design:.1%}")
    print(f"  same, with Wald's textbook boundaries:      {wald_saved:.1%}")
    for r in design_points:
        kind = "type-I error" if r.scenario.startswith("H0") else "power"
        rates = f"fixed {r.fixed_reject:.3f}  sequential {r.seq_reject:.3f}  Wald {r.wald_reject:.3f}"
        print(f"{r.design:<22} {r.scenario:<21} {kind:<12} {rates}")
    se_power = math.sqrt(POWER * (1 - POWER) / args.sims)
    print(f"(Monte Carlo SE of a rate near {ALPHA}: ±{se:.3f}; near {POWER}: ±{se_power:.3f})")
    print(f"elapsed {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
