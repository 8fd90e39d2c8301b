"""On-disk response cache (one SQLite file) keyed by the full request."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path

from .types import Completion

DEFAULT_CACHE_PATH = Path(".assay/cache/llm.sqlite")
CACHE_DIR_ENV = "ASSAY_CACHE_DIR"


def default_cache_path() -> Path:
    """``$ASSAY_CACHE_DIR/llm.sqlite`` when set, else ``.assay/cache/llm.sqlite``."""
    folder = os.environ.get(CACHE_DIR_ENV)
    return Path(folder) / "llm.sqlite" if folder else DEFAULT_CACHE_PATH


_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created_at REAL NOT NULL,
    completion TEXT NOT NULL
)
"""


class ResponseCache:
    """Completions by cache key (model, endpoint, messages, tools, sampling incl. seed).

    Safe for several threads and processes (SQLite WAL, one short transaction per call).
    Only successful completions are stored; malformed tool calls are model output and are
    cached like any other answer."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_cache_path()
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
            conn.commit()
            self._conn = conn
        return self._conn

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db().execute("SELECT completion FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else Completion.from_dict(json.loads(row[0]))

    def put(self, key: str, completion: Completion) -> None:
        payload = json.dumps(completion.to_dict(), ensure_ascii=False)  # keep key order: replays are exact
        with self._lock:
            db = self._db()
            db.execute(
                "INSERT OR REPLACE INTO responses (key, model, created_at, completion) VALUES (?, ?, ?, ?)",
                (key, completion.model, time.time(), payload),
            )
            db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def clear(self) -> None:
        with self._lock:
            db = self._db()
            db.execute("DELETE FROM responses")
            db.commit()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


_open: dict[Path, ResponseCache] = {}
_open_lock = threading.Lock()


def open_cache(path: str | Path | None = None) -> ResponseCache:
    """The process-wide cache object for ``path`` (default :func:`default_cache_path`)."""
    resolved = Path(path or default_cache_path()).resolve()
    with _open_lock:
        cache = _open.get(resolved)
        if cache is None:
            cache = _open[resolved] = ResponseCache(resolved)
        return cache
