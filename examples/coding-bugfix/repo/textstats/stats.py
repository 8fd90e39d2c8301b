"""Central tendency of a sequence of numbers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean; ValueError for an empty sequence."""
    if not values:
        raise ValueError("mean of an empty sequence")
    return sum(values) / len(values)


def median(values: Sequence[float]) -> float:
    """The middle value of the sorted values (the mean of the two middle ones when
    their number is even); ValueError for an empty sequence."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of an empty sequence")
    middle = len(ordered) // 2
    if len(ordered) % 2 == 1:
        return ordered[middle]
    return (ordered[middle] + ordered[middle + 1]) / 2


def mode(values: Sequence[float]) -> float:
    """The most common value (the smallest of them on a tie); ValueError if empty."""
    if not values:
        raise ValueError("mode of an empty sequence")
    counts = Counter(values)
    best = max(counts.values())
    return min(v for v, n in counts.items() if n == best)
