"""``assay --help`` and ``assay --version`` as whole processes: median wall time of
several runs, against ``python -c pass`` measured in the same run (the interpreter's
own start). Usage: python benchmarks/cli_startup.py [--runs 9]"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def _median(argv: list[str], runs: int) -> tuple[float, float, float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True, env={**os.environ, "COLUMNS": "100"})
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    runs = parser.parse_args().runs
    print(f"load average {os.getloadavg()[0]:.2f}, {runs} runs each (median [min, max] seconds)")
    base = _median([sys.executable, "-c", "pass"], runs)
    print(f"python -c pass      {base[0]:.3f} [{base[1]:.3f}, {base[2]:.3f}]")
    for args in (["--help"], ["--version"]):
        m = _median([sys.executable, "-m", "assay", *args], runs)
        ratio = m[0] / base[0]
        print(f"assay {args[0]:<13} {m[0]:.3f} [{m[1]:.3f}, {m[2]:.3f}]  ({ratio:.1f}x the interpreter)")


if __name__ == "__main__":
    main()
