"""Store faults: a store that is read-only, corrupt, full, locked or unreachable gives
one clear sentence (:class:`StoreFault`, exit code 4), never a traceback.

Database errors are classified where they happen (an engine ``handle_error`` hook), for
SQLite and PostgreSQL alike. SQLite files also get a cheap check when opened (the file
header and its recorded size) and, before a run writes to a file of at most
:data:`QUICK_CHECK_MAX_BYTES`, ``PRAGMA quick_check``: a corrupt store is refused before
anything is written to it.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event

from ..errors import StoreError

#: Files up to this size get ``PRAGMA quick_check`` before a run writes to them (larger
#: ones only the header check: a full check of a store of millions of trials takes minutes).
QUICK_CHECK_MAX_BYTES = 256 * 1024 * 1024
SQLITE_HEADER = b"SQLite format 3\x00"


class StoreFault(StoreError):
    """The store cannot be used as it is (read-only, corrupt, full, locked, unreachable):
    not the agent's doing and not a mistake in the command (exit code 4)."""

    exit_code = 4


def _what(exc: BaseException) -> tuple[str, str]:
    """(kind, the database's own words) of a DBAPI error, kind "" when not a fault."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    low = text.lower()
    state = str(getattr(exc, "sqlstate", "") or "")
    if state == "25006" or "readonly" in low or "read-only" in low:
        return "read_only", text
    if (
        state in ("53100", "53200")
        or "disk is full" in low
        or "no space left" in low
        or "could not extend" in low
    ):
        return "full", text
    if state == "XX001" or "malformed" in low or "not a database" in low or "database corrupt" in low:
        return "corrupt", text
    if state == "55P03" or "database is locked" in low or "lock timeout" in low or "table is locked" in low:
        return "locked", text
    if "disk i/o error" in low:
        return "io", text
    unreachable = (
        "unable to open database",
        "connection",
        "resolve host",
        "name or service",
        "timeout expired",
    )
    if state.startswith(("08", "28", "3D")) or any(words in low for words in unreachable):
        return "unreachable", text
    return "", text


def fault(exc: BaseException, url: str) -> StoreFault | None:
    """The :class:`StoreFault` a database error means, or None (not a store fault: a
    constraint violation, a bug...)."""
    kind, text = _what(exc)
    where = f"store {url}"
    if kind == "read_only":
        return StoreFault(
            f"{where} is read-only ({text}): point --store (or $ASSAY_STORE) at a writable location, "
            "or make the file and its folder writable; reading commands (runs, show, report) work as they are"
        )
    if kind == "full":
        return StoreFault(
            f"{where}: the disk is full ({text}); free space or move the store, then resume the run "
            "with assay run --resume RUN_ID"
        )
    if kind == "corrupt":
        return StoreFault(
            f"{where} is corrupt ({text}); restore it from a copy, or use another --store "
            "(assay export RUN saves a run that can still be read)"
        )
    if kind == "locked":
        return StoreFault(
            f"{where} is locked by another process ({text}) for longer than the store's busy timeout "
            "($ASSAY_STORE_TIMEOUT seconds, default 30); wait for it or use another --store"
        )
    if kind == "io":
        return StoreFault(
            f"{where}: the disk failed a read or write ({text}): a full disk, a file-size limit or a "
            "removed device; fix it, then resume the run with assay run --resume RUN_ID"
        )
    if kind == "unreachable":
        return StoreFault(
            f"cannot open or reach {where} ({text}); check the path or URL, the server and access"
        )
    return None


def install(engine: Engine, url: str) -> None:
    """Raise :class:`StoreFault` in place of the database errors that mean one."""

    def handle(context: Any) -> Any:
        original = context.original_exception
        found = fault(original, url) if original is not None else None
        if found is not None:
            return found
        return None

    event.listen(engine, "handle_error", handle)


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None: another database, or in memory)."""
    if not url.startswith("sqlite:///") or url == "sqlite://":
        return None
    return Path(url.removeprefix("sqlite:///").split("?", 1)[0])


def header_problem(path: Path) -> str | None:
    """Why ``path`` is not a sound SQLite file, from its first 100 bytes and its size
    (None: it looks sound, or it is new and empty)."""
    try:
        size = path.stat().st_size
        if size == 0:
            return None
        with path.open("rb") as fh:
            head = fh.read(100)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    if len(head) < 100 or not head.startswith(SQLITE_HEADER):
        return "the file does not start with the SQLite header: it is not a database, or was overwritten"
    page_size = struct.unpack(">H", head[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        return f"its header records an impossible page size ({page_size})"
    pages, change, valid_for = (struct.unpack(">I", head[i : i + 4])[0] for i in (28, 24, 92))
    wal = path.with_name(path.name + "-wal")
    pending = wal.exists() and wal.stat().st_size > 0  # pages may still be in the write-ahead log
    if pages and change == valid_for and size < pages * page_size and not pending:
        return f"the file is truncated: {size} bytes where its header records {pages * page_size}"
    return None


def read_only_reason(path: Path) -> str | None:
    """Why an existing SQLite file can only be read here (None: it can be written)."""
    if not path.exists():
        return None
    folder = path.parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "its file system is mounted read-only"
    except OSError:
        pass
    if not os.access(path, os.W_OK):
        return "the file is not writable by this user"
    if not os.access(folder, os.W_OK):
        return "its folder is not writable by this user (SQLite needs it for its journal)"
    return None
