"""Detectors (a pattern, the group that holds the value, an optional check) and the scan
that turns a text into non-overlapping findings.

A scan runs every enabled detector whose cheap preconditions hold (the text has a digit
when the detector needs one; one of its trigger substrings occurs), keeps the matches
that pass the detector's check, then resolves overlaps: overlapping matches become one
finding covering all of them, of the kind of the longest match (between matches of
equal length, of the more specific detector: higher ``priority``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Category = Literal["secret", "personal", "custom"]

#: Characters trimmed from both ends of a match (detectors that match their delimiters).
_TRIM = " \t\r\n\"'`=:,;"
_DIGIT = re.compile(r"\d")

#: Priorities: a specific format beats a personal-data pattern beats a generic rule.
SPECIFIC, PERSONAL, GENERIC = 30, 20, 10


@dataclass(frozen=True, slots=True)
class Detector:
    """One way to find one kind of sensitive value.

    ``group`` names the regex group holding the value (0: the whole match; -1: the first
    group that matched, as detect-secrets' patterns are written). ``check`` rejects
    matches that fail a checksum or plausibility test. ``triggers``: substrings one of
    which must occur for the detector to run (lower-case ones are looked for in the
    lower-cased text when ``fold`` is set). ``normalize`` maps a value to the identity
    used for pseudonyms (``+1 415 555 0134`` and ``+1-415-555-0134`` are one phone).
    ``fit`` (instead of ``check``) returns the length of the valid value at the start of
    a match, or None: for formats whose end a regex cannot tell (an IBAN's length
    depends on its country). ``group_checks`` (with ``group=-1``): one check per regex
    group, applied to the group that matched (one regex, several forms). A match that
    fails its check is tried again one character later, so a failed candidate never
    hides a real value it overlaps."""

    kind: str
    pattern: re.Pattern[str]
    category: Category
    group: int | str = 0
    check: Callable[[str], bool] | None = None
    priority: int = PERSONAL
    triggers: tuple[str, ...] = ()
    fold: bool = False
    needs_digit: bool = False
    normalize: Callable[[str], str] | None = None
    trim: bool = False
    fit: Callable[[str], int | None] | None = None
    group_checks: tuple[Callable[[str], bool], ...] | None = None
    source: str = "assay"


@dataclass(frozen=True, slots=True)
class Finding:
    """A sensitive value at ``text[start:end]`` (the value itself is never kept)."""

    start: int
    end: int
    kind: str
    category: Category
    priority: int = PERSONAL
    normalize: Callable[[str], str] | None = None

    @property
    def length(self) -> int:
        return self.end - self.start


def _span(match: re.Match[str], group: int | str) -> tuple[int, int, int]:
    """Start, end and number of the group holding the value."""
    if group == -1:
        for i in range(1, (match.re.groups or 0) + 1):
            start, end = match.span(i)
            if start >= 0 and end > start:
                return start, end, i
        return (*match.span(0), 0)
    start, end = match.span(group)
    return start, end, group if isinstance(group, int) else 0


def candidates(text: str, detectors: Iterable[Detector]) -> list[Finding]:
    """Every match of every detector (overlapping), after checks."""
    return DetectorSet(detectors).candidates(text)


_FLAG_LETTERS = ((re.IGNORECASE, "i"), (re.DOTALL, "s"), (re.MULTILINE, "m"), (re.VERBOSE, "x"))


def _gate(detectors: Sequence[Detector]) -> re.Pattern[str] | None:
    """One regex that matches wherever any of ``detectors`` could (their alternation)."""
    parts = []
    for det in detectors:
        flags = det.pattern.flags
        letters = "".join(c for f, c in _FLAG_LETTERS if flags & f)
        body = det.pattern.pattern
        parts.append(f"(?{letters}:{body})" if letters else f"(?:{body})")
    try:
        gate = re.compile("|".join(parts))
    except re.error:
        return None
    return gate if gate.groups < 100 else None


class DetectorSet:
    """Detectors arranged for a fast scan: each runs only when its preconditions hold
    (a digit in the text, one of its trigger substrings), and those with neither share
    one gate regex, so a text none of them can match costs a single search."""

    def __init__(self, detectors: Iterable[Detector]):
        self.detectors = tuple(detectors)
        ungated = [d for d in self.detectors if not d.triggers]
        self._plain = [d for d in ungated if not d.needs_digit]
        self._digit = [d for d in ungated if d.needs_digit]
        self._plain_gate = _gate(self._plain) if len(self._plain) > 1 else None
        triggered = [d for d in self.detectors if d.triggers]
        self._triggered = triggered
        #: trigger (lower-cased when folded, marked with a NUL) -> detectors it enables
        self._by_trigger: dict[str, set[int]] = {}
        for i, det in enumerate(triggered):
            for t in det.triggers:
                self._by_trigger.setdefault("\0" + t.lower() if det.fold else t, set()).add(i)
        case = sorted({t for t in self._by_trigger if not t.startswith("\0")}, key=len, reverse=True)
        fold = sorted({t[1:] for t in self._by_trigger if t.startswith("\0")}, key=len, reverse=True)
        # one zero-width scan finds, at every position, the longest trigger starting there;
        # the shorter triggers it contains are added from a precomputed table
        self._case_re = re.compile("(?=(" + "|".join(map(re.escape, case)) + "))") if case else None
        self._fold_re = re.compile("(?=(" + "|".join(map(re.escape, fold)) + "))", re.I) if fold else None
        self._enables: dict[str, frozenset[int]] = {}
        for key in self._by_trigger:
            marker, word = ("\0", key[1:]) if key.startswith("\0") else ("", key)
            pool = fold if marker else case
            enabled: set[int] = set()
            for other in pool:
                if other in word:
                    enabled |= self._by_trigger[marker + other]
            self._enables[key] = frozenset(enabled)

    def candidates(self, text: str) -> list[Finding]:
        out: list[Finding] = []
        if self._plain and (self._plain_gate is None or self._plain_gate.search(text)):
            for det in self._plain:
                _scan_one(text, det, out)
        has_digit = _DIGIT.search(text) is not None
        if has_digit:
            for det in self._digit:
                _scan_one(text, det, out)
        chosen: set[int] = set()
        enables = self._enables
        if self._case_re is not None:
            for word in set(self._case_re.findall(text)):
                chosen |= enables[word]
        if self._fold_re is not None:
            for word in set(self._fold_re.findall(text)):
                chosen |= enables["\0" + word.lower()]
        for i in sorted(chosen):
            det = self._triggered[i]
            if has_digit or not det.needs_digit:
                _scan_one(text, det, out)
        return out


def _scan_one(text: str, det: Detector, out: list[Finding]) -> None:
    pos, search = 0, det.pattern.search
    while (match := search(text, pos)) is not None:
        start, end, number = _span(match, det.group)
        if det.trim:
            while start < end and text[start] in _TRIM:
                start += 1
            while end > start and text[end - 1] in _TRIM:
                end -= 1
        ok = end > start
        if ok and det.fit is not None:
            size = det.fit(text[start:end])
            ok = size is not None
            if size is not None:
                end = start + size
        elif ok and det.group_checks is not None:
            ok = number > 0 and det.group_checks[number - 1](text[start:end])
        elif ok and det.check is not None:
            ok = det.check(text[start:end])
        if ok:
            out.append(Finding(start, end, det.kind, det.category, det.priority, det.normalize))
            pos = max(end, match.start() + 1)
        else:
            pos = match.start() + 1


def resolve(found: Sequence[Finding]) -> list[Finding]:
    """Non-overlapping findings in text order. Overlapping findings become one: its span
    covers them all (nothing any detector found is left), its kind is that of the longest
    (then most specific) of them."""
    if len(found) <= 1:
        return list(found)
    ordered = sorted(found, key=lambda f: (f.start, -f.end))
    out: list[Finding] = []
    group = [ordered[0]]
    end = ordered[0].end
    for f in ordered[1:]:
        if f.start < end:
            group.append(f)
            end = max(end, f.end)
            continue
        out.append(_merge(group, end))
        group, end = [f], f.end
    out.append(_merge(group, end))
    return out


def _merge(group: list[Finding], end: int) -> Finding:
    best = min(group, key=lambda f: (-f.length, -f.priority, f.start))
    start = group[0].start
    if start == best.start and end == best.end:
        return best
    return Finding(start, end, best.kind, best.category, best.priority, best.normalize)


def scan(text: str, detectors: Iterable[Detector]) -> list[Finding]:
    """The non-overlapping findings of ``detectors`` in ``text``, in text order."""
    return resolve(candidates(text, detectors))
