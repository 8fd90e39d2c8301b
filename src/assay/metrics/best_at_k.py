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

import numpy as np
import numpy.typing as npt

from .summary_model import ScoreStats

#: Tasks with more scores than this are computed one by one (their binomial weights
#: would lose exactness as floats long before; no realistic run has that many).
_VECTOR_MAX_N = 1000


def best_at_k(scores: Sequence[float], k: int) -> float:
    """Expected best of ``k`` of the task's ``scores`` (``1 <= k <= len(scores)``)."""
    n = len(scores)
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of scores ({n}), got {k}")
    ordered = sorted(scores)
    total = comb(n, k)
    return sum(s * comb(i - 1, k - 1) for i, s in enumerate(ordered, 1) if i >= k) / total


def best_at_k_curve(tasks: Sequence[Sequence[float]], k_max: int) -> npt.NDArray[np.float64]:
    """best@k of every task for k = 1..k_max: rows are tasks, column k-1 is k, NaN where
    a task has fewer than k scores. The same floating-point operations, in the same
    order, as :func:`best_at_k` (so the same values), done for all tasks with the same
    number of scores at once."""
    out = np.full((len(tasks), k_max), np.nan)
    by_n: dict[int, list[int]] = defaultdict(list)
    for t, scores in enumerate(tasks):
        by_n[len(scores)].append(t)
    for n, rows in by_n.items():
        if n == 0:
            continue
        if n > _VECTOR_MAX_N:
            for t in rows:
                out[t, : min(n, k_max)] = [best_at_k(tasks[t], k) for k in range(1, min(n, k_max) + 1)]
            continue
        ordered = np.sort(np.array([tasks[t] for t in rows], dtype=np.float64), axis=1)
        for k in range(1, min(n, k_max) + 1):
            total = np.zeros(len(rows))
            for i in range(k, n + 1):  # sum_{i=k}^{n} s_i * C(i-1, k-1), left to right
                total += ordered[:, i - 1] * float(comb(i - 1, k - 1))
            out[rows, k - 1] = total / float(comb(n, k))
    return out


def score_stats(rows: Iterable[tuple[str, str, float]], k_max: int) -> dict[str, ScoreStats]:
    """Per grader: mean score and best@k for k = 1..k_max, averaged over the tasks with
    at least k scores, from ``(task_id, grader, score)`` rows of not-skipped grades."""
    by: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for task_id, grader, score in rows:
        by[grader][task_id].append(float(score))
    out: dict[str, ScoreStats] = {}
    for grader in sorted(by):
        tasks = list(by[grader].values())
        every = [s for scores in tasks for s in scores]
        matrix = best_at_k_curve(tasks, k_max)
        curve: dict[str, float | None] = {}
        for k in range(1, k_max + 1):
            column = matrix[:, k - 1]
            values = column[~np.isnan(column)].tolist()  # task order, summed left to right
            curve[str(k)] = round(sum(values) / len(values), 4) if values else None
        out[grader] = ScoreStats(
            mean=round(sum(every) / len(every), 4), scored=len(every), tasks=len(tasks), best_at_k=curve
        )
    return out
