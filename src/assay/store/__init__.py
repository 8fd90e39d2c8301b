"""The results store (SQLAlchemy Core; SQLite by default)."""

from .engine import DEFAULT_STORE, resolve_url
from .store import Store, now_iso

__all__ = ["DEFAULT_STORE", "Store", "now_iso", "resolve_url"]
