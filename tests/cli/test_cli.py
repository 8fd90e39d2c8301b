"""The CLI as a user runs it: exit codes, JSON output, kill -9 + resume.

Commands run in process (``assay.cli.main``, as the ``assay`` script does); the kill -9
test runs real processes, since killing one is its point."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.support.cli import CliResult, assay_main

ROOT = Path(__file__).parents[2]
AGENT = "python:tests.toyagents:DepositAgent"
SUITE = """\
name: bank
domain: toy
defaults: {trials: 3}
tasks:
  - {id: dep, template: deposit, instances: 10}
"""


def env(**extra: str) -> dict[str, str]:
    """The environment of an ``assay`` subprocess (the kill -9 test)."""
    base = {k: v for k, v in os.environ.items() if k != "ASSAY_STORE"}
    return {**base, "PYTHONPATH": str(ROOT), "ASSAY_PLUGINS": "tests.toydomain", **extra}


def assay(*args: str, check: bool = True) -> CliResult:
    """``assay ARGS`` in process, from the checkout, with the default store unset (the toy
    domain is registered by tests/conftest.py; ASSAY_PLUGINS is for subprocesses)."""
    proc = assay_main(*args, env={"ASSAY_STORE": None}, cwd=ROOT)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "suite.yaml").write_text(SUITE)
    return tmp_path / "suite"


def trial_keys(db: Path, run_id: str) -> list[tuple[str, int, int | None]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(
            "select task_id, trial_index, reward from trials where run_id = ? order by task_id, trial_index",
            (run_id,),
        ).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()


def test_run_json_runs_and_show(suite_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    proc = assay(
        "run", str(suite_dir), "--agent", AGENT, "-k", "2", "--run-id", "one", "--store", str(db), "--json"
    )
    summary = json.loads(proc.stdout)
    assert summary["schema"] == "assay.run-summary/2"
    assert summary["run"]["run_id"] == "one" and summary["run"]["completed_trials"] == 20
    assert summary["overall"]["pass_hat_k"] == {"1": 1.0, "2": 1.0}
    listed = json.loads(assay("runs", "--store", str(db), "--json").stdout)
    assert listed["schema"] == "assay.runs/1"
    assert [r["run_id"] for r in listed["runs"]] == ["one"] and listed["runs"][0]["completed"] == 20
    shown = json.loads(assay("show", "one", "--store", str(db), "--json").stdout)
    assert shown["overall"] == summary["overall"]
    overview = assay("show", "one", "--store", str(db)).stdout
    assert "100.0% [" in overview and "95% interval" in overview  # rates come with their interval
    text = assay("show", "one", "--task", "dep-1", "--store", str(db)).stdout
    assert "deposit(" in text and "accounts" in text and "pass" in text
    detail = json.loads(
        assay("show", "one", "--task", "dep-1", "--trial", "1", "--store", str(db), "--json").stdout
    )
    assert detail["trial_index"] == 1 and detail["transcript"]["messages"][0]["role"] == "user"


def test_user_errors_exit_2_without_traceback(suite_dir: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    cases = [
        ("run", "no-such-suite", "--store", db),
        ("run", str(suite_dir), "--agent", "nope:x", "--store", db),
        ("show", "missing-run", "--store", db),
        ("run", "--resume", "missing-run", "--store", db),
        ("run", str(suite_dir), "-k", "0", "--store", db),
    ]
    for args in cases:
        proc = assay(*args, check=False)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr


def test_sigkill_then_resume_gives_exactly_tasks_times_k(suite_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "kill.db"
    args = ["run", str(suite_dir), "--agent", AGENT, "-k", "3", "-j", "2", "--seed", "11", "--store", str(db)]
    kills = 0
    for round_ in range(3):
        extra = ["--run-id", "victim"] if round_ == 0 else []
        cmd = [*args, *extra] if round_ == 0 else ["run", "--resume", "victim", "-j", "2", "--store", str(db)]
        child = subprocess.Popen(
            [sys.executable, "-m", "assay", *cmd],
            env=env(TOY_AGENT_DELAY="0.03"),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        target = 4 + 6 * round_
        deadline = time.time() + 60
        while len(trial_keys(db, "victim")) < target and time.time() < deadline and child.poll() is None:
            time.sleep(0.02)
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            kills += 1
        child.wait()
    assert kills >= 2
    partial = trial_keys(db, "victim")
    assert len(partial) < 30
    assay("run", "--resume", "victim", "--store", str(db))
    final = trial_keys(db, "victim")
    assert len(final) == 30 == len({(t, i) for t, i, _ in final})
    assay(
        "run",
        str(suite_dir),
        "--agent",
        AGENT,
        "-k",
        "3",
        "--seed",
        "11",
        "--run-id",
        "clean",
        "--store",
        str(db),
    )
    assert final == trial_keys(db, "clean")


def test_validate_builtin_suite_ok() -> None:
    proc = assay("validate", "retail")
    assert proc.stdout.startswith("ok: suite retail v")
    data = json.loads(assay("validate", "retail", "--json").stdout)
    assert (
        data["ok"]
        and data["tasks"] >= 40
        and set(data["strata"]) == {"normal", "edge", "adversarial", "high_risk"}
    )


def test_run_until_decided_stops_when_the_rate_test_decides(suite_dir: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    proc = assay(
        "run",
        str(suite_dir),
        "--agent",
        AGENT,
        "-k",
        "3",
        "--until-decided",
        "--threshold",
        "0.5",
        "--mde",
        "0.3",
        "--store",
        db,
        "--json",
    )
    result = json.loads(proc.stdout)
    assert result["verdict"] == "above"  # the toy agent always succeeds
    assert result["trials_run"] < result["budget"] == 30  # stopped before the planned 10 x 3 trials
    bad = assay("run", str(suite_dir), "--until-decided", "--store", db, check=False)
    assert bad.returncode == 2 and "exactly one of against (--against RUN_ID)" in bad.stderr
