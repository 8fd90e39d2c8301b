"""Crash safety: SIGKILL at random moments, resume each time (scripts/soak.py), and
several processes writing one SQLite store at once."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # plain pytest leaves it out; pytest -m slow and CI run it

ROOT = Path(__file__).parents[2]


def load_soak():
    spec = importlib.util.spec_from_file_location("soak", ROOT / "scripts" / "soak.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_soak_with_random_kills(tmp_path: Path) -> None:
    result = load_soak().soak(kills=6, tasks=8, k=3, workdir=tmp_path)
    assert result["kills"] >= 3
    assert result["trials"] == result["distinct"] == result["planned"] == 24
    assert result["identical_to_uninterrupted"] and result["same_aggregates"]


def test_concurrent_writer_processes(tmp_path: Path) -> None:
    soak = load_soak()
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "suite.yaml").write_text(soak.SUITE.format(k=2, tasks=10))
    db = tmp_path / "shared.db"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "assay",
                "run",
                str(tmp_path / "suite"),
                "--agent",
                soak.AGENT,
                "--run-id",
                f"p{i}",
                "--store",
                str(db),
            ],
            env=soak._env(),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    for proc in procs:
        assert proc.wait(timeout=300) == 0, proc.stderr.read()
    for i in range(3):
        rows = soak._rows(db, f"p{i}")
        assert len(rows) == 20 == len({(t, j) for t, j, _, _ in rows})
    twins = [
        subprocess.Popen(
            [sys.executable, "-m", "assay", "run", "--resume", "p0", "--store", str(db)],
            env=soak._env(),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(2)
    ]
    # two processes resuming the same run at once: both finish, neither duplicates a trial
    assert all(p.wait(timeout=300) == 0 for p in twins)
    assert len(soak._rows(db, "p0")) == 20
