"""Output files never cost the user a file: an output option naming the store (or one of
its SQLite files) is refused before anything is written, and an output that fails midway
(a full disk) leaves the earlier file as it was, with no temporary file behind.

The commands run in process (tests/support/cli.py). A full disk is simulated by wrapping
every file this process opens for writing in the output folder (``io.open`` and
``builtins.open``: what ``Path.write_text``, ``open``, ``gzip.open`` and ``os.fdopen``
call) in one whose writes stop with ENOSPC after a few hundred bytes.
"""

from __future__ import annotations

import builtins
import errno
import gzip
import hashlib
import io
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import CliResult, assay_main

import assay
from assay.core.outputs import atomic_output, refuse_store_path
from assay.errors import AssayError
from assay.store import Store
from assay.store.badcases import list_badcases

ROOT = Path(__file__).parents[2]
POLICY = str(ROOT / "examples" / "gate.yaml")
TASKS = ["refund-in-window-email", "cancel-pending", "injection-old-order", "address-change"]

# name -> (the option that names the output, the command with that option given OUT)
COMMANDS: dict[str, tuple[str, Callable[[str], list[str]]]] = {
    "export": ("-o", lambda out: ["export", "r1", "-o", out]),
    "export-gz": ("-o", lambda out: ["export", "r1", "-o", out]),
    "report": ("--html", lambda out: ["report", "r1", "--html", out]),
    "gate-markdown": ("--markdown", lambda out: ["gate", "r1", "--policy", POLICY, "--markdown", out]),
    "gate-junit": ("--junit", lambda out: ["gate", "r1", "--policy", POLICY, "--junit", out]),
    "compare-markdown": ("--markdown", lambda out: ["compare", "r1", "r2", "--markdown", out]),
    "export-traces": ("-o", lambda out: ["export-traces", "r1", "--format", "otlp-json", "-o", out]),
    "badcase-export": ("-o", lambda out: ["badcase", "export", "-o", out]),
}
OUTPUT_NAMES = {
    "export": "run.jsonl",
    "export-gz": "run.jsonl.gz",
    "report": "report.html",
    "gate-markdown": "gate.md",
    "gate-junit": "junit.xml",
    "compare-markdown": "compare.md",
    "export-traces": "run.otlp.jsonl",
    "badcase-export": "badcases.jsonl",
}
REFUSED = [name for name in COMMANDS if name != "export-gz"]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with two small retail runs (r1 careful, r2 hasty), its log checkpointed."""
    path = tmp_path_factory.mktemp("outputs") / "made.db"
    store = Store(path)
    assay.run("retail", agent="builtin:retail-careful", trials=1, task_ids=TASKS, store=store, run_id="r1")
    assay.run("retail", agent="builtin:retail-hasty", trials=1, task_ids=TASKS, store=store, run_id="r2")
    store.close()
    proposed = assay_main("badcase", "from-run", "r2", "--store", str(path))  # r2's failures, to export
    assert proposed.code == 0, proposed.stderr
    store = Store(path)
    assert list_badcases(store)
    store.close()  # the copies take the file alone
    return path


@pytest.fixture
def db(made: Path, tmp_path: Path) -> Path:
    """This test's own copy of the store, alone in its folder."""
    folder = tmp_path / "store"
    folder.mkdir()
    return Path(shutil.copy(made, folder / "s.db"))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_ids(db: Path) -> set[str]:
    return {row["run_id"] for row in Store(db).list_runs()}


def one_line_error(result: CliResult) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), result.stderr
    return lines[0]


# -- an output that is the store ---------------------------------------------------------


@pytest.mark.parametrize("form", ["absolute", "relative", "symlink", "-wal", "-shm", "-journal"])
@pytest.mark.parametrize("name", REFUSED)
def test_an_output_naming_the_store_is_refused_and_the_store_kept(
    name: str, form: str, db: Path, tmp_path: Path
) -> None:
    option, command = COMMANDS[name]
    before = digest(db)
    cwd = None
    store_arg = str(db)
    if form == "absolute":
        output = str(db)
    elif form == "relative":  # the store given absolute, the output relative to the working folder
        output, cwd = db.name, db.parent
    elif form == "symlink":
        link = tmp_path / "elsewhere" / "link.db"
        link.parent.mkdir()
        link.symlink_to(db)
        output = str(link)
        store_arg = os.path.relpath(db)  # and the store relative
    else:
        output = str(db) + form
    result = assay_main(*command(output), "--store", store_arg, cwd=cwd)
    assert result.code == 2, result.stderr
    line = one_line_error(result)
    assert line.startswith(f"error: {option} {output} is the "), line
    assert "write the output elsewhere" in line
    assert digest(db) == before
    assert run_ids(db) == {"r1", "r2"}


def test_a_hard_link_to_the_store_is_refused(db: Path, tmp_path: Path) -> None:
    link = tmp_path / "hard.db"
    os.link(db, link)
    result = assay_main("export", "r1", "-o", str(link), "--store", str(db))
    assert result.code == 2
    assert one_line_error(result).startswith(f"error: -o {link} is the store the run is read from ({db})")
    assert run_ids(db) == {"r1", "r2"}


# -- a write that fails midway -----------------------------------------------------------


class _FullDisk:
    """A file whose writes stop with ENOSPC once ``budget`` characters (or bytes) are
    written: the part that fits is written, as a full disk does."""

    def __init__(self, inner: Any, budget: int, hits: list[str]):
        self._inner, self._budget, self._hits = inner, budget, hits

    def write(self, data: Any) -> int:
        if len(data) > self._budget:
            self._inner.write(data[: self._budget])
            self._inner.flush()
            self._budget = 0
            self._hits.append(getattr(self._inner, "name", "?"))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._budget -= len(data)
        return int(self._inner.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.close()


def full_disk_in(folder: Path, monkeypatch: pytest.MonkeyPatch, budget: int = 300) -> list[str]:
    """Files opened for writing in ``folder`` (by name or by descriptor) from now on fill
    the disk after ``budget`` units; returns the list of files that hit it."""
    real_open = io.open
    hits: list[str] = []

    def in_folder(file: Any) -> bool:
        if isinstance(file, int):
            found = os.fstat(file)
            return any(
                (s.st_dev, s.st_ino) == (found.st_dev, found.st_ino)
                for s in (p.stat() for p in folder.iterdir())
            )
        return Path(os.fspath(file)).resolve().parent == folder.resolve()

    def opening(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = real_open(file, mode, *args, **kwargs)
        if any(c in mode for c in "wax+") and in_folder(file):
            return _FullDisk(handle, budget, hits)
        return handle

    monkeypatch.setattr(io, "open", opening)
    monkeypatch.setattr(builtins, "open", opening)
    return hits


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_full_disk_midway_keeps_the_earlier_output(
    name: str, db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _option, command = COMMANDS[name]
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / OUTPUT_NAMES[name]
    earlier = b"the earlier output, kept until a new one is whole\n" * 40
    target.write_bytes(earlier)
    hits = full_disk_in(folder, monkeypatch)
    result = assay_main(*command(str(target)), "--store", str(db))
    monkeypatch.undo()
    assert hits, "the write never reached the full disk"
    assert result.code == 2, result.stderr
    line = one_line_error(result)
    assert str(target) in line and "No space left on device" in line, line
    assert target.read_bytes() == earlier
    assert sorted(p.name for p in folder.iterdir()) == [target.name]  # no temporary file behind
    assert run_ids(db) == {"r1", "r2"}
    # with room on the disk, the same command replaces the earlier file whole
    again = assay_main(*command(str(target)), "--store", str(db))
    assert again.code in (0, 1), again.stderr  # gate: 1 when the run fails the policy
    assert target.read_bytes() != earlier
    assert sorted(p.name for p in folder.iterdir()) == [target.name]
    if name == "export-gz":  # still a gzip file, naming the record inside it as gzip.open does
        with gzip.open(target, "rt", encoding="utf-8") as fh:
            assert '"kind":"end"' in fh.read().splitlines()[-1]
        assert target.read_bytes()[10:20] == b"run.jsonl\x00"


INTERRUPTED = """
import sys
from assay.traces import export

add, calls = export.TraceExporter.add, []


def interrupted(self, *args, **kwargs):
    calls.append(1)
    if len(calls) > 3:
        raise KeyboardInterrupt  # Ctrl-C midway
    return add(self, *args, **kwargs)


export.TraceExporter.add = interrupted
target, store = sys.argv[1:]
sys.argv = ["assay", "export-traces", "r1", "--format", "otlp-json", "-o", target, "--store", store]
from assay.cli import main

main()
"""


def test_export_traces_stopped_midway_keeps_the_earlier_file(db: Path, tmp_path: Path) -> None:
    """The process ends before the export finished (the SDK shuts its exporters down at
    exit): the earlier file stays, no temporary file is left."""
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "run.otlp.jsonl"
    target.write_text("earlier\n")
    proc = subprocess.run(
        [sys.executable, "-c", INTERRUPTED, str(target), str(db)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 130, proc.stderr
    assert target.read_text() == "earlier\n"
    assert [p.name for p in folder.iterdir()] == [target.name]


def test_run_until_decided_markdown_naming_the_store_is_refused_before_any_trial(db: Path) -> None:
    before = digest(db)
    result = assay_main(
        "run", "--until-decided", "--agent", "builtin:retail-hasty", "--against", "r1",
        "--markdown", str(db), "--store", str(db),
    )  # fmt: skip
    assert result.code == 2, result.stderr
    assert one_line_error(result).startswith(f"error: --markdown {db} is the store the run is read from")
    assert digest(db) == before and run_ids(db) == {"r1", "r2"}


def test_redact_output_full_disk_midway_keeps_the_earlier_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "transcript.txt"
    source.write_text("write to lena@example.com about order #W1234567\n" * 50)
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "redacted.txt"
    target.write_text("earlier\n")
    hits = full_disk_in(folder, monkeypatch)
    result = assay_main("redact", str(source), "-o", str(target))
    monkeypatch.undo()
    assert hits and result.code == 2, result.stderr
    assert "No space left on device" in one_line_error(result)
    assert target.read_text() == "earlier\n" and [p.name for p in folder.iterdir()] == [target.name]
    again = assay_main("redact", str(source), "-o", str(target))
    assert again.code == 0, again.stderr
    assert "lena@example.com" not in target.read_text() and "<EMAIL_1>" in target.read_text()


# -- export-traces: an output that cannot be a file ----------------------------------------


@pytest.mark.parametrize("where", ["directory", "missing folder"])
def test_export_traces_to_a_folder_or_a_missing_folder_is_one_line(
    where: str, db: Path, tmp_path: Path
) -> None:
    output = tmp_path if where == "directory" else tmp_path / "nowhere" / "run.otlp.jsonl"
    result = assay_main("export-traces", "r1", "--format", "otlp-json", "-o", str(output), "--store", str(db))
    assert result.code == 2, result.stderr
    line = one_line_error(result)
    expected = "is a directory" if where == "directory" else "does not exist"
    assert str(output) in line and expected in line, line
    assert not (tmp_path / "nowhere").exists()


# -- the helpers ----------------------------------------------------------------------------


def test_atomic_output_through_a_link_replaces_the_file_linked_to(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "link.md"
    link.symlink_to(real)
    with atomic_output(link) as fh:
        fh.write("new ✓\n")
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "new ✓\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o600  # as writing over it kept them
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.md", "real.md"]


def test_atomic_output_keeps_the_earlier_file_when_the_block_fails(tmp_path: Path) -> None:
    target = tmp_path / "out.bin"
    target.write_bytes(b"earlier")
    with pytest.raises(RuntimeError), atomic_output(target, "wb") as fh:
        fh.write(b"partial")
        raise RuntimeError("stopped")
    assert target.read_bytes() == b"earlier"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_atomic_output_new_file_mode_follows_the_umask(tmp_path: Path) -> None:
    mask = os.umask(0o027)
    try:
        with atomic_output(tmp_path / "new.txt") as fh:
            fh.write("x")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


def test_atomic_output_writes_a_device_directly() -> None:
    with atomic_output(os.devnull) as fh:  # not replaced by a regular file
        fh.write("gone")
    assert not stat.S_ISREG(os.stat(os.devnull).st_mode)


def test_atomic_output_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError), atomic_output(tmp_path):
        pass
    assert list(tmp_path.iterdir()) == []


def test_refuse_store_path_names_the_option(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    store.write_bytes(b"")
    refuse_store_path(tmp_path / "other.db", store, "-o")
    refuse_store_path(store, None, "-o")  # an in-memory store, another database
    refuse_store_path(None, store, "-o")
    with pytest.raises(AssayError, match=r"^--html .*s\.db-journal is the journal file of the store"):
        refuse_store_path(Path(str(store) + "-journal"), store, "--html")
