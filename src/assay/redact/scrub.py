"""Removing known secret values from text, including the masked echoes endpoints print.

An endpoint that rejects a key often quotes it back, whole or masked:
``Incorrect API key provided: sk-proj-********************abcd``, ``sk-...abcd``,
``key ending in ****abcd``. :func:`scrub` removes the value itself, its URL-encoded and
JSON-escaped forms, any masked echo whose visible head and tail agree with a known
secret, and any long fragment of a secret (a truncated quote).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import quote

#: Default replacement of :func:`scrub`.
SCRUBBED = "<SECRET>"
#: Shortest value treated as a secret (shorter ones would remove ordinary words).
MIN_SECRET = 6
#: Shortest fragment of a secret removed when it appears on its own.
MIN_FRAGMENT = 10

_MASKED = re.compile(
    r"(?<![A-Za-z0-9_+/=-])(?P<head>[A-Za-z0-9_+/=-]*?)(?P<mask>\*{3,}|\.{3,}|…+|•{2,}|x{4,}|X{4,}|#{4,})"
    r"(?P<tail>[A-Za-z0-9_+/=-]*)"
)
_MASK_HINTS = ("***", "...", "…", "••", "xxxx", "XXXX", "####")
_TOKEN = re.compile(rf"[A-Za-z0-9_+/=-]{{{MIN_FRAGMENT},}}")


def _variants(secret: str) -> set[str]:
    return {secret, quote(secret, safe=""), json.dumps(secret)[1:-1]}


def usable_secrets(secrets: Iterable[str | None]) -> list[str]:
    """The distinct secrets long enough to scrub, longest first."""
    return sorted({s for s in secrets if s and len(s) >= MIN_SECRET}, key=len, reverse=True)


def secret_spans(text: str, secrets: Iterable[str]) -> list[tuple[int, int]]:
    """Where ``text`` holds one of ``secrets`` (see :func:`usable_secrets`), a masked echo
    of one, or a fragment of one of at least :data:`MIN_FRAGMENT` characters."""
    known = usable_secrets(secrets)
    spans: list[tuple[int, int]] = []
    if not known or not text:
        return spans
    for secret in known:
        for variant in _variants(secret):
            start = text.find(variant)
            while start >= 0:
                spans.append((start, start + len(variant)))
                start = text.find(variant, start + 1)
    if any(hint in text for hint in _MASK_HINTS):
        for m in _MASKED.finditer(text):
            head, tail = m.group("head"), m.group("tail")
            if len(head) + len(tail) < 4:
                continue
            if any(s.startswith(head) and s.endswith(tail) for s in known):
                spans.append(m.span())
    for m in _TOKEN.finditer(text):
        token = m.group()
        if any(token in s for s in known):
            spans.append(m.span())
    return spans


def scrub(text: str, secrets: Iterable[str | None], replacement: str = SCRUBBED) -> str:
    """``text`` without the known ``secrets``: each occurrence, masked echo or long
    fragment is replaced by ``replacement``. Secrets shorter than
    :data:`MIN_SECRET` characters are ignored."""
    spans = secret_spans(text, usable_secrets(secrets))
    if not spans:
        return text
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    parts, pos = [], 0
    for start, end in merged:
        parts.append(text[pos:start])
        parts.append(replacement)
        pos = end
    parts.append(text[pos:])
    return "".join(parts)
