"""Matching helpers shared by graders: text normalisation, argument comparison."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2212"), "-")
_NUMBER_COMMAS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_SPACES = re.compile(r"\s+")


_CENTS = re.compile(r"(\d)\.00\b")
#: Texts up to this length are normalised once (expected texts are the same for every
#: trial of a task, and short answers repeat); longer ones every time.
_CACHED_LENGTH = 2000


def normalize_text(text: str) -> str:
    """Lower-case, NFKC, unify dashes, drop thousands separators and ``$``, collapse
    whitespace, strip trailing ``.00`` of amounts: "$1,299.00" -> "1299"."""
    return _normalized(text) if len(text) <= _CACHED_LENGTH else _normalize(text)


def _normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_DASHES).lower()
    text = _NUMBER_COMMAS.sub("", text).replace("$", "")
    text = _CENTS.sub(r"\1", text)
    return _SPACES.sub(" ", text).strip()


_normalized = lru_cache(maxsize=4096)(_normalize)


def values_equal(actual: Any, expected: Any) -> bool:
    """Equality that tolerates representation: 299 == 299.0 == "299.00"; strings are
    compared trimmed and case-insensitively; lists and dicts element-wise."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return actual is expected or actual == expected
    num_a, num_e = _as_number(actual), _as_number(expected)
    if num_a is not None and num_e is not None:
        return abs(num_a - num_e) <= 1e-9 * max(1.0, abs(num_e))
    if isinstance(expected, str) and isinstance(actual, str):
        return actual.strip().lower() == expected.strip().lower()
    if isinstance(expected, dict) and isinstance(actual, dict):
        return actual.keys() == expected.keys() and all(
            values_equal(actual[k], v) for k, v in expected.items()
        )
    if isinstance(expected, list) and isinstance(actual, list):
        return len(actual) == len(expected) and all(
            values_equal(a, e) for a, e in zip(actual, expected, strict=True)
        )
    return bool(actual == expected)


def _as_number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        return _text_number(value) if len(value) <= _CACHED_LENGTH else _parse_number(value)
    return None


def _parse_number(text: str) -> float | None:
    try:
        return float(text.strip().replace(",", "").lstrip("$"))
    except ValueError:
        return None


#: The number a text reads as (ids and names do not: they raise, which costs): read
#: once per text, as the same arguments come back in every trial.
_text_number = lru_cache(maxsize=4096)(_parse_number)


def args_match(actual: dict[str, Any], expected: dict[str, Any], mode: str = "subset") -> bool:
    """Compare tool-call arguments: ``exact`` (same keys and values), ``subset``
    (every expected key present with an equal value) or ``ignore``."""
    if mode == "ignore":
        return True
    if mode == "exact" and set(actual) != set(expected):
        return False
    return all(k in actual and values_equal(actual[k], v) for k, v in expected.items())


_AFFIRMATIVE = re.compile(
    r"^\W*(yes|yeah|yep|yup|sure|ok|okay|correct|confirm(ed)?|go ahead|please do|please proceed"
    r"|proceed|do it|that'?s right|absolutely|affirmative)\b",
    re.IGNORECASE,
)


def is_affirmative(text: str) -> bool:
    """Does a user message give explicit consent ("yes", "go ahead", ...)?"""
    return bool(_AFFIRMATIVE.match(text.strip()))
