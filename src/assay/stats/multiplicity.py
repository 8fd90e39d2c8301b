"""Multiple comparisons: family-wise error and p-value adjustment.

Comparing a candidate on six slices at alpha = 0.05 gives a 1 - 0.95^6 ≈ 26% chance of
at least one false "significant" result when nothing changed. Adjust the p-values of a
family of tests before reading them against alpha.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._checks import check_alpha


def familywise_error_rate(alpha: float, m: int) -> float:
    """``1 - (1 - alpha)^m``: chance of at least one false positive among ``m`` independent
    tests at level ``alpha`` when every null hypothesis is true (0.05, 6 → ≈ 0.26)."""
    check_alpha(alpha)
    if isinstance(m, bool) or not isinstance(m, int) or m < 0:
        raise ValueError(f"m must be a non-negative integer, got {m!r}")
    return 1.0 - (1.0 - alpha) ** m


def adjust_pvalues(p_values: Sequence[float], method: str = "holm") -> list[float]:
    """Adjusted p-values, in the input order, to compare against the family's alpha.

    - ``"bonferroni"``: ``min(1, m·p)``; controls the family-wise error rate (FWER).
    - ``"holm"``: step-down Bonferroni (Holm 1979): sorted ascending,
      ``adj_(i) = max_{j<=i} min(1, (m - j + 1)·p_(j))``; controls FWER, never less
      powerful than Bonferroni. The default.
    - ``"bh"`` (alias ``"fdr_bh"``): Benjamini–Hochberg (1995) step-up,
      ``adj_(i) = min_{j>=i} min(1, m/j·p_(j))``; controls the false discovery rate.

    Matches ``statsmodels.stats.multitest.multipletests`` (``holm``, ``bonferroni``,
    ``fdr_bh``). An empty input gives an empty list.
    """
    p = np.asarray(list(p_values), dtype=np.float64)
    if p.ndim != 1:
        raise ValueError("p_values must be a flat sequence of numbers")
    if np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("p_values must all be probabilities in [0, 1]")
    m = p.size
    if m == 0:
        return []
    key = "bh" if method == "fdr_bh" else method
    if key == "bonferroni":
        adjusted = np.minimum(1.0, p * m)
    elif key == "holm":
        order = np.argsort(p, kind="mergesort")
        steps = (m - np.arange(m)) * p[order]
        adjusted = np.empty(m)
        adjusted[order] = np.minimum(1.0, np.maximum.accumulate(steps))
    elif key == "bh":
        order = np.argsort(p, kind="mergesort")
        steps = m / np.arange(1, m + 1) * p[order]
        adjusted = np.empty(m)
        adjusted[order] = np.minimum(1.0, np.minimum.accumulate(steps[::-1])[::-1])
    else:
        raise ValueError(f"method must be 'holm', 'bonferroni' or 'bh', not {method!r}")
    return [float(v) for v in adjusted]
