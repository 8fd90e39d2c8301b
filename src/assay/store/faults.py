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
import sqlite3
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import Engine, event, make_url

from ..errors import StoreError

#: Files up to this size get ``PRAGMA quick_check`` before a run writes to them (larger
#: ones only the header check: a full check of a store of millions of trials takes minutes).
QUICK_CHECK_MAX_BYTES = 256 * 1024 * 1024


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
    corrupt = ("malformed", "not a database", "database corrupt", "could not decode to utf-8")
    if state == "XX001" or any(words in low for words in corrupt):  # utf-8: text another program wrote
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


#: The URL each engine's faults name (see :func:`install`).
_URLS: weakref.WeakKeyDictionary[Engine, str] = weakref.WeakKeyDictionary()


def install(engine: Engine, url: str) -> None:
    """Raise :class:`StoreFault` in place of the database errors that mean one."""
    _URLS[engine] = url

    def handle(context: Any) -> Any:
        original = context.original_exception
        found = fault(original, url) if original is not None else None
        if found is not None:
            return found
        return None

    event.listen(engine, "handle_error", handle)


@contextmanager
def raw_reads(engine: Engine) -> Iterator[None]:
    """Around rows fetched from a raw DBAPI cursor (which SQLAlchemy's error handling
    does not see): the database errors that mean a store fault raised as one."""
    try:
        yield
    except Exception as exc:
        dbapi = engine.dialect.loaded_dbapi
        found = fault(exc, _URLS.get(engine, str(engine.url))) if isinstance(exc, dbapi.Error) else None
        if found is not None:
            raise found from None
        raise


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None: another database, or in memory)."""
    if not url.startswith("sqlite:///") or url == "sqlite://":
        return None
    return Path(make_url(url).database or "")  # as SQLAlchemy reads it: %20 is a space


def header_problem(path: Path, timeout: float = 30.0, read_only: bool = False) -> str | None:
    """Why ``path`` is not a sound SQLite file (None: it looks sound, or it is new and
    empty): SQLite must recognise it, and its file must be as long as its pages.

    The file is read through SQLite, never opened directly: closing a descriptor of a
    database file drops every POSIX lock this process holds on it, including those of
    its open connections (SQLite's "How To Corrupt" 2.2), after which another process
    may delete the write-ahead log under them. SQLite closes its own descriptors safely.
    """
    if path.is_dir():
        return "it is a folder, not a database file"
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    if size == 0:
        return None
    if size < 100:
        return "the file does not start with the SQLite header: it is not a database, or was overwritten"
    mode = "rw"
    if read_only:
        mode = "ro" if os.access(path.parent, os.W_OK) else "ro&immutable=1"
    try:
        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode={mode}", uri=True, timeout=timeout)
        try:
            page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
            pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
            foreign = _foreign_tables(conn)
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        text = str(exc)
        if "not a database" in text:
            return "the file does not start with the SQLite header: it is not a database, or was overwritten"
        if "locked" in text or "busy" in text:
            return None  # another process is writing: the engine's own errors say more
        return f"SQLite cannot read it ({text})"
    if foreign:  # never add assay's tables to another application's database
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        return f"it holds another application's tables ({', '.join(foreign[:3])}{more})"
    # In this order, after the page count: another process may be creating the store, its
    # pages in the write-ahead log and then checkpointed into the file; a size read before
    # the count would be older than the count and call a growing file truncated.
    wal = path.with_name(path.name + "-wal")
    pending = wal.exists() and wal.stat().st_size > 0  # pages may still be in the write-ahead log
    size = path.stat().st_size
    if not pending and size < pages * page_size:
        return f"the file is truncated: {size} bytes where it holds {pages} pages of {page_size}"
    return None


def _foreign_tables(conn: sqlite3.Connection) -> list[str]:
    """The tables that make a SQLite file another application's database: none when it
    has no tables (a new store), records an assay schema version (``assay_meta``), or
    has the runs and trials of a store of schema 1 (which recorded none)."""
    tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    tables = {t for t in tables if not t.startswith("sqlite_")}
    if not tables or "assay_meta" in tables:
        return []

    def columns(table: str) -> set[str]:
        return {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")}

    schema_1 = (
        {"runs", "trials"} <= tables
        and {"run_id", "status"} <= columns("runs")
        and {"run_id", "task_id", "trial_index"} <= columns("trials")
    )
    return [] if schema_1 else sorted(tables)


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
