"""Fuzz suite files through ``assay validate`` and ``assay run -k 1`` (see
tests/support/suite_fuzz.py): every case must end in success or located problems
(exit 2), never a traceback, an undocumented exit code, a hang, or a suite that
validates and then crashes the run.

    python scripts/fuzz_suites.py -n 5000 --base retail --base small --seed 0

Prints a table of outcomes and, for each failure, the case (seed, mutations) and the
end of its output; exits 1 when there is any failure.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from tests.support.suite_fuzz import FAILURES, WALL_FACTOR, fuzz  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=1000, help="cases per base suite")
    parser.add_argument("--base", action="append", choices=["retail", "small"], help="base suites")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first case")
    parser.add_argument("--limit-s", type=float, default=10.0, help="time limit of one step")
    parser.add_argument("--show", type=int, default=20, help="failures to print in full")
    args = parser.parse_args()
    bases = args.base or ["retail", "small"]
    started = time.monotonic()
    outcomes: dict[str, Counter[str]] = {b: Counter() for b in bases}
    failures = []
    harness = []
    slowest = slowest_cpu = 0.0
    for n, result in enumerate(fuzz(args.n, bases, args.seed, args.limit_s), start=1):
        outcomes[result.case.base][result.outcome] += 1
        steps = [result.validate] + ([result.run] if result.run else [])
        slowest = max(slowest, *(s.seconds for s in steps))
        slowest_cpu = max(slowest_cpu, *(s.cpu_seconds for s in steps))
        if result.outcome == "run harness":
            harness.append(result)
            print(f"HARNESS: seed {result.case.seed} {result.case.base} {result.case.mutations}", flush=True)
        if result.failed:
            failures.append(result)
            print(
                f"FAIL {result.outcome}: seed {result.case.seed} {result.case.base} {result.case.mutations}",
                flush=True,
            )
        if n % 250 == 0:
            print(f"{n} cases, {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    total = sum(sum(c.values()) for c in outcomes.values())
    print(
        f"\n{total} cases in {time.monotonic() - started:.0f} s "
        f"(seeds {args.seed}..{args.seed + args.n - 1}); "
        f"slowest step {slowest:.1f} s wall, {slowest_cpu:.1f} s CPU"
    )
    kinds = sorted({k for c in outcomes.values() for k in c})
    print("| outcome | " + " | ".join(bases) + " |")
    print("|---|" + "---|" * len(bases))
    for kind in kinds:
        print(f"| {kind} | " + " | ".join(str(outcomes[b][kind]) for b in bases) + " |")
    bad = sum(outcomes[b][k] for b in bases for k in FAILURES)
    print(
        f"\nfailures (traceback, undocumented exit, hang: > {args.limit_s:g} s CPU or "
        f"> {args.limit_s * WALL_FACTOR:g} s wall, validate ok but run crashed): {bad}"
    )
    for result in failures[: args.show]:
        step = result.run or result.validate
        print(f"\n--- seed {result.case.seed} {result.case.base}: {result.outcome} ({result.case.mutations})")
        print(step.output[-3000:])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
