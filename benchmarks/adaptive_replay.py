"""The paired decisions of benchmarks/adaptive_cli.py replayed without the CLI, and the
exact type-I error of each replicate's test.

``adaptive_cli.py`` runs every decision through ``assay run --until-decided``, which is
slow (seconds per decision) and so gives 30-60 decisions per scenario: its realised
error rates carry Monte Carlo errors of ±0.04 near 0.05. This script regenerates the same
trial outcomes without running anything: the Bernoulli agents' ``passes`` at the trial
seeds ``assay`` derives (``trial_seed(run seed, task, index)``), in the dispatch order
of an adaptive run (``dispatch_order``), and feeds them to the test the command uses
(``PairedMonitor``). Three uses:

- ``--raw FILE`` (an ``adaptive_cli.py --raw`` file): checks that every replayed decision
  and its trials needed equal what the command reported, so the figures below are the
  command's;
- many more seeds than the CLI can afford: the realised rejection rate with a tight
  interval;
- the mean trials the decisions needed and the saving against the fixed design of
  ``adaptive_cli.py`` (Connor's pairs at the true discordance of the +MDE pair);
  ``--power`` asks the test for another power (the fixed n stays at power 0.8, the
  comparison of the acceptance) and ``--beta-share`` changes the margin the command
  adds to it for estimating the discordance (1: none, the command before the margin);
- ``--exact`` (H0): for each replicate, the exact probability, given the pairs on which
  the two agents disagreed, that the paired test (``SpendingPaired``) rejects when the
  winners of the disagreeing pairs are fair coins, the null of a paired comparison: the
  dynamic programme over every winner path that the test itself carries, run to its end.

``--design rate`` replays the rate test of adaptive_cli.py instead (``--threshold 0.8
--mde 0.1``, the candidate's outcomes in the dispatch order of its own run).

Usage: python benchmarks/adaptive_replay.py --tasks 500 --agents correlated --truth H0
       --seeds 0:30 [--raw r500.raw] [--exact] [--design rate]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from adaptive_cli import P0, coupling_for  # noqa: E402
from bernoulli_agent import BernoulliAgent, cells  # noqa: E402

from assay.compare.dispatch import dispatch_order  # noqa: E402
from assay.compare.fixed import fixed_rate_trials  # noqa: E402
from assay.compare.monitors import PairedMonitor, RateMonitor  # noqa: E402
from assay.compare.planning import plan  # noqa: E402
from assay.compare.sequential import design_rate  # noqa: E402
from assay.compare.spending import BETA_SHARE, Designs, SpendingPaired, design_power  # noqa: E402
from assay.runner.plan import trial_seed  # noqa: E402
from assay.stats import wilson_interval  # noqa: E402

ALPHA, POWER = 0.05, 0.8


class Scenario:
    """One paired scenario of adaptive_cli.py (its defaults)."""

    def __init__(self, args: argparse.Namespace):
        self.tasks, self.mde = args.tasks, args.mde
        self.correlated = args.agents == "correlated"
        coupling = coupling_for(args.discordance, P0 + args.mde, 0.5, args.coupling_tasks or args.tasks)
        self.icc, self.coupling = (0.5, coupling) if self.correlated else (0.0, 0.0)
        pairs = args.pairs_correlated if self.correlated else args.pairs
        self.k = max(1, math.ceil(pairs / args.tasks))  # the baseline's trials per task
        self.p = P0 if args.truth == "H0" else P0 + args.mde
        c = cells(P0, P0 + args.mde, self.icc, self.coupling, args.tasks)
        fixed = plan(P0, args.mde, alpha=ALPHA, power=POWER, paired=True, discordance=c["p10"] + c["p01"])
        assert fixed.tasks_needed is not None
        self.fixed_n: int = fixed.tasks_needed  # what adaptive_cli.py compares with
        self.ids = [f"t{i:04d}" for i in range(args.tasks)]
        self.opening = {t: f"Task {i} of {args.tasks}: say hello." for i, t in enumerate(self.ids)}

    def _passes(self, p: float, coupling: float, stream: str, seed: int, task: str) -> int:
        params = {"p": p, "icc": self.icc, "coupling": coupling, "stream": stream}
        return int(BernoulliAgent(SimpleNamespace(params=params, seed=seed)).passes(self.opening[task]))  # type: ignore[arg-type]

    def outcomes(self, seed: int) -> tuple[list[int], list[int]]:
        """Baseline and candidate outcomes in the candidate's dispatch order."""
        order = dispatch_order(self.ids, self.k, seed)
        seeds = [trial_seed(seed, t, j) for t, j in order]
        a = [self._passes(P0, 1.0, "baseline", s, t) for s, (t, _) in zip(seeds, order, strict=True)]
        b = [
            self._passes(self.p, self.coupling, "candidate", s, t)
            for s, (t, _) in zip(seeds, order, strict=True)
        ]
        return a, b


def replay_rate(args: argparse.Namespace) -> dict[str, Any]:
    """The rate test of adaptive_cli.py (``--threshold 0.8 --mde RATE_MDE``) replayed:
    the candidate's outcomes (coupling 0, the agents' icc) at the trial seeds of the
    run's dispatch order, fed to the command's test (``RateMonitor``)."""
    first, end = (int(x) for x in args.seeds.split(":"))
    icc = 0.5 if args.agents == "correlated" else 0.0
    p = P0 if args.truth == "H0" else P0 + args.rate_mde
    design = design_rate(P0, P0 + args.rate_mde, ALPHA, POWER)
    fixed_n = fixed_rate_trials(P0, P0 + args.rate_mde, ALPHA, POWER)
    ids = [f"t{i:04d}" for i in range(args.tasks)]
    opening = {t: f"Task {i} of {args.tasks}: say hello." for i, t in enumerate(ids)}
    k = -(-design.max_steps // args.tasks)
    key = f"{args.tasks}/{args.agents}/rate/{args.truth}"
    cli = json.loads(args.raw.read_text())["docs"][key] if args.raw else None
    rejected = same = compared = 0
    needed: list[int] = []
    for seed in range(first, end):
        order = dispatch_order(ids, k, seed)
        params = {"p": p, "icc": icc, "coupling": 0.0, "stream": "candidate"}
        outcomes = [
            int(
                BernoulliAgent(SimpleNamespace(params=params, seed=trial_seed(seed, t, j))).passes(opening[t])
            )  # type: ignore[arg-type]
            for t, j in order
        ]
        reading = RateMonitor(design).read(outcomes)
        rejected += reading.state.decision == "reject_h0"
        needed.append(reading.needed if reading.needed is not None else len(outcomes))
        at = seed - args.raw_seed
        if cli is not None and 0 <= at < len(cli):
            compared += 1
            same += (cli[at]["state"]["decision"], cli[at]["trials_needed"]) == (
                reading.state.decision,
                needed[-1],
            )
    got = _summary(key, first, end, rejected, needed, fixed_n, f"icc {icc:g}, {k} trials per task")
    if cli is not None:
        print(f"same decision and trials needed as the CLI: {same}/{compared}")
    return {**got, "same": same, "compared": compared}


def _summary(
    key: str, first: int, end: int, rejected: int, needed: list[int], fixed_n: int, about: str
) -> dict[str, Any]:
    runs = end - first
    low, high = wilson_interval(rejected, runs)
    print(f"{key}, seeds {first}..{end - 1} ({about})")
    print(f"rejected {rejected}/{runs} = {rejected / runs:.4f} [95% CI {low:.4f}, {high:.4f}]")
    mean, sd = float(np.mean(needed)), float(np.std(needed, ddof=1)) if runs > 1 else 0.0
    saved = 1 - mean / fixed_n
    print(f"trials needed: mean {mean:.1f}; fixed n {fixed_n}: saved (needed) {saved:.1%} "
          f"± {2 * sd / math.sqrt(runs) / fixed_n:.1%} (2 SE)")  # fmt: skip
    return {"rejected": rejected, "runs": runs, "needed": needed, "fixed_n": fixed_n, "saved_needed": saved}


def decide(
    a: list[int], b: list[int], mde: float, power: float = POWER, beta_share: float = BETA_SHARE
) -> dict[str, Any]:
    """The command's test fed every outcome at once (a sequential test reads them in order
    and stops where it decides, so this is what the dispatcher's prefixes give).
    ``beta_share``: what the designs' type-II error is of the one asked (the command's
    :data:`BETA_SHARE`; 1 designs them for ``power`` itself, as before it)."""
    monitor = PairedMonitor(a, mde=mde, alpha=ALPHA, power=power)
    if beta_share != BETA_SHARE:
        monitor.spending = SpendingPaired(Designs(mde, ALPHA, power, len(a), beta_share))
    reading = monitor.read(b)
    while monitor.prepare is not None:  # a design to make, then read on
        prepare, monitor.prepare = monitor.prepare, None
        prepare()
        reading = monitor.read(b)
    needed = reading.needed if reading.needed is not None else len(b)  # undecided: the budget ran
    return {"decision": reading.state.decision, "needed": needed, "better": reading.state.better}


def exact_alpha(a: list[int], b: list[int], mde: float) -> float:
    """P(the spending test rejects | where the runs disagreed), winners fair coins: the
    test's own dynamic programme over all winner paths, stepped to the last pair."""
    designs = Designs(mde, ALPHA, POWER, len(a))
    test = SpendingPaired(designs)
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x == y:
            continue
        while not test._step(i, int(y > x)):  # the path's own state is not used here
            if test.fallback is not None:  # then the mixture SPRT spends what is left
                return designs.alpha
            assert test.needs is not None
            designs.make(test.needs)
        if test.now.mass.sum() < 1e-12:
            break
    return test.now.spent


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--agents", choices=("independent", "correlated"), default="correlated")
    parser.add_argument("--truth", choices=("H0", "+MDE"), default="H0")
    parser.add_argument("--seeds", default="0:30", help="run seeds FIRST:END (END excluded)")
    parser.add_argument("--design", choices=("paired", "rate"), default="paired")
    parser.add_argument("--mde", type=float, default=0.05, help="the paired test's mde")
    parser.add_argument("--rate-mde", type=float, default=0.10, help="the rate test's mde (threshold 0.8)")
    parser.add_argument("--power", type=float, default=POWER, help="power asked (--power of the command)")
    parser.add_argument(
        "--beta-share",
        type=float,
        default=BETA_SHARE,
        help="design the paired test for a type-II error this share of 1 - power "
        f"(default the command's {BETA_SHARE}; 1: for --power itself, the command before it)",
    )
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--pairs-correlated", type=int, default=1200)
    parser.add_argument("--discordance", type=float, default=0.15)
    parser.add_argument(
        "--coupling-tasks",
        type=int,
        default=None,
        help="suite size the coupling was tuned on (default --tasks)",
    )
    parser.add_argument(
        "--raw", type=Path, default=None, help="an adaptive_cli.py --raw file to compare with"
    )
    parser.add_argument("--raw-seed", type=int, default=0, help="the --seed that --raw file was run with")
    parser.add_argument("--exact", action="store_true", help="exact type-I error per replicate (H0)")
    parser.add_argument("--coins", type=int, default=0, metavar="N",
                        help="per replicate: N runs with fair-coin winners on its disagreements")  # fmt: skip
    parser.add_argument("--wins", action="store_true", help="the candidate's share of discordant pairs")
    return parser


def fair_coins(a: list[int], b: list[int], mde: float, sims: int, seed: int) -> float:
    """Share of ``sims`` runs the test rejects when the winners of the pairs on which
    ``a`` and ``b`` disagree are redrawn as fair coins (the rest kept as they are)."""
    rng = np.random.default_rng(seed)
    xa, xb = np.asarray(a), np.asarray(b)
    disagree = xa != xb
    designs = Designs(mde, ALPHA, POWER, len(a))
    rejected = 0
    for _ in range(sims):
        a_wins = (rng.random(len(a)) < 0.5).astype(np.int64)
        ya = np.where(disagree, a_wins, xa)
        yb = np.where(disagree, 1 - a_wins, xb)
        test = SpendingPaired(designs)
        state = test.read(ya, yb)
        while test.needs is not None:
            designs.make(test.needs)
            state = test.read(ya, yb)
        rejected += state.decision == "reject_h0"
    return rejected / sims


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.design == "rate":
        replay_rate(args)
    else:
        replay(args)
    return 0


def replay(args: argparse.Namespace) -> dict[str, Any]:
    """Replay, print and return the figures (rejected, runs, same, compared, alphas)."""
    first, end = (int(x) for x in args.seeds.split(":"))
    sc = Scenario(args)
    key = f"{args.tasks}/{args.agents}/paired/{args.truth}"
    cli = json.loads(args.raw.read_text())["docs"][key] if args.raw else None
    rejected = same = compared = won = discordant = 0
    alphas: list[float] = []
    needed: list[int] = []
    for seed in range(first, end):
        a, b = sc.outcomes(seed)
        got = decide(a, b, args.mde, args.power, args.beta_share)
        rejected += got["decision"] == "reject_h0"
        needed.append(got["needed"])
        at = seed - args.raw_seed  # the raw file holds replicates raw_seed, raw_seed + 1, ...
        if cli is not None and 0 <= at < len(cli):
            compared += 1
            reported = (cli[at]["state"]["decision"], cli[at]["trials_needed"])
            same += reported == (got["decision"], got["needed"])
        if args.exact:
            alphas.append(exact_alpha(a, b, args.mde))
        if args.coins:
            rate = fair_coins(a, b, args.mde, args.coins, seed)
            print(f"seed {seed}: fair-coin winners, {args.coins} runs: rejects {rate:.4f} "
                  f"(SE {math.sqrt(ALPHA * (1 - ALPHA) / args.coins):.4f})")  # fmt: skip
        discordant += sum(x != y for x, y in zip(a, b, strict=True))
        won += sum(y > x for x, y in zip(a, b, strict=True))
    runs = end - first
    low, high = wilson_interval(rejected, runs)
    power = design_power(args.power, args.beta_share)
    print(f"{key}, seeds {first}..{end - 1} (coupling {sc.coupling:.4f}, baseline {sc.k} trials per task; "
          f"power {args.power:g} asked, designs for {power:g})")  # fmt: skip
    print(f"rejected {rejected}/{runs} = {rejected / runs:.4f} [95% CI {low:.4f}, {high:.4f}]")
    mean, sd = float(np.mean(needed)), float(np.std(needed, ddof=1)) if runs > 1 else 0.0
    saved = 1 - mean / sc.fixed_n
    print(f"trials needed: mean {mean:.1f}; fixed n {sc.fixed_n}: saved (needed) {saved:.1%} "
          f"± {2 * sd / math.sqrt(runs) / sc.fixed_n:.1%} (2 SE)")  # fmt: skip
    if cli is not None:
        print(f"same decision and trials needed as the CLI: {same}/{compared}")
    if alphas:
        print(f"exact type-I error given the disagreements: max {max(alphas):.5f}, "
              f"mean {sum(alphas) / len(alphas):.5f} over {len(alphas)} replicates")  # fmt: skip
    if args.wins:
        print(f"the candidate won {won}/{discordant} = {won / discordant:.4f} of the discordant pairs "
              f"(SE {0.5 / math.sqrt(discordant):.4f})")  # fmt: skip
    return {
        "rejected": rejected,
        "runs": runs,
        "same": same,
        "compared": compared,
        "alphas": alphas,
        "needed": needed,
        "fixed_n": sc.fixed_n,
        "saved_needed": saved,
    }


if __name__ == "__main__":
    sys.exit(main())
