"""pass@k and pass^k averaged over tasks.

The estimators themselves live in :mod:`assay.stats.passk` (one implementation):

* ``pass_at_k``  = 1 - C(n-c, k) / C(n, k)   (Chen et al., 2021, "Codex")
* ``pass_hat_k`` = C(c, k) / C(n, k)          (Yao et al., 2024, "tau-bench")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..stats.passk import pass_at_k, pass_hat_k

__all__ = ["mean_over_tasks", "pass_at_k", "pass_hat_k"]


def mean_over_tasks(
    counts: Iterable[tuple[int, int]], k: int, estimator: Callable[[int, int, int], float] = pass_hat_k
) -> tuple[float | None, int]:
    """Average ``estimator(n, c, k)`` over tasks with at least k trials.

    Returns (mean or None when no task has k trials, number of tasks averaged).
    """
    values = [estimator(n, c, k) for n, c in counts if n >= k]
    return (sum(values) / len(values) if values else None), len(values)
