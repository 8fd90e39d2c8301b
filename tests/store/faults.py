"""What the store-fault tests share: ``assay`` run as a user runs it (in this process
or in one of its own), the one-line failure they all expect, a run's stored statuses, a
suite folder and a small tmpfs."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.server.support import AGENT, SUITE
from tests.support.cli import CliResult, assay_main

ROOT = Path(__file__).parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_STORE"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT), env.get("PYTHONPATH", "")])
    env["ASSAY_PLUGINS"] = "tests.toydomain"
    return {**env, **extra}


def assay(
    cwd: Path, *args: str, env: dict[str, str] | None = None, limit: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    """``assay ARGS`` in a process of its own: for what another process must do (hold a
    lock, race for a run id, live under a file-size limit)."""
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        cwd=cwd,
        env=env or _env(),
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limit,
    )


def cli(cwd: Path, *args: str) -> CliResult:
    """``assay ARGS`` in this process (the toy domain is registered by tests/conftest.py)."""
    return assay_main(*args, cwd=cwd, env={"ASSAY_STORE": None})


def run_suite(cwd: Path, store: str, *extra: str) -> CliResult:
    return cli(cwd, "run", str(cwd / "suite"), "--agent", AGENT, "--store", store, *extra)


def run_suite_process(cwd: Path, store: str, *extra: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return assay(cwd, "run", str(cwd / "suite"), "--agent", AGENT, "--store", store, *extra, **kw)  # type: ignore[arg-type]


def clean_failure(result: CliResult | subprocess.CompletedProcess[str], code: int, words: str) -> None:
    """One line on stderr saying ``words``, the documented exit code, no traceback."""
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    assert result.returncode == code, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("run ")]
    assert len(lines) == 1 and words in lines[0], result.stderr


def statuses(db: Path) -> dict[str, str]:
    mode = "ro" if os.access(db.parent, os.W_OK) else "ro&immutable=1"  # a read-only file system
    con = sqlite3.connect(f"file:{db}?mode={mode}", uri=True)
    try:
        return dict(con.execute("select run_id, status from runs"))
    finally:
        con.close()


@contextlib.contextmanager
def tmpfs(size: str) -> Iterator[Path]:
    point = Path(tempfile.mkdtemp(prefix="assay-fs-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)], capture_output=True
    )
    if mounted.returncode != 0:
        point.rmdir()
        raise OSError("cannot mount a tmpfs here")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], capture_output=True)
        point.rmdir()


def write_suite(tmp_path: Path) -> Path:
    """A folder holding ``suite/suite.yaml`` (the toy suite); the folder is returned."""
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "suite.yaml").write_text(SUITE)
    return tmp_path
