"""The :class:`Redactor`: sensitive values in text and JSON-like data replaced by
pseudonyms that stay consistent within one record.

``Redactor().redact(record)`` returns a :class:`Redaction`: the redacted copy and how
many values of each kind were replaced (never the values). Within one call, or one
:meth:`Redactor.session` shared by several calls, the same value always gets the same
pseudonym (``<EMAIL_1>`` stays ``<EMAIL_1>``) and different values different ones.

In mappings, keys are kept (unless ``redact_keys``) but read: the value of a
secret-bearing key (``api_key``, ``password``, ``authorization``...) is replaced whole,
and so is the value of a personal-data key (``email``, ``phone``, ``first_name``...,
see ``key_kinds``); such values are then also replaced wherever they recur in the record.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, is_dataclass
from typing import Any, Generic, TypeVar

from ..core.secrets import is_secret_option, normalize_name
from .config import RedactConfig, parse_config, resolve_check
from .credentials import builtin_detectors, is_placeholder
from .detectors import SPECIFIC, Category, Detector, DetectorSet, Finding, resolve
from .detectsecrets import detect_secrets_detectors
from .kinds import known_kinds
from .personal import personal_detectors
from .scrub import secret_spans, usable_secrets

T = TypeVar("T")

#: Integers with at least this many digits are checked (a card or phone stored as a number).
_MIN_INT_DIGITS = 7
#: Shortest value found under a key that is also replaced where it recurs in the record.
_MIN_LITERAL = 3
#: Texts up to this length have their scan results cached (transcripts repeat a lot).
_CACHE_TEXT = 2048
_CACHE_SIZE = 20_000
_KNOWN_SECRET = SPECIFIC + 20
#: JSON text inside a string is read for its keys up to this size.
_MAX_JSON_TEXT = 1_000_000
#: ``"key": "string value"`` in JSON text.
_JSON_PAIR = re.compile(r'"((?:[^"\\]|\\.){1,80})"\s*:\s*("(?:[^"\\]|\\.)*")')
#: Characters that may not touch a repeated value (it must stand as a whole word; a
#: full stop may follow it).
_WORDISH_AFTER = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@-")
_WORDISH_BEFORE = _WORDISH_AFTER | {"."}
#: Types returned as they are (checked first: most leaves of a transcript are these).
_SCALARS = frozenset({float, bool, type(None)})
_LITERAL = SPECIFIC + 10


@dataclass(frozen=True)
class Redaction(Generic[T]):
    """A redacted value and what was replaced in it: occurrences (``counts``) and distinct
    values (``distinct``) per kind. The replaced values themselves are not kept."""

    value: T
    counts: dict[str, int] = field(default_factory=dict)
    distinct: dict[str, int] = field(default_factory=dict)

    @property
    def redacted(self) -> bool:
        """Whether anything was replaced (the flag a span or record carries)."""
        return bool(self.counts)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> dict[str, Any]:
        """``{"redacted": bool, "total": n, "counts": {...}, "distinct": {...}}``."""
        return {
            "redacted": self.redacted,
            "total": self.total,
            "counts": dict(sorted(self.counts.items())),
            "distinct": dict(sorted(self.distinct.items())),
        }


class Redactor:
    """Finds secrets and personal data and replaces them (see the module docstring).

    ``config``: a :class:`RedactConfig` or a mapping of its fields. ``secrets``: values
    known to be secret (API keys given as options): always replaced, with their masked
    echoes and long fragments (see :func:`assay.redact.scrub`), as kind ``SECRET``."""

    def __init__(
        self, config: RedactConfig | Mapping[str, Any] | None = None, *, secrets: Iterable[str] = ()
    ):
        self.config = parse_config(config)
        self.secrets = usable_secrets(secrets)
        self._categories: dict[str, Category] = {k: c for k, (c, _) in known_kinds().items()}
        for p in self.config.patterns:
            self._categories[p.name] = p.category
        for kind in self.config.key_kinds.values():
            self._categories.setdefault(kind, "personal")
        self.detectors: tuple[Detector, ...] = tuple(d for d in self._all_detectors() if self.enabled(d.kind))
        self._set = DetectorSet(self.detectors)
        self._key_cache: dict[str, str | None] = {}
        self._cache: dict[str, tuple[Finding, ...]] = {}
        self._normalizers: dict[str, Callable[[str], str]] = {}
        for det in self.detectors:
            if det.normalize is not None:
                self._normalizers.setdefault(det.kind, det.normalize)
        self._allow = frozenset(self.config.allow)
        self._secret_keys = {normalize_name(k) for k in self.config.secret_keys}
        self._key_kinds = {normalize_name(k): v for k, v in self.config.key_kinds.items() if self.enabled(v)}

    def _all_detectors(self) -> list[Detector]:
        dets = [*builtin_detectors(), *personal_detectors()]
        if self.config.detect_secrets:
            dets.extend(detect_secrets_detectors())
        for p in self.config.patterns:
            dets.append(
                Detector(
                    p.name,
                    p.compiled(),
                    p.category,
                    group=p.group,
                    check=resolve_check(p.validator) if p.validator else None,
                    priority=SPECIFIC + 3,
                    source="config",
                )
            )
        return dets

    def enabled(self, kind: str) -> bool:
        """Whether values of ``kind`` are looked for."""
        category = self._categories.get(kind, "custom")
        if (category == "secret" and not self.config.secrets) or (
            category == "personal" and not self.config.personal
        ):
            return False
        return self.config.kind(kind).enabled

    @property
    def kinds(self) -> list[str]:
        """The kinds this redactor looks for."""
        kinds = {d.kind for d in self.detectors} | set(self._key_kinds.values())
        if self.enabled("SECRET"):
            kinds.add("SECRET")
        return sorted(kinds)

    def find(self, text: str) -> list[Finding]:
        """Where ``text`` holds sensitive values: non-overlapping, in text order."""
        return self._find(text)

    def _candidates(self, text: str) -> list[Finding]:
        if len(text) > _CACHE_TEXT:
            return self._set.candidates(text)
        cached = self._cache.get(text)
        if cached is None:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            cached = self._cache[text] = tuple(self._set.candidates(text))
        return list(cached)

    def _find(self, text: str, literals: Sequence[tuple[str, str]] = ()) -> list[Finding]:
        found = self._candidates(text)
        if self.secrets:
            found.extend(
                Finding(s, e, "SECRET", "secret", _KNOWN_SECRET) for s, e in secret_spans(text, self.secrets)
            )
        for value, kind in literals:
            start = text.find(value)
            while start >= 0:
                end = start + len(value)
                if (start == 0 or text[start - 1] not in _WORDISH_BEFORE) and (
                    end == len(text) or text[end] not in _WORDISH_AFTER
                ):
                    found.append(Finding(start, end, kind, self._categories.get(kind, "custom"), _LITERAL))
                start = text.find(value, start + 1)
        if self._allow and found:
            found = [f for f in found if text[f.start : f.end] not in self._allow]
        return resolve(found)

    def key_kind(self, key: str) -> str | None:
        """The kind whose whole value a mapping key holds (``SECRET`` for ``api_key``), or None."""
        if key in self._key_cache:
            return self._key_cache[key]
        name = normalize_name(key)
        kind: str | None
        if (is_secret_option(key) or name in self._secret_keys) and self.enabled("SECRET"):
            kind = "SECRET"
        else:
            kind = self._key_kinds.get(name)
        if len(self._key_cache) < 10_000:
            self._key_cache[key] = kind
        return kind

    def session(self, audit: Callable[[str, str], None] | None = None) -> RedactionSession:
        """A record's redaction state: pseudonyms shared by every call made through it.
        ``audit(kind, value)`` is called for every replaced value (for measurements:
        the values never appear in a :class:`Redaction`)."""
        return RedactionSession(self, audit)

    def redact(self, obj: T) -> Redaction[T]:
        """Redact one record (a string or JSON-like data) with its own pseudonyms."""
        session = self.session()
        value = session.redact(obj)
        return session.result(value)

    def redact_text(self, text: str) -> Redaction[str]:
        """Redact one text with its own pseudonyms."""
        return self.redact(text)


def _looks_like_json(text: str) -> bool:
    return len(text) >= 2 and len(text) <= _MAX_JSON_TEXT and text[0] in "{[" and text.rstrip()[-1:] in "}]"


class RedactionSession:
    """Pseudonyms and counts of one record, shared across calls."""

    def __init__(self, redactor: Redactor, audit: Callable[[str, str], None] | None = None):
        self.redactor = redactor
        self._audit = audit
        self._numbers: dict[str, dict[str, int]] = {}
        self._counts: Counter[str] = Counter()
        self._literals: dict[str, str] = {}
        self._literal_list: list[tuple[str, str]] = []

    @property
    def counts(self) -> dict[str, int]:
        return dict(self._counts)

    @property
    def distinct(self) -> dict[str, int]:
        return {kind: len(values) for kind, values in self._numbers.items() if values}

    @property
    def redacted(self) -> bool:
        return bool(self._counts)

    def result(self, value: T) -> Redaction[T]:
        return Redaction(value, self.counts, self.distinct)

    # -- replacing ---------------------------------------------------------------------

    def replacement(self, kind: str, value: str) -> str:
        """The text that replaces ``value`` of ``kind`` (and counts it)."""
        cfg = self.redactor.config
        normalize = self.redactor._normalizers.get(kind)
        norm = normalize(value) if normalize else " ".join(value.split())
        numbers = self._numbers.setdefault(kind, {})
        n = numbers.setdefault(norm, len(numbers) + 1)
        self._counts[kind] += 1
        if self._audit is not None:
            self._audit(kind, value)
        style = cfg.style_of(kind)
        if style == "label":
            return cfg.label.format(kind=kind)
        if style == "mask":
            return cfg.mask
        if style == "hash":
            assert cfg.salt is not None  # the config requires it
            digest = hmac.new(cfg.salt.encode(), f"{kind}\0{norm}".encode(), hashlib.sha256).hexdigest()
            return cfg.hash_format.format(kind=kind, hash=digest[:12])
        return cfg.placeholder.format(kind=kind, n=n)

    def redact_text(self, text: str) -> str:
        """``text`` with every sensitive value replaced."""
        if len(text) < 3:
            return text
        findings = self.redactor._find(text, self._literal_list)
        if not findings:
            return text
        parts, pos = [], 0
        for f in findings:
            parts.append(text[pos : f.start])
            parts.append(self.replacement(f.kind, text[f.start : f.end]))
            pos = f.end
        parts.append(text[pos:])
        return "".join(parts)

    def redact(self, obj: Any) -> Any:
        """A redacted copy of ``obj``: strings, and dicts/lists/tuples of them at any depth
        (numbers, booleans, None and other plain values are returned as they are; large
        integers are checked as text). Dataclass and pydantic objects and bytes raise
        TypeError: dump them to JSON-like data (``mode="json"``) or decode them first."""
        self._harvest(obj)
        return self._walk(obj, None)

    def redact_part(self, obj: Any) -> Redaction[Any]:
        """Redact one part of the record (a span, a message) with the record's pseudonyms;
        the counts are this part's, so the part can carry its own ``redacted`` flag."""
        before = Counter(self._counts)
        value = self.redact(obj)
        counts = {k: n - before[k] for k, n in self._counts.items() if n > before[k]}
        return Redaction(value, counts, {})

    # -- values found under keys ---------------------------------------------------------

    def _harvest(self, obj: Any) -> None:
        """Remember values held under secret or personal-data keys, so that their repeats
        elsewhere in the record are replaced too (``"first_name": "Ada"`` ... ``Ada``)."""
        added = False
        key_kind = self.redactor.key_kind
        stack = [obj]
        while stack:
            item = stack.pop()
            if isinstance(item, Mapping):
                for key, value in item.items():
                    kind = key_kind(key) if type(key) is str else None
                    if kind:
                        for v in value if isinstance(value, (list, tuple)) else (value,):
                            if isinstance(v, str) and v not in self._literals and self._literal_ok(v):
                                self._literals[v] = kind
                                added = True
                    if type(value) not in _SCALARS:
                        stack.append(value)
            elif isinstance(item, (list, tuple)):
                stack.extend(v for v in item if type(v) not in _SCALARS)
            elif isinstance(item, str) and _looks_like_json(item):
                # a tool output holding JSON text: its "key": "value" pairs count too
                for m in _JSON_PAIR.finditer(item):
                    raw_key, raw_value = m.groups()
                    with contextlib.suppress(ValueError):
                        kind = key_kind(json.loads(f'"{raw_key}"') if "\\" in raw_key else raw_key)
                        if kind:
                            v = json.loads(raw_value)
                            if v not in self._literals and self._literal_ok(v):
                                self._literals[v] = kind
                                added = True
        if added:
            self._literal_list = sorted(self._literals.items(), key=lambda kv: len(kv[0]), reverse=True)

    def _literal_ok(self, value: str) -> bool:
        v = value.strip()
        return (
            len(v) >= _MIN_LITERAL and v == value and not is_placeholder(v) and v not in self.redactor._allow
        )

    # -- walking -------------------------------------------------------------------------

    def _whole(self, value: str, kind: str) -> str:
        if not value.strip() or is_placeholder(value) or value in self.redactor._allow:
            return self.redact_text(value)
        return self.replacement(kind, value)

    def _walk(self, obj: Any, key_kind: str | None) -> Any:
        t = type(obj)
        if t is str or (t not in _SCALARS and isinstance(obj, str)):
            return self._whole(obj, key_kind) if key_kind else self.redact_text(obj)
        if t in _SCALARS:
            return obj
        if t is dict or isinstance(obj, Mapping):
            out: dict[Any, Any] = {}
            redact_keys = self.redactor.config.redact_keys
            key_kind_of = self.redactor.key_kind
            for key, value in obj.items():
                is_str = type(key) is str
                kind = key_kind_of(key) if is_str else None
                new_key = self.redact_text(key) if redact_keys and is_str else key
                out[new_key] = self._walk(value, kind)
            return out
        if t is list or isinstance(obj, list):
            return [self._walk(v, key_kind) for v in obj]
        if isinstance(obj, tuple):
            return tuple(self._walk(v, key_kind) for v in obj)
        if isinstance(obj, int) and not isinstance(obj, bool):
            if key_kind == "SECRET":
                return self.replacement(key_kind, str(obj))
            if abs(obj) >= 10 ** (_MIN_INT_DIGITS - 1):
                text = str(obj)
                redacted = self._whole(text, key_kind) if key_kind else self.redact_text(text)
                return obj if redacted == text else redacted
        if isinstance(obj, (bytes, bytearray)) or is_dataclass(obj) or hasattr(obj, "model_dump"):
            raise TypeError(
                f"redact takes JSON-like data (str, dict, list, numbers): got {type(obj).__name__}; "
                "dump it first (dataclasses.asdict, pydantic .model_dump(mode='json'), bytes.decode())"
            )
        return obj
