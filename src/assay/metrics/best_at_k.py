"""best@k: the expected best score among k attempts at a task, for graders whose scores
are not just pass/fail (rubric judges, partial-credit tests, retrieval metrics).

With n scored attempts sorted ascending ``s_1 <= ... <= s_n``, the unbiased estimator of
the expected maximum of k attempts drawn without replacement is
``sum_{i=k}^{n} s_i * C(i-1, k-1) / C(n, k)`` (each ``s_i`` is the maximum of the
``C(i-1, k-1)`` subsets whose other members rank below it). For 0/1 scores it is pass@k.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from math import comb

from .summary_model import ScoreStats


def best_at_k(scores: Sequence[float], k: int) -> float:
    """Expected best of ``k`` of the task's ``scores`` (``1 <= k <= len(scores)``)."""
    n = len(scores)
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of scores ({n}), got {k}")
    ordered = sorted(scores)
    total = comb(n, k)
    return sum(s * comb(i - 1, k - 1) for i, s in enumerate(ordered, 1) if i >= k) / total


def score_stats(rows: Iterable[tuple[str, str, float]], k_max: int) -> dict[str, ScoreStats]:
    """Per grader: mean score and best@k for k = 1..k_max, averaged over the tasks with
    at least k scores, from ``(task_id, grader, score)`` rows of not-skipped grades."""
    by: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for task_id, grader, score in rows:
        by[grader][task_id].append(float(score))
    out: dict[str, ScoreStats] = {}
    for grader in sorted(by):
        tasks = by[grader]
        every = [s for scores in tasks.values() for s in scores]
        curve: dict[str, float | None] = {}
        for k in range(1, k_max + 1):
            values = [best_at_k(scores, k) for scores in tasks.values() if len(scores) >= k]
            curve[str(k)] = round(sum(values) / len(values), 4) if values else None
        out[grader] = ScoreStats(
            mean=round(sum(every) / len(every), 4), scored=len(every), tasks=len(tasks), best_at_k=curve
        )
    return out
