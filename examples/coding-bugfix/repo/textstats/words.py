"""Counting words in text."""

from __future__ import annotations

import re
from collections import Counter

_WORD = re.compile(r"[a-z0-9']+")


def word_counts(text: str) -> Counter[str]:
    """How often each word occurs (case-insensitive)."""
    return Counter(_WORD.findall(text.lower()))


def top_words(text: str, n: int = 3) -> list[tuple[str, int]]:
    """The ``n`` most common words, most common first, ties in alphabetical order."""
    return sorted(word_counts(text).items(), key=lambda item: (-item[1], item[0]))[:n]
