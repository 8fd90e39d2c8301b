"""The fixed-sample designs an adaptive run is measured against.

- **Paired** (``--against``): the pairs McNemar's test needs, from Connor's formula as
  ``assay plan --paired --discordance ψ`` computes it (:func:`.planning.plan`), at the
  discordance ψ the two runs showed.
- **Rate** (``--threshold``): ``assay plan`` has no one-sample design, so the exact
  one-sided binomial test: the smallest n whose critical count keeps the size ≤ alpha
  and reaches the power at ``threshold + mde`` (a little below the normal
  approximation's n, so the comparison errs against the adaptive run).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import AssayError
from .planning import plan


@dataclass(frozen=True)
class FixedDesign:
    """What a fixed-sample design of the same alpha and power needs: ``n`` trials (the
    candidate's: pairs for a paired design), and how that was computed."""

    n: int | None
    basis: str


def _log_factorials(n: int) -> np.ndarray:
    return np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))))


@lru_cache(maxsize=64)
def fixed_rate_trials(p0: float, p1: float, alpha: float, power: float, limit: int = 100_000) -> int:
    """Smallest n for which the exact one-sided binomial test of ``p ≤ p0`` at level
    ``alpha`` has power ≥ ``power`` at ``p1``."""
    if not 0 < p0 < p1 < 1:
        raise ValueError(f"need 0 < p0 < p1 < 1, got p0={p0}, p1={p1}")
    logf = _log_factorials(1024)
    for n in range(1, limit + 1):
        if n >= logf.size:
            logf = _log_factorials(2 * n)
        i = np.arange(n + 1)
        comb = logf[n] - logf[i] - logf[n - i]
        sf0 = np.cumsum(np.exp(comb + i * math.log(p0) + (n - i) * math.log1p(-p0))[::-1])[::-1]
        sf1 = np.cumsum(np.exp(comb + i * math.log(p1) + (n - i) * math.log1p(-p1))[::-1])[::-1]
        ok = np.flatnonzero(sf0 <= alpha)  # P(X ≥ c) under p0 for c = 0..n
        if ok.size and sf1[ok[0]] >= power:
            return n
    raise ValueError(f"no fixed design up to {limit} trials")


def fixed_rate(p0: float, p1: float, alpha: float, power: float) -> FixedDesign:
    n = fixed_rate_trials(p0, p1, alpha, power)
    return FixedDesign(
        n, f"exact one-sided binomial test of {p0:g} vs {p1:g} at alpha {alpha:g}, power {power:g}"
    )


def fixed_paired(
    baseline_rate: float, mde: float, alpha: float, power: float, discordant: int, pairs: int
) -> FixedDesign:
    """Connor's pairs (``assay plan --paired``) at the discordance observed,
    ``discordant`` of ``pairs``; none when the runs disagree on less than ``mde``."""
    if pairs == 0:
        return FixedDesign(None, "no pairs to measure the discordance on")
    psi = discordant / pairs
    base = min(baseline_rate, 1 - mde)
    command = (
        f"assay plan --paired --baseline {base:.3f} --mde {mde:g} --alpha {alpha:g} "
        f"--power {power:g} --discordance {psi:.3f}"
    )
    if psi <= mde:
        return FixedDesign(None, f"the runs disagree on {psi:.3f} of pairs, below the MDE: no fixed design")
    try:
        p = plan(base, mde, alpha=alpha, power=power, paired=True, discordance=psi)
    except AssayError as exc:
        return FixedDesign(None, str(exc))
    return FixedDesign(p.tasks_needed, f"{command} (the discordance of the pairs the test read)")
