"""pass@k and pass^k: the chance that at least one / all of k trials succeed.

Both are unbiased estimators from n trials with c successes (sampling k of the n
without replacement):

* ``pass_at_k``  = 1 - C(n-c, k) / C(n, k)   (Chen et al., 2021, "Codex")
* ``pass_hat_k`` = C(c, k) / C(n, k)          (Yao et al., 2024, "tau-bench")
"""

from __future__ import annotations

from collections.abc import Iterable
from math import comb


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n):
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not (1 <= k <= n):
        raise ValueError(f"need 1 <= k <= n, got n={n}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k trials (drawn from the n) succeeds."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all k trials (drawn from the n) succeed."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def mean_over_tasks(
    counts: Iterable[tuple[int, int]], k: int, estimator=pass_hat_k
) -> tuple[float | None, int]:
    """Average ``estimator(n, c, k)`` over tasks with at least k trials.

    Returns (mean or None when no task has k trials, number of tasks averaged).
    """
    values = [estimator(n, c, k) for n, c in counts if n >= k]
    return (sum(values) / len(values) if values else None), len(values)
