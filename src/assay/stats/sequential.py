"""Sequential tests: look at the data as it arrives and stop as soon as the answer is clear.

Peeking at a fixed-n test after every batch inflates the false-positive rate far above
alpha. These tests are built to be checked after every observation:

- ``discordant_msprt``: an always-valid test that two configurations are equally good,
  using only discordant pairs (a beta-binomial mixture martingale).
- ``msprt_mean``: a normal-mixture sequential test of a mean difference (Johari et al.).

Every function is pure: pass the data so far, get back a decision and its statistic.
The calibrated SPRTs that adaptive runs stop on (exact alpha and power for the rate and
the paired tests) live in :mod:`assay.compare.sequential`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from ._checks import as_float_array, check_alpha, check_count

Decision = Literal["reject_h0", "accept_h0", "continue"]


@dataclass(frozen=True)
class AlwaysValidResult:
    """An always-valid sequential test: decision, statistic and anytime p-value.

    ``log_lr`` is the log mixture likelihood ratio at the stopping point (or at the end),
    ``p_value`` the always-valid p-value ``min(1, 1/max_t Λ_t)`` up to that point, ``n``
    the observations used and ``stopped`` whether the rejection boundary ``1/α`` was hit.
    """

    decision: Literal["reject_h0", "continue"]
    log_lr: float
    p_value: float
    n: int
    stopped: bool


def _always_valid(log_lr: npt.NDArray[np.float64], alpha: float) -> AlwaysValidResult:
    threshold = math.log(1.0 / alpha)
    if log_lr.size == 0:
        return AlwaysValidResult("continue", 0.0, 1.0, 0, False)
    hits = np.flatnonzero(log_lr >= threshold)
    stop = int(hits[0]) + 1 if hits.size else log_lr.size
    best = float(np.max(log_lr[:stop]))
    p_value = min(1.0, math.exp(-best)) if best > 0 else 1.0
    decision: Literal["reject_h0", "continue"] = "reject_h0" if hits.size else "continue"
    return AlwaysValidResult(decision, float(log_lr[stop - 1]), p_value, stop, bool(hits.size))


def discordant_mixture_log_lr(b: int, c: int, prior: float = 1.0) -> float:
    """log of the beta-binomial mixture likelihood ratio for ``b`` vs ``c`` discordant pairs.

    ``Λ = B(a + b, a + c) / B(a, a) · 2^(b + c)`` with a symmetric ``Beta(a, a)`` prior
    (``a = prior``) on the share of discordant pairs won by the first configuration.
    Under H0 (share = 1/2) Λ is a nonnegative martingale with mean 1.
    """
    b = check_count(b, "b")
    c = check_count(c, "c")
    if prior <= 0:
        raise ValueError("prior must be positive")
    a = float(prior)

    def log_beta(u: float, v: float) -> float:
        return math.lgamma(u) + math.lgamma(v) - math.lgamma(u + v)

    return log_beta(a + b, a + c) - log_beta(a, a) + (b + c) * math.log(2.0)


def discordant_msprt(
    x: npt.ArrayLike, y: npt.ArrayLike, alpha: float = 0.05, prior: float = 1.0
) -> AlwaysValidResult:
    """Always-valid paired test of two configurations from binary outcomes in arrival order.

    Only discordant pairs (exactly one passed) matter. Under H0 each is won by ``x`` with
    probability 1/2; the mixture ratio of :func:`discordant_mixture_log_lr` is then a test
    martingale, so by Ville's inequality ``P(sup_t Λ_t >= 1/α) <= α``: you may check after
    every pair and stop the first time Λ reaches ``1/α`` (decision ``"reject_h0"``). The
    p-value is ``min(1, 1/max Λ)`` and stays valid at any stopping time (Howard et al.
    2021; Johari et al. 2022).
    """
    xa = np.asarray(x)
    ya = np.asarray(y)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise ValueError("x and y must be 1-D arrays of the same length")
    if not (np.all(np.isin(xa, (0, 1))) and np.all(np.isin(ya, (0, 1)))):
        raise ValueError("x and y must contain only 0/1 outcomes")
    check_alpha(alpha)
    if prior <= 0:
        raise ValueError("prior must be positive")
    diff = xa.astype(int) - ya.astype(int)
    disc = diff[diff != 0]
    b = np.cumsum(disc > 0)
    c = np.cumsum(disc < 0)
    a = float(prior)
    m = disc.size
    # log Γ(a + k) - log Γ(a) = Σ_{i<k} log(a + i): exact running sums, no lgamma per step
    steps = np.arange(m + 1, dtype=np.float64)
    cum_a = np.concatenate(([0.0], np.cumsum(np.log(a + steps[:-1]))))
    cum_2a = np.concatenate(([0.0], np.cumsum(np.log(2 * a + steps[:-1]))))
    log_lr = cum_a[b] + cum_a[c] - cum_2a[b + c] + (b + c) * math.log(2.0)
    result = _always_valid(np.asarray(log_lr, dtype=np.float64), alpha)
    # report n in pairs (all pairs up to the stopping discordant pair), not discordant pairs
    n_pairs = int(np.flatnonzero(diff != 0)[result.n - 1]) + 1 if result.stopped else xa.size
    return AlwaysValidResult(result.decision, result.log_lr, result.p_value, n_pairs, result.stopped)


def msprt_mean(
    differences: npt.ArrayLike,
    sigma: float,
    alpha: float = 0.05,
    tau: float | None = None,
    theta0: float = 0.0,
) -> AlwaysValidResult:
    """Normal-mixture sequential test of H0: mean(differences) = ``theta0``.

    For i.i.d. differences with known standard deviation ``sigma`` and a ``N(theta0, τ²)``
    mixture over the alternative (τ defaults to σ)::

        Λ_n = sqrt(σ² / (σ² + nτ²)) · exp(n²τ²(x̄_n - θ0)² / (2σ²(σ² + nτ²)))

    (Robbins 1970; Johari, Pekelis & Walsh 2017). Reject the first time Λ_n >= 1/α.
    With ``sigma`` estimated from the same data the guarantee is only approximate.
    """
    d = as_float_array(differences, "differences", allow_empty=True)
    check_alpha(alpha)
    if not sigma > 0:
        raise ValueError("sigma must be positive")
    t = float(sigma if tau is None else tau)
    if not t > 0:
        raise ValueError("tau must be positive")
    s2, t2 = float(sigma) ** 2, t * t
    n = np.arange(1, d.size + 1, dtype=np.float64)
    mean = np.cumsum(d) / n if d.size else d
    log_lr = 0.5 * np.log(s2 / (s2 + n * t2)) + n**2 * t2 * (mean - theta0) ** 2 / (2.0 * s2 * (s2 + n * t2))
    return _always_valid(np.asarray(log_lr, dtype=np.float64), alpha)
