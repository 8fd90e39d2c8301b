"""Timing commands as a user runs them: whole processes, wall and CPU time, peak memory,
several runs with the median and the spread, and the machine's load while they ran.

``os.wait4`` gives each child's own resource usage (``ru_maxrss``: its peak resident
set), so nothing of the parent is counted.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpus": os.cpu_count(),
        "cpu": cpu,
        "python": sys.version.split()[0],
        "platform": sys.platform,
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }


def run_once(
    argv: Sequence[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> dict[str, Any]:
    """Run ``argv`` to its end: exit code, wall seconds, CPU seconds (user + system),
    peak RSS in MB, the 1-minute load average before and after, and its output (kept
    in files, so a chatty child never blocks on a full pipe)."""
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(list(argv), env=env, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    return {
        "exit": proc.returncode,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,  # KiB on Linux
        "load": (load_before + os.getloadavg()[0]) / 2,
        "stdout": stdout[-20000:],
        "stderr": stderr[-2000:],
    }


def summarise(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Median and range of each figure over several runs."""
    out: dict[str, Any] = {"runs": len(samples)}
    for key in ("wall_s", "cpu_s", "peak_mb", "load"):
        values = [s[key] for s in samples]
        out[key] = {
            "median": round(statistics.median(values), 3),
            "min": round(min(values), 3),
            "max": round(max(values), 3),
        }
    return out


def time_command(
    argv: Sequence[str], repeats: int = 3, env: dict[str, str] | None = None, cwd: Path | None = None
) -> dict[str, Any]:
    """``repeats`` runs of a command; raises if one fails (a benchmark of a crash is no
    benchmark)."""
    samples = []
    for _ in range(repeats):
        sample = run_once(argv, env, cwd)
        if sample["exit"] != 0:
            raise RuntimeError(f"{' '.join(argv)} exited {sample['exit']}: {sample['stderr']}")
        samples.append(sample)
    return summarise(samples)


def assay_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "assay", *args]
