"""Stable content hashes: canonical JSON (sorted keys, no whitespace) through SHA-256."""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from typing import Any


def _default(obj: Any) -> Any:
    if isinstance(obj, (datetime, date)):
        return obj.isoformat()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        return dump(mode="json")
    raise TypeError(f"cannot hash object of type {type(obj).__name__}")


def canonical_json(obj: Any) -> str:
    """Serialise ``obj`` deterministically: sorted keys, compact separators, UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_default)


def stable_hash(obj: Any, length: int = 16) -> str:
    """Hex SHA-256 of ``canonical_json(obj)``, truncated to ``length`` characters."""
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:length]


def derive_seed(*parts: object) -> int:
    """A 63-bit seed derived from ``parts`` (e.g. run seed, task id, trial index).

    Independent of Python's hash randomisation, so the same parts give the same seed
    in every process and on every machine.
    """
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1
