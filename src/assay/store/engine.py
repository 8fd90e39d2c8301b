"""The store's database: which URL a store argument means, the URL as shown (its
password masked), and the SQLite connection settings (busy timeout, pragmas)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import make_url

from ..errors import SpecError
from .faults import StoreFault

DEFAULT_STORE = ".assay/assay.db"


def resolve_url(store: str | os.PathLike[str] | None = None) -> str:
    """``store`` (a path, a SQLAlchemy URL, ``:memory:``), else ``$ASSAY_STORE``, else
    ``.assay/assay.db`` in the working directory."""
    value = str(store) if store is not None else os.environ.get("ASSAY_STORE") or DEFAULT_STORE
    if value == ":memory:":
        return "sqlite://"
    if value.startswith("sqlite:") and value != "sqlite://":
        return _sqlite_url(value)
    if "://" in value:
        return value
    path = Path(value).expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreFault(f"cannot create the folder of store {path}: {exc.strerror or exc}") from None
    return f"sqlite:///{path}"


def _sqlite_url(url: str) -> str:
    """A ``sqlite:`` URL that names a file (``sqlite:///:memory:``: in memory), else a
    :class:`SpecError`: SQLite would open an empty name in memory, and the file named
    must be one the operating system can open."""
    try:
        database = make_url(url).database
    except Exception as exc:
        raise SpecError(f"store {url!r} is not a usable database URL ({exc})") from None
    if database == ":memory:":
        return "sqlite://"
    if not database:
        raise SpecError(f"store {url!r} names no database file: give sqlite:///PATH, a path, or :memory:")
    if "\x00" in database:
        raise SpecError(f"store {url!r}: its file name holds a NUL character (%00)")
    return url


def _shown(url: str) -> str:
    """``url`` with its password masked (``postgresql://me:***@db/assay``)."""
    if "://" not in url or "@" not in url:
        return url
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return url.split("://", 1)[0] + "://***"


def _busy_timeout() -> float:
    """Seconds a write waits for another process's lock ($ASSAY_STORE_TIMEOUT, default 30)."""
    try:
        return max(0.0, float(os.environ.get("ASSAY_STORE_TIMEOUT", "30")))
    except ValueError:
        raise SpecError(
            f"$ASSAY_STORE_TIMEOUT must be a number of seconds, not {os.environ['ASSAY_STORE_TIMEOUT']!r}"
        ) from None


def _sqlite_pragmas(timeout_ms: int, writable: bool) -> Any:
    def apply(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        if writable:
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute(f"PRAGMA busy_timeout={timeout_ms}")
        cur.close()

    return apply
