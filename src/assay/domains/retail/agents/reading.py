"""How the retail reference agents read text: the user's own words (before an injected
block), what a request is about (its intent), phrases said with a slip of the keyboard,
and tool values as the numbers and dates they stand for."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime
from functools import lru_cache
from typing import Any

INJECTION = re.compile(r"^\s*(?:SYSTEM|ADMIN|DEVELOPER)\s*:", re.IGNORECASE | re.MULTILINE)
HUMAN = re.compile(r"\b(human|real person|manager|supervisor|representative|live agent)\b", re.IGNORECASE)
INTENTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("human", HUMAN),
    ("cancel", re.compile(r"\bcancel", re.IGNORECASE)),
    ("address", re.compile(r"\bshipping address\b|\bchange (?:the|my) address\b", re.IGNORECASE)),
    ("refund", re.compile(r"\brefund|\bmoney back\b", re.IGNORECASE)),
    ("status", re.compile(r"\bstatus\b|\bwhere is\b|\btrack(?:ing|ed|s)?\b", re.IGNORECASE)),
)
MONEY_KEYS = re.compile(r"(?:^|_)(?:total|amount|price|cost|paid|refunded)(?:$|_)")
MONEY_TEXT = re.compile(r"^\$?\s*([\d,]+(?:\.\d+)?)\s*(?:USD)?$", re.IGNORECASE)
CENTS_TEXT = re.compile(r"^(\d+)\s*cents?$", re.IGNORECASE)
DATE_FORMATS = ("%B %d, %Y", "%b %d, %Y", "%m/%d/%Y", "%Y-%m-%dT%H:%M:%SZ")


@lru_cache(maxsize=4096)  # every turn re-reads the same user messages
def own_words(text: str) -> str:
    """The part of a user message written by the user: everything before an injected
    ``SYSTEM:`` (or ADMIN/DEVELOPER) block, which a careful agent ignores."""
    match = INJECTION.search(text)
    return text[: match.start()] if match else text


def _plain(key: str, value: Any) -> Any:
    """A tool value read the way the agent needs it: amounts as numbers (``"$1,299.00"``,
    ``"1299.00 USD"``, ``"129900 cents"``), dates as ISO dates (``"June 10, 2025"``,
    ``"06/10/2025"``, ``"2025-06-10T00:00:00Z"``); anything else as it is."""
    if isinstance(value, dict):
        return {k: _plain(k, v) if isinstance(v, (dict, list, str)) else v for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(key, v) for v in value]
    if not isinstance(value, str):
        return value
    money, when = _reading(key)
    if not (money or when):
        return value
    return _plain_text(money, when and bool(value), value)


@lru_cache(maxsize=1024)
def _reading(key: str) -> tuple[bool, bool]:
    """Whether a value under ``key`` may be an amount, and whether it may be a date."""
    return MONEY_KEYS.search(key) is not None, key.endswith("_at")


@lru_cache(maxsize=4096)  # the same dates and amounts come back in every trial
def _plain_text(money: bool, when: bool, value: str) -> Any:
    """:func:`_plain` of a text that may be an amount (``money``) or a date (``when``)."""
    if money:
        if match := MONEY_TEXT.match(value.strip()):
            return float(match.group(1).replace(",", ""))
        if match := CENTS_TEXT.match(value.strip()):
            return int(match.group(1)) / 100
    if when:
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError:
            pass
        for fmt in DATE_FORMATS:
            try:
                return datetime.strptime(value, fmt).date().isoformat()
            except ValueError:
                continue
    return value


#: The words and phrases each intent hangs on, for reading them through a typo.
KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("human", ("human", "real person", "manager", "supervisor", "representative", "live agent")),
    ("cancel", ("cancel",)),
    ("address", ("shipping address", "change the address", "change my address")),
    ("refund", ("refund", "money back")),
    ("status", ("status", "where is", "track")),
)
_WORDS = re.compile(r"[A-Za-z]+")


def one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by at most one slip: a letter replaced, dropped,
    added, or two neighbours swapped (Damerau-Levenshtein distance <= 1)."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 or (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def _slipped(word: str, keyword: str) -> bool:
    """A word read as ``keyword``: equal, or both of 4+ letters, the same first letter and
    one slip apart ("refnud" is refund; "here" is not "where")."""
    return word == keyword or (
        len(word) >= 4 and len(keyword) >= 4 and word[0] == keyword[0] and one_edit(word, keyword)
    )


def mentions(text: str, phrases: Sequence[str]) -> bool:
    """Whether ``text`` holds one of ``phrases``, each word read through one typo."""
    words = [w.lower() for w in _WORDS.findall(text)]
    for phrase in phrases:
        parts = phrase.split()
        for i in range(len(words) - len(parts) + 1):
            if all(_slipped(w, k) for w, k in zip(words[i : i + len(parts)], parts, strict=True)):
                return True
    return False


@lru_cache(maxsize=4096)  # every turn of every trial re-reads the same user messages
def intent_of(text: str) -> str | None:
    """What a user message asks for: human, cancel, address, refund, status or None.
    The intent's words are also recognised through one typo ("refnud", "cancle")."""
    for name, pattern in INTENTS:
        if pattern.search(text):
            return name
    for name, phrases in KEYWORDS:
        if mentions(text, phrases):
            return name
    return None


@lru_cache(maxsize=4096)
def asks_for_human(text: str) -> bool:
    """Whether a user message asks for a person (also through one typo)."""
    return bool(HUMAN.search(text)) or mentions(text, dict(KEYWORDS)["human"])
