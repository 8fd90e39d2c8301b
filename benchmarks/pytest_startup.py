"""What assay's pytest plugin costs every pytest session of an environment where assay
is installed (pytest loads every ``pytest11`` plugin at start).

1. ``import assay.pytest_plugin`` after ``import pytest``, timed inside fresh processes
   (what the plugin adds to a session's start, without the noise of the interpreter);
2. ``pytest --collect-only`` of an empty folder as a whole process, with the plugin
   registered through its entry point and with it blocked (``-p no:assay``), the two
   interleaved so a change of machine load hits both alike.

The entry point is declared by a throw-away ``.dist-info`` folder put on the path (as
``pip install assay`` would), so the installed copy of assay does not matter.
Usage: python benchmarks/pytest_startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMPORT = (
    "import time, pytest\n"
    "t = time.perf_counter()\n"
    "import assay.pytest_plugin\n"
    "print(time.perf_counter() - t)\n"
)


def _site(folder: Path) -> Path:
    dist = folder / "site" / "assay_pytest_startup-0.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: assay-pytest-startup\nVersion: 0.0\n")
    (dist / "entry_points.txt").write_text("[pytest11]\nassay = assay.pytest_plugin\n")
    return dist.parent


def _wall(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    return time.perf_counter() - start


def _fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:7.1f} ms [{min(xs) * 1000:.1f}, {max(xs) * 1000:.1f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_site(folder)), str(ROOT / "src")])}
        argv = [sys.executable, "-c", IMPORT]
        imports = [
            float(subprocess.run(argv, env=env, capture_output=True, text=True).stdout) for _ in range(runs)
        ]
        pytest = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        with_plugin: list[float] = []
        without: list[float] = []
        for _ in range(runs):
            with_plugin.append(_wall(pytest, folder, env))
            without.append(_wall([*pytest, "-p", "no:assay"], folder, env))
    print(f"load average {os.getloadavg()[0]:.2f}, {runs} runs each: median [min, max]")
    print(f"import assay.pytest_plugin (after pytest) {_fmt(imports)}")
    print(f"pytest --collect-only, plugin loaded      {_fmt(with_plugin)}")
    print(f"pytest --collect-only, -p no:assay        {_fmt(without)}")
    diff = statistics.median(with_plugin) - statistics.median(without)
    print(f"difference of the medians                 {diff * 1000:+7.1f} ms")


if __name__ == "__main__":
    main()
