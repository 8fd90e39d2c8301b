"""Clustering failed trials into badcases, deterministically.

The rule (docs/lifecycle.md):

1. A trial's **signature** is the set of its failing gating graders with their
   categories (``actions:forbidden_action``), plus vetoes; a trial that failed
   without a failing grader (a limit, a crash) has the signature ``termination:KIND``.
2. A trial's **reason tokens** are the words of its failing graders' reasons after
   normalisation: lower case, quoted values, ids, emails, amounts and numbers
   replaced by placeholders (``<q>``, ``<id>``, ``<n>``), so two trials that failed
   the same way on different orders have the same tokens.
3. Trials with the same signature are linked when the Jaccard similarity of their
   reason tokens is at least ``threshold`` (default 0.5); a cluster is a connected
   component of that graph (single linkage). Trials with different signatures are
   never in one cluster.

Clusters are listed largest first, then by their first trial (task id, trial index):
the same failures always give the same clusters, in the same order.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..core.results import TrialResult

DEFAULT_THRESHOLD = 0.5
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_EMAIL = re.compile(r"\S+@\S+\.\w+")
_ID = re.compile(r"[#\w.-]*\d[\w.-]*")
_TOKEN = re.compile(r"<\w+>|[a-z_]+")


def normalize_reason(text: str) -> str:
    """A grader reason with the values that differ between instances of the same
    failure (quoted strings, ids, emails, amounts, numbers) replaced by placeholders."""
    text = _QUOTED.sub(" <q> ", text)
    text = _EMAIL.sub(" <email> ", text)
    text = _ID.sub(lambda m: " <id> " if re.search(r"[A-Za-z#]", m.group(0)) else " <n> ", text)
    return " ".join(text.lower().split())


def failing_grades(result: TrialResult) -> list[tuple[str, str, str]]:
    """(grader, category, reason) of the trial's failing gating graders and vetoes."""
    return [
        (g.grader, g.category or ("veto" if g.veto else "failed"), g.reason)
        for g in result.grades
        if (g.gating and g.passed is False) or g.veto
    ]


def signature(result: TrialResult) -> tuple[str, ...]:
    failing = failing_grades(result)
    if failing:
        return tuple(sorted({f"{grader}:{category}" for grader, category, _ in failing}))
    if result.reward is None:
        return (f"excluded:{result.termination}:{result.root_cause or '?'}",)
    return (f"termination:{result.error_category or result.termination}",)


def reason_tokens(result: TrialResult) -> frozenset[str]:
    text = " ".join(reason for _, _, reason in failing_grades(result))
    if not text:
        text = result.error_category or result.termination
    return frozenset(_TOKEN.findall(normalize_reason(text)))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass
class Cluster:
    """Trials that failed the same way."""

    signature: tuple[str, ...]
    trials: list[TrialResult] = field(default_factory=list)
    tokens: frozenset[str] = frozenset()
    """The reason tokens every trial of the cluster shares."""

    @property
    def task_ids(self) -> list[str]:
        return sorted({r.task_id for r in self.trials})

    @property
    def first(self) -> TrialResult:
        return self.trials[0]


class _Union:
    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


def _split_by_reason(trials: Sequence[TrialResult], threshold: float) -> list[list[TrialResult]]:
    """Connected components of "reason tokens at least ``threshold`` alike"; identical
    token sets are compared once, so the cost grows with distinct reasons, not trials."""
    by_tokens: dict[frozenset[str], list[TrialResult]] = defaultdict(list)
    for r in trials:
        by_tokens[reason_tokens(r)].append(r)
    keys = sorted(by_tokens, key=lambda k: sorted(k))
    union = _Union(len(keys))
    for i in range(len(keys)):
        for j in range(i + 1, len(keys)):
            if jaccard(keys[i], keys[j]) >= threshold:
                union.join(i, j)
    groups: dict[int, list[TrialResult]] = defaultdict(list)
    for i, key in enumerate(keys):
        groups[union.find(i)].extend(by_tokens[key])
    return [sorted(g, key=lambda r: r.key) for g in groups.values()]


def cluster_failures(
    results: Iterable[TrialResult], *, threshold: float = DEFAULT_THRESHOLD, include_excluded: bool = False
) -> list[Cluster]:
    """Cluster the failed trials of ``results`` (reward 0; with ``include_excluded``,
    also trials excluded as harness, environment or grader errors) by the rule above."""
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    failed = [r for r in results if r.reward == 0 or (include_excluded and r.reward is None)]
    by_signature: dict[tuple[str, ...], list[TrialResult]] = defaultdict(list)
    for r in failed:
        by_signature[signature(r)].append(r)
    clusters = []
    for sig, trials in by_signature.items():
        for group in _split_by_reason(trials, threshold):
            shared = frozenset.intersection(*(reason_tokens(r) for r in group))
            clusters.append(Cluster(sig, group, shared))
    clusters.sort(key=lambda c: (-len(c.trials), c.first.key, c.signature))
    return clusters
