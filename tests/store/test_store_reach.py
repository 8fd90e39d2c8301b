"""Opening and reaching a store, through the command line and the API: a server that
does not answer or a host that does not resolve (one line, exit 4), processes racing
for one run id (one wins, the others are told), and the SQLite file's first moments
(opened by SQLite only, waited for while another process sets it up, never called
truncated while it grows)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.server.support import AGENT
from tests.store.faults import _env, clean_failure, cli, run_suite, statuses, write_suite


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path)


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
    conn.execute("CREATE TABLE assay_meta (key TEXT, value TEXT)")  # an assay store's, not another's
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
