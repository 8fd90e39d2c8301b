"""Stable content hashes: canonical JSON (sorted keys, no whitespace) through SHA-256."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
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


def stable_hashes(obj: dict[str, Any], key: str, length: int = 16) -> Callable[[str], str]:
    """``stable_hash`` of ``obj`` with ``key`` set to each string given: the rest of the
    canonical JSON is encoded once (the instances of a task differ only in their id)."""
    hole = "\x00assay-hole\x00"
    parts = canonical_json({**obj, key: hole}).split(canonical_json(hole))
    if len(parts) != 2:  # the marker also occurs elsewhere: encode each whole
        return lambda value: stable_hash({**obj, key: value}, length)
    head, tail = parts[0].encode(), parts[1].encode()
    sha256 = hashlib.sha256
    quoted = json.encoder.encode_basestring  # canonical_json of a string, without an encoder a call

    def one(value: str) -> str:
        return sha256(head + quoted(value).encode() + tail).hexdigest()[:length]

    return one


def derive_seed(*parts: object) -> int:
    """A 63-bit seed derived from ``parts`` (e.g. run seed, task id, trial index).

    Independent of Python's hash randomisation, so the same parts give the same seed
    in every process and on every machine.
    """
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1
