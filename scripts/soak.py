"""Crash-safety soak: start a run, SIGKILL it at random moments, resume, repeat; then
check exactly tasks x k trials, no duplicates, and aggregates identical to an
uninterrupted run with the same seed.

    python scripts/soak.py --kills 50        # the long version
    (tests/cli/test_soak.py runs a short one)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = """\
name: soak
domain: toy
defaults: {{trials: {k}}}
tasks:
  - {{id: dep, template: deposit, instances: {tasks}}}
"""
AGENT = "python:tests.toyagents:DepositAgent"


def _env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k != "ASSAY_STORE"}
    return {**base, "PYTHONPATH": str(ROOT), "ASSAY_PLUGINS": "tests.toydomain", **extra}


def _rows(db: Path, run_id: str) -> list[tuple]:
    try:
        con = sqlite3.connect(db, timeout=30)
        try:
            return con.execute(
                "select task_id, trial_index, reward, termination from trials where run_id = ? "
                "order by task_id, trial_index",
                (run_id,),
            ).fetchall()
        finally:
            con.close()
    except sqlite3.OperationalError:
        return []


def _run_exists(db: Path, run_id: str) -> bool:
    try:
        con = sqlite3.connect(db, timeout=30)
        try:
            return con.execute("select 1 from runs where run_id = ?", (run_id,)).fetchone() is not None
        finally:
            con.close()
    except sqlite3.OperationalError:
        return False


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        capture_output=True,
        text=True,
        env=_env(**env),
        cwd=ROOT,
        timeout=600,
    )


def soak(kills: int, tasks: int = 12, k: int = 3, seed: int = 7, workdir: Path | None = None) -> dict:
    rng = random.Random(seed)
    tmp = Path(workdir or tempfile.mkdtemp(prefix="assay-soak-"))
    (tmp / "suite").mkdir(parents=True, exist_ok=True)
    (tmp / "suite" / "suite.yaml").write_text(SUITE.format(k=k, tasks=tasks))
    db = tmp / "soak.db"
    planned = tasks * k
    done_kills = 0
    first = True
    while done_kills < kills:
        args = (
            ["run", str(tmp / "suite"), "--agent", AGENT, "--seed", str(seed), "--run-id", "soak"]
            if first
            else ["run", "--resume", "soak"]
        )
        child = subprocess.Popen(
            [sys.executable, "-m", "assay", *args, "-j", "3", "--store", str(db)],
            env=_env(TOY_AGENT_DELAY="0.01"),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if rng.random() < 0.2:
            time.sleep(rng.uniform(0.0, 1.0))  # during start-up: importing, loading, planning
        else:  # mid-run: running trials, writing them
            deadline = time.time() + 60
            while not _run_exists(db, "soak") and time.time() < deadline and child.poll() is None:
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 0.8))
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            done_kills += 1
        child.wait()
        if len(_rows(db, "soak")) >= planned:
            break  # finished before we could kill it again
    proc = _cli("run", "--resume", "soak", "--store", str(db))
    if proc.returncode != 0:
        raise AssertionError(f"final resume failed: {proc.stderr}")
    rows = _rows(db, "soak")
    keys = {(t, i) for t, i, _, _ in rows}
    clean = _cli(
        "run",
        str(tmp / "suite"),
        "--agent",
        AGENT,
        "--seed",
        str(seed),
        "--run-id",
        "clean",
        "--store",
        str(db),
        "--json",
    )
    reference = _rows(db, "clean")
    soaked = json.loads(_cli("show", "soak", "--store", str(db), "--json").stdout)
    summary = json.loads(clean.stdout)
    return {
        "kills": done_kills,
        "planned": planned,
        "trials": len(rows),
        "distinct": len(keys),
        "identical_to_uninterrupted": rows == reference,
        "same_aggregates": soaked["overall"] == summary["overall"] and soaked["tasks"] == summary["tasks"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("-k", type=int, default=4)
    args = parser.parse_args()
    result = soak(args.kills, args.tasks, args.k)
    print(json.dumps(result, indent=2))
    ok = result["trials"] == result["distinct"] == result["planned"] and result["identical_to_uninterrupted"]
    sys.exit(0 if ok and result["same_aggregates"] else 1)


if __name__ == "__main__":
    main()
