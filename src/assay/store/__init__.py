"""The results store (SQLAlchemy Core; SQLite by default)."""

from .store import DEFAULT_STORE, Store, now_iso, resolve_url

__all__ = ["DEFAULT_STORE", "Store", "now_iso", "resolve_url"]
