"""Store faults, through the command line as a user meets them: a read-only, corrupt,
truncated, full, locked or unreachable store, and two processes starting the same run
id. Every case ends in one clear line and a documented exit code (4: the store cannot
be used; 2: the command is wrong), never a traceback, and no run is left ``running``.

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
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.server.support import AGENT, SUITE
from tests.support.cli import CliResult, assay_main
from tests.support.runs import bare_run

from assay.core.results import TaskMeta
from assay.store import reserve
from assay.store.store import Store

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


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "suite.yaml").write_text(SUITE)
    return tmp_path


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


def test_unreachable_server_is_one_line(suite: Path) -> None:
    pytest.importorskip("psycopg")
    with socket_free_port() as port:
        url = f"postgresql+psycopg://assay@127.0.0.1:{port}/nothing"
        for command in (["runs"], ["show", "x"]):
            clean_failure(cli(suite, *command, "--store", url), 4, "cannot open or reach store")
        clean_failure(run_suite(suite, url, "-k", "1"), 4, "cannot open or reach store")


@contextlib.contextmanager
def socket_free_port() -> Iterator[int]:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    yield port  # nothing listens there


def test_two_processes_starting_the_same_run_id(suite: Path, tmp_path: Path) -> None:
    db = tmp_path / "race.db"
    argv = [sys.executable, "-m", "assay", "run", str(suite / "suite"), "--agent", AGENT, "--store", str(db)]
    procs = [
        subprocess.Popen(
            [*argv, "--run-id", "same", "-k", "2"],
            cwd=suite,
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    results = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
    assert sorted(code for code, _ in results).count(0) == 1, results
    for code, err in results:
        assert "Traceback" not in err
        if code:
            assert code == 2 and "already exists" in err and err.strip().count("\n") <= 1, err
    assert statuses(db) == {"same": "finished"}


def test_a_host_that_does_not_resolve_is_unreachable() -> None:
    """psycopg says so without a SQLSTATE (found by the docs test of a shared store)."""
    from assay.store.faults import fault

    class OperationalError(Exception):
        sqlstate = None

    error = OperationalError("failed to resolve host 'db.internal': [Errno -2] Name or service not known")
    found = fault(error, "postgresql+psycopg://assay@db.internal:5432/assay")
    assert found is not None and found.exit_code == 4
    assert str(found).startswith(
        "cannot open or reach store postgresql+psycopg://assay@db.internal:5432/assay"
    )


def test_opening_a_store_never_opens_its_file_outside_sqlite(tmp_path: Path, monkeypatch) -> None:
    """Closing any descriptor of a database file drops every POSIX lock this process
    holds on it, those of its open SQLite connections included; another process closing
    last then deletes the write-ahead log under them, and the next open here reads
    "database disk image is malformed" (tests/faults/test_sigterm.py met it: a poll that
    opened the store while it was written). So opening a store checks its file through
    SQLite only."""
    import builtins
    import io

    from assay.store import Store

    db = tmp_path / "s.db"
    first = Store(db)
    first.list_runs()
    opened: list[str] = []
    real_open, real_io_open = builtins.open, io.open

    def watch(opener):  # type: ignore[no-untyped-def]
        def wrapped(file, *args, **kwargs):  # type: ignore[no-untyped-def]
            if str(file).startswith(str(db)):
                opened.append(str(file))
            return opener(file, *args, **kwargs)

        return wrapped

    monkeypatch.setattr(builtins, "open", watch(real_open))
    monkeypatch.setattr(io, "open", watch(real_io_open))
    second = Store(db)
    second.check_writable()
    assert second.list_runs() == [] and opened == []
    first.close()
    second.close()


def test_opening_a_new_store_that_another_process_is_setting_up_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Processes that open one new SQLite file at once: while the file is still in
    rollback-journal mode SQLite may refuse one of them at once, without its busy wait (seen
    as exit 4 "locked" in the several-processes test). Opening tries again until the
    busy timeout. Here the refusal comes from a zero busy wait and a real exclusive lock
    held for 0.3 s by another connection."""
    import threading

    from assay.store import Store
    from assay.store.faults import StoreFault

    db = tmp_path / "new.db"
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setenv("ASSAY_STORE_TIMEOUT", "0")
    release = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        started = time.monotonic()
        store = Store(db)  # refused at first, then opened once the lock is gone
        assert 0.25 <= time.monotonic() - started < 5
        assert store.list_runs() == []
    finally:
        release.join()
    holder.close()
    other = sqlite3.connect(tmp_path / "other.db", isolation_level=None)
    other.execute("PRAGMA journal_mode=DELETE")
    other.execute("BEGIN EXCLUSIVE")  # held past the (1 s minimum) deadline: the one-line fault
    try:
        started = time.monotonic()
        with pytest.raises(StoreFault, match="is locked by another process"):
            Store(tmp_path / "other.db")
        assert time.monotonic() - started >= 1.0
    finally:
        other.execute("COMMIT")
        other.close()


def test_a_store_growing_while_it_is_checked_is_not_called_truncated(tmp_path: Path, monkeypatch) -> None:
    """Found by CI (three processes creating one new store): the size was read before the
    page count, while another process was still writing pages into the write-ahead log
    and then checkpointing them into the file. Now the size is read after the count."""
    from assay.store import faults

    db = tmp_path / "growing.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (x BLOB)")
    conn.executemany("INSERT INTO t VALUES (?)", [(b"\0" * 4000,) for _ in range(40)])
    conn.commit()
    conn.close()
    full = db.stat().st_size
    assert full >= 40 * 4096
    real_stat, calls = Path.stat, []

    def stat(self: Path, *args, **kwargs):  # the first look at the file sees it as it began
        result = real_stat(self, *args, **kwargs)
        if self == db:
            calls.append(1)
            if len(calls) == 1:
                return os.stat_result((*result[:6], 4096, *result[7:]))
        return result

    monkeypatch.setattr(Path, "stat", stat)
    assert faults.header_problem(db) is None
    assert len(calls) >= 2
    monkeypatch.setattr(Path, "stat", real_stat)
    with db.open("r+b") as f:  # a file really cut short is still a problem
        f.truncate(4096 * 2)
    assert faults.header_problem(db) is not None


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
