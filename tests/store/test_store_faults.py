"""Store faults, through the command line as a user meets them: a read-only, corrupt,
truncated, full or locked store, and a damaged transcript. Every case ends in one clear
line and a documented exit code (4: the store cannot be used; 2: the command is wrong),
never a traceback, and no run is left ``running``. (Opening and reaching a store, and
processes racing for a run id: test_store_reach.py.)

The read-only and full cases use a real file system: a small tmpfs (mounted read-only,
or filled up) when the tests may mount one (root in CI), else a folder without write
permission and a file-size limit (RLIMIT_FSIZE) on the process."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.server.support import SUITE
from tests.store.faults import (
    _env,
    clean_failure,
    cli,
    run_suite,
    run_suite_process,
    statuses,
    tmpfs,
    write_suite,
)
from tests.support.runs import bare_run

from assay.core.results import TaskMeta
from assay.store import reserve
from assay.store.store import Store


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path)


def test_read_only_store_reads_and_refuses_to_write(suite: Path, tmp_path: Path) -> None:
    db_dir = tmp_path / "ro"
    db_dir.mkdir()
    db = db_dir / "s.db"
    assert run_suite(suite, str(db), "--run-id", "r1", "-k", "1").returncode == 0
    with contextlib.ExitStack() as stack:
        if os.geteuid() == 0:  # root writes through permissions: make the file system read-only
            try:
                point = stack.enter_context(tmpfs("16m"))
            except OSError:
                pytest.skip("running as root without permission to mount a read-only file system")
            (point / "s.db").write_bytes(db.read_bytes())
            subprocess.run(["mount", "-o", "remount,ro", str(point)], check=True)
            db = point / "s.db"
        else:
            db.chmod(0o444)
            db_dir.chmod(0o555)
            stack.callback(db_dir.chmod, 0o755)
        listed = cli(suite, "runs", "--store", str(db))
        assert listed.returncode == 0 and "r1" in listed.stdout, listed.stderr
        shown = cli(suite, "show", "r1", "--store", str(db), "--json")
        assert shown.returncode == 0 and '"success_rate"' in shown.stdout, shown.stderr
        clean_failure(run_suite(suite, str(db), "--run-id", "r2", "-k", "1"), 4, "is read-only")
        resumed = cli(suite, "run", "--resume", "r1", "--store", str(db))  # finished: nothing to write
        assert resumed.returncode == 0 and "nothing to resume" in resumed.stderr, resumed.stderr
        assert statuses(db) == {"r1": "finished"}


@pytest.mark.parametrize("damage", ["garbage", "truncated", "overwritten page"])
def test_corrupt_store_is_refused_before_writing(suite: Path, tmp_path: Path, damage: str) -> None:
    db = tmp_path / "c.db"
    assert run_suite(suite, str(db), "--run-id", "r1", "-k", "2").returncode == 0
    data = bytearray(db.read_bytes())
    if damage == "garbage":
        data = bytearray(os.urandom(len(data)))
    elif damage == "truncated":
        data = data[: len(data) // 2]
    else:  # a page in the middle of the file, as a bad disk sector or a stray write leaves it
        page = int.from_bytes(data[16:18], "big")
        middle = (len(data) // page // 2) * page
        data[middle : middle + page] = b"\xff" * page
    db.write_bytes(bytes(data))
    before = db.read_bytes()
    result = run_suite(suite, str(db), "--run-id", "r2", "-k", "1")
    clean_failure(result, 4, "corrupt")
    assert db.read_bytes() == before  # detected before anything was written
    for command in (["runs"], ["show", "r1"]):
        seen = cli(suite, *command, "--store", str(db))
        assert "Traceback" not in seen.stderr, seen.stderr
        if seen.returncode == 4:  # the damage is where the reader looks: one line saying so
            assert "corrupt" in seen.err or "not a database" in seen.err, seen.stderr
        else:  # a damaged page the reader never touches (a transcript's): it reads what is whole
            assert damage != "garbage" and seen.returncode == 0 and "r1" in seen.stdout, seen


def _fsize_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, not kills
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_full_disk_stops_the_run_and_marks_it_interrupted(suite: Path, tmp_path: Path) -> None:
    (suite / "suite" / "suite.yaml").write_text(SUITE.replace("instances: 4", "instances: 400"))
    args = ("--run-id", "full", "-k", "3")
    with contextlib.ExitStack() as stack:
        try:
            point = stack.enter_context(tmpfs("1m"))
        except OSError:  # no mount: a file-size limit on a process of its own does the same to SQLite
            db = tmp_path / "s.db"
            result = run_suite_process(suite, str(db), *args, limit=_fsize_limit(1_000_000))
        else:
            db = point / "s.db"
            result = run_suite(suite, str(db), *args)
        assert "Traceback" not in result.stderr and result.returncode == 4, result.stderr
        assert "disk is full" in result.stderr or "disk failed" in result.stderr
        files = sorted(p.name for p in db.parent.iterdir())
        assert statuses(db)["full"] == "interrupted", (result.stderr, files)
        assert not [name for name in files if "-reserve-" in name], files  # the reserve was given back


def test_a_disk_full_to_the_byte_still_takes_the_runs_status() -> None:
    """The write-ahead log can end a committed batch with the disk full to the byte: the
    status update then needs room there is none of. The room a running run holds
    (store/reserve.py) is given back for it. Without it this update fails."""
    with tmpfs("2m") as point:
        db = point / "s.db"
        store = Store(db)
        info = bare_run("r", ["t"])
        store.create_run(info, [TaskMeta("t")])
        assert reserve.reserve_path(db, "r").stat().st_size == reserve.RESERVE_BYTES
        fill(point / "filler")
        store.set_status("r", "interrupted")
        assert statuses(db) == {"r": "interrupted"}
        assert not reserve.reserve_path(db, "r").exists()
        store.engine.dispose()


def fill(path: Path) -> None:
    """Write ``path`` until the file system has not one byte left."""
    with open(path, "wb", buffering=0) as f:
        for chunk in (1 << 20, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    f.write(b"x" * chunk)
    assert os.statvfs(path).f_bavail == 0


def test_locked_store_gives_one_line_after_the_busy_timeout(suite: Path, tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    assert run_suite(suite, str(db), "--run-id", "r1", "-k", "1").returncode == 0
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    try:
        started = time.monotonic()
        result = run_suite_process(  # the lock is another process's, as a user meets it
            suite, str(db), "--run-id", "r2", "-k", "1", env=_env(ASSAY_STORE_TIMEOUT="0.5")
        )
        clean_failure(result, 4, "locked by another process")
        assert time.monotonic() - started < 60
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert statuses(db).get("r2") in (None, "interrupted")


@pytest.mark.parametrize("packing", ["zstd", "zlib"])
def test_a_corrupt_transcript_is_one_line_and_exit_4(suite: Path, tmp_path: Path, packing: str) -> None:
    """A transcript whose bytes were damaged (a stray write inside a row, which SQLite's
    own checks cannot see) is a corrupt store: one sentence, exit code 4, no traceback;
    in either packing a store may hold (Zstandard, or zlib from before schema 4)."""
    import zlib

    from assay.store.codec import decompress

    db = tmp_path / "t.db"
    assert run_suite(suite, str(db), "--run-id", "r1", "-k", "1").returncode == 0
    with sqlite3.connect(db) as conn:
        task_id, index, data = conn.execute("SELECT task_id, trial_index, data FROM transcripts").fetchone()
        whole = data if packing == "zstd" else zlib.compress(decompress(data), 1)
        damaged = whole[:6] + bytes(b ^ 0xFF for b in whole[6:])
        conn.execute(
            "UPDATE transcripts SET data = ? WHERE task_id = ? AND trial_index = ?", (damaged, task_id, index)
        )
    seen = cli(suite, "show", "r1", "--task", task_id, "--store", str(db))
    clean_failure(seen, 4, "a stored transcript or retried attempt is corrupt")


def test_text_another_program_wrote_as_not_utf8_is_a_corrupt_store(suite: Path, tmp_path: Path) -> None:
    """A text value that is not UTF-8 (written by another program: Python's sqlite3 cannot
    read it back) is a corrupt store: one sentence naming the column, exit code 4."""
    db = tmp_path / "t.db"
    assert run_suite(suite, str(db), "--run-id", "r1", "-k", "1").returncode == 0
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE trials SET error_category = CAST(x'68ff' AS TEXT)")
        conn.execute("UPDATE grades SET reason = CAST(x'61ff' AS TEXT)")
        conn.execute("UPDATE runs SET agent = CAST(x'61ff' AS TEXT)")
    out = str(tmp_path / "r1.jsonl")
    for args in (("runs",), ("show", "r1"), ("compare", "r1", "r1"), ("export", "r1", "-o", out)):
        seen = cli(suite, *args, "--store", str(db))
        clean_failure(seen, 4, "is corrupt (Could not decode to UTF-8 column")
