"""pass@k and pass^k: closed forms for a known per-trial rate, and unbiased estimators.

pass@k is the chance that *at least one* of k trials succeeds (capability: "can it ever
do this?"); pass^k is the chance that *all* k succeed (reliability: "does it do this every
time?"). With per-trial success p = 0.6, pass@5 = 1 - 0.4^5 ≈ 0.99 while
pass^5 = 0.6^5 ≈ 0.078: the same agent looks nearly perfect or nearly useless depending on
which question is asked.
"""

from __future__ import annotations

from math import comb

from ._checks import check_count, check_probability


def _check_k(k: int) -> int:
    k = check_count(k, "k")
    if k < 1:
        raise ValueError("k must be at least 1")
    return k


def pass_at_k_rate(p: float, k: int) -> float:
    """``1 - (1 - p)^k``: probability that at least one of ``k`` independent trials passes."""
    check_probability(p, "p")
    return 1.0 - (1.0 - p) ** _check_k(k)


def pass_hat_k_rate(p: float, k: int) -> float:
    """``p^k``: probability that all ``k`` independent trials pass."""
    check_probability(p, "p")
    return float(p ** _check_k(k))


def _check_nck(n: int, c: int, k: int) -> tuple[int, int, int]:
    n = check_count(n, "n")
    c = check_count(c, "c")
    k = _check_k(k)
    if c > n:
        raise ValueError(f"c ({c}) cannot exceed n ({n})")
    if k > n:
        raise ValueError(f"k ({k}) cannot exceed the number of trials n ({n})")
    return n, c, k


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``c`` passes in ``n >= k`` trials: ``1 - C(n-c, k) / C(n, k)``.

    Chen et al. (2021), "Evaluating Large Language Models Trained on Code".
    """
    n, c, k = _check_nck(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k from ``c`` passes in ``n >= k`` trials: ``C(c, k) / C(n, k)``.

    Yao et al. (2024), "τ-bench". Averaged over tasks it estimates the share of tasks an
    agent would solve in k out of k attempts.
    """
    n, c, k = _check_nck(n, c, k)
    return comb(c, k) / comb(n, k)
