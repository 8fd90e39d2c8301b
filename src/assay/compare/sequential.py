"""Sequential designs with exact error rates: SPRTs calibrated on the binomial lattice.

Wald's boundaries ``log((1 − β)/α)`` and ``log(β/(1 − α))`` are approximations: with the
coarse steps of binary outcomes the realised error rates land well below the targets and
the test runs longer than it needs to. Here the two boundaries are *calibrated*: the
operating characteristic (rejection probability and expected number of steps) is computed
exactly by dynamic programming over (steps, successes), and the boundaries are searched
so that the exact type-I error is ≤ α and the exact power at the design alternative is
≥ 1 − β, with the test truncated (no rejection) after ``max_steps``.

Two designs:

- ``rate``: one success rate, H0 ``p ≤ p0`` vs H1 ``p ≥ p1`` (Wald's SPRT, one-sided).
  A step is a counted trial.
- ``paired``: two configurations on the same trial pairs. Only discordant pairs count
  (one passed, the other failed); under H0 each is won by either side with probability
  ½. Two one-sided SPRTs against θ₁ and 1 − θ₁ (θ₁ = share of discordant pairs won by
  the better side under H1) run together: reject H0 when either log-LR reaches the upper
  boundary, accept when both are at or below the lower one (Sobel & Wald 1949).
  A step is a discordant pair.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ..stats import discordant_msprt

Kind = Literal["rate", "paired"]
Decision = Literal["reject_h0", "accept_h0", "continue"]
_Z = NormalDist()


@dataclass(frozen=True)
class SequentialDesign:
    """A calibrated SPRT: hypotheses, boundaries (log-LR) and exact operating figures.

    ``asn_h0``/``asn_h1`` are the expected steps to a decision under H0 and H1;
    ``fixed_steps`` is what a fixed-sample test at the same α and power needs (normal
    approximation), for comparison.
    """

    kind: Kind
    p0: float
    p1: float
    alpha: float
    beta: float
    upper: float
    lower: float
    max_steps: int
    exact_alpha: float
    exact_power: float
    asn_h0: float
    asn_h1: float
    fixed_steps: int
    mde: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SequentialState:
    """Where a sequence of observations stands against a design.

    ``observations``: units read up to the decision (trials, or trial pairs), all of
    them when undecided; ``steps``: test steps (trials, or discordant pairs);
    ``successes``: successes (rate) or discordant pairs won by the candidate (paired);
    ``better``: for a paired rejection, ``"b"`` or ``"a"``; ``reason``: which rule
    stopped it (``upper``, ``lower``, ``discordance``, ``max_steps``) or ``None``.
    """

    decision: Decision
    observations: int
    steps: int
    successes: int
    log_lr: float
    better: Literal["a", "b"] | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _steps(p0: float, p1: float) -> tuple[float, float]:
    return math.log(p1 / p0), math.log((1 - p1) / (1 - p0))


def _oc_many(
    kind: Kind,
    p0: float,
    p1: float,
    uppers: npt.ArrayLike,
    lowers: npt.ArrayLike,
    thetas: npt.ArrayLike,
    max_steps: int,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(P(reject H0), expected steps) of B SPRTs (boundaries ``uppers[i]``, ``lowers[i]``)
    at each of T true success probabilities, as arrays (B, T): one dynamic programme over
    (steps, successes) for all of them. Only the band of successes still alive in some
    test is carried from one step to the next."""
    win, loss = _steps(p0, p1)
    upper = np.asarray(uppers, dtype=np.float64).reshape(-1, 1)
    lower = np.asarray(lowers, dtype=np.float64).reshape(-1, 1)
    th = np.asarray(thetas, dtype=np.float64).reshape(1, -1, 1)
    shape = (upper.shape[0], th.shape[1])
    mass = np.ones((*shape, 1))  # mass[..., j]: probability of s = low + j successes, still running
    low = 0
    reject = np.zeros(shape)
    asn = np.zeros(shape)
    for m in range(1, max_steps + 1):
        n = mass.shape[-1]
        nxt = np.empty((*shape, n + 1))
        np.multiply(mass, 1 - th, out=nxt[..., :n])
        nxt[..., n] = 0.0
        nxt[..., 1:] += mass * th
        s = np.arange(low, low + n + 1, dtype=np.float64)
        up = s * win + (m - s) * loss
        stat = up if kind == "rate" else np.maximum(up, (m - s) * win + s * loss)
        rej = (stat >= upper)[:, None, :]
        stopped = nxt * (rej | (stat <= lower)[:, None, :])
        reject += (nxt * rej).sum(axis=-1)
        asn += m * stopped.sum(axis=-1)
        nxt -= stopped
        alive = np.flatnonzero(nxt.any(axis=(0, 1)))
        if alive.size == 0:
            mass = nxt[..., :0]
            break
        mass = nxt[..., alive[0] : alive[-1] + 1]
        low += int(alive[0])
        if mass.sum() < 1e-12:
            break
    asn += max_steps * mass.sum(axis=-1)
    return reject, asn


def operating_characteristic(
    kind: Kind, p0: float, p1: float, upper: float, lower: float, thetas: npt.ArrayLike, max_steps: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Exact (P(reject H0), expected steps) of the SPRT at each true success probability
    in ``thetas`` (for ``paired``: the share of discordant pairs the candidate wins)."""
    reject, asn = _oc_many(kind, p0, p1, [upper], [lower], thetas, max_steps)
    return reject[0], asn[0]


def fixed_steps(kind: Kind, p0: float, p1: float, alpha: float, beta: float) -> int:
    """Steps a fixed-sample test needs (normal approximation): one-sided for ``rate``,
    two-sided (discordant pairs, binomial test of ½) for ``paired``."""
    za = _Z.inv_cdf(1 - (alpha if kind == "rate" else alpha / 2))
    zb = _Z.inv_cdf(1 - beta)
    n = ((za * math.sqrt(p0 * (1 - p0)) + zb * math.sqrt(p1 * (1 - p1))) / (p1 - p0)) ** 2
    return max(1, math.ceil(n - 1e-9))


def _first_true(predicate: Any, lo: float, hi: float, tol: float = 2e-3, width: int = 16) -> float:
    """Smallest x in [lo, hi] (to ``tol``) with predicate true, predicate monotone
    false → true and evaluated on ``width`` points at once; ``hi`` when none is."""
    while hi - lo > tol:
        xs = np.linspace(lo, hi, width + 2)[1:-1]
        ok = np.asarray(predicate(xs))
        if not ok.any():
            lo = float(xs[-1])
            continue
        i = int(np.argmax(ok))
        hi, lo = float(xs[i]), (float(xs[i - 1]) if i else lo)
    return hi


@lru_cache(maxsize=64)
def _calibrate(
    kind: Kind, p0: float, p1: float, alpha: float, beta: float, max_steps: int
) -> SequentialDesign:
    thetas = np.array([p0, p1])

    def oc(upper: float, lower: float) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        return operating_characteristic(kind, p0, p1, upper, lower, thetas, max_steps)

    top = math.log((2 if kind == "paired" else 1) / alpha) + 0.5
    floor = math.log(beta) - 3.0

    def upper_for(lower: float) -> float:
        def size_ok(uppers: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
            lowers = np.full(uppers.size, lower)
            return _oc_many(kind, p0, p1, uppers, lowers, thetas, max_steps)[0][:, 0] <= alpha

        return _first_true(size_ok, 0.0, top)

    def lower_for(upper: float) -> float:
        # the highest lower boundary (earliest acceptance) that keeps the power
        def powered(negs: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
            uppers = np.full(negs.size, upper)
            return _oc_many(kind, p0, p1, uppers, -negs, thetas, max_steps)[0][:, 1] >= 1 - beta

        return -_first_true(powered, 1e-3, -floor)

    if oc(upper_for(floor), floor)[0][1] < 1 - beta:
        raise ValueError(
            f"{max_steps} steps cannot reach power {1 - beta:.2f} for {p0:g} vs {p1:g}; "
            "allow more (--max-trials) or test a larger difference (--mde)"
        )
    # alternate: alpha depends mostly on the upper boundary, power on the lower one
    lower = math.log(beta / (1 - alpha))
    upper = upper_for(lower)
    for _ in range(4):
        new_lower = lower_for(upper)
        new_upper = upper_for(new_lower)
        done = abs(new_lower - lower) < 5e-3 and abs(new_upper - upper) < 5e-3
        lower, upper = new_lower, new_upper
        if done:
            break
    while oc(upper, lower)[0][1] < 1 - beta and lower > floor:
        lower -= 0.01
        upper = upper_for(lower)
    rej, asn = oc(upper, lower)
    return SequentialDesign(
        kind,
        p0,
        p1,
        alpha,
        beta,
        upper,
        lower,
        max_steps,
        float(rej[0]),
        float(rej[1]),
        float(asn[0]),
        float(asn[1]),
        fixed_steps(kind, p0, p1, alpha, beta),
    )


def _check(alpha: float, power: float) -> None:
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha}")
    if not 0.5 <= power < 1:
        raise ValueError(f"power must be in [0.5, 1), got {power}")


def design_rate(
    p0: float, p1: float, alpha: float = 0.05, power: float = 0.8, max_steps: int | None = None
) -> SequentialDesign:
    """Calibrated one-sided SPRT for a success rate: H0 ``p ≤ p0`` vs H1 ``p ≥ p1``."""
    _check(alpha, power)
    if not 0 < p0 < p1 < 1:
        raise ValueError(f"need 0 < p0 < p1 < 1, got p0={p0}, p1={p1}")
    steps = max_steps or max(30, 3 * fixed_steps("rate", p0, p1, alpha, 1 - power))
    return _calibrate("rate", round(p0, 9), round(p1, 9), alpha, round(1 - power, 9), int(steps))


def design_paired(
    theta1: float,
    alpha: float = 0.05,
    power: float = 0.8,
    max_steps: int | None = None,
    mde: float | None = None,
) -> SequentialDesign:
    """Calibrated two-sided SPRT on discordant pairs: H0 θ = ½ vs H1 θ ∈ {θ₁, 1 − θ₁}.

    With ``mde`` the design also stops for *low discordance*: a difference of rates
    ``|p_b − p_a|`` can never exceed the share of discordant pairs ψ, so once an
    always-valid test shows ψ < ``mde`` no difference of ``mde`` is possible (see
    :func:`paired_path`).
    """
    _check(alpha, power)
    if not 0.5 < theta1 < 1:
        raise ValueError(f"theta1 (share of discordant pairs won under H1) must be in (0.5, 1), got {theta1}")
    if mde is not None and not 0 < mde < 1:
        raise ValueError(f"mde must be in (0, 1), got {mde}")
    steps = max_steps or max(30, 3 * fixed_steps("paired", 0.5, theta1, alpha, 1 - power))
    design = _calibrate("paired", 0.5, round(theta1, 9), alpha, round(1 - power, 9), int(steps))
    return replace(design, mde=mde)


def theta_for(mde: float, discordance: float) -> float:
    """θ₁ = (ψ + δ) / 2ψ: share of discordant pairs the better side wins when the rates
    differ by δ (``mde``) and the configurations disagree on a share ψ of pairs."""
    if not 0 < mde < discordance <= 1:
        raise ValueError(f"need 0 < mde < discordance <= 1, got mde={mde}, discordance={discordance}")
    return (discordance + mde) / (2 * discordance)


def rate_path(outcomes: npt.ArrayLike, design: SequentialDesign) -> SequentialState:
    """Replay 0/1 ``outcomes`` (in order) through a ``rate`` design; stop at the first
    boundary crossing (or after ``max_steps``)."""
    x = np.asarray(outcomes, dtype=np.int64).reshape(-1)[: design.max_steps]
    win, loss = _steps(design.p0, design.p1)
    llr = np.cumsum(np.where(x == 1, win, loss))
    hits = np.flatnonzero((llr >= design.upper) | (llr <= design.lower))
    stop = int(hits[0]) + 1 if hits.size else x.size
    value = float(llr[stop - 1]) if stop else 0.0
    decision: Decision = "continue"
    reason = None
    if hits.size:
        decision = "reject_h0" if value >= design.upper else "accept_h0"
        reason = "upper" if decision == "reject_h0" else "lower"
    elif x.size >= design.max_steps:
        decision, reason = "accept_h0", "max_steps"
    return SequentialState(decision, stop, stop, int(x[:stop].sum()), value, None, reason)


def low_discordance(disagree: npt.NDArray[np.bool_], mde: float, alpha: float) -> int | None:
    """Index of the first pair at which an SPRT of ψ ≥ ``mde`` against ψ = ``mde``/4
    crosses ``log(1/α)`` (Ville: under ψ ≥ ``mde`` that happens with probability ≤ α)."""
    psi0, psi1 = mde, mde / 4
    llr = np.cumsum(np.where(disagree, math.log(psi1 / psi0), math.log((1 - psi1) / (1 - psi0))))
    hits = np.flatnonzero(llr >= math.log(1 / alpha))
    return int(hits[0]) if hits.size else None


def paired_path(a: npt.ArrayLike, b: npt.ArrayLike, design: SequentialDesign) -> SequentialState:
    """Replay aligned 0/1 outcomes of baseline ``a`` and candidate ``b`` through a
    ``paired`` design; ``observations`` counts all pairs read, ``steps`` discordant ones.

    Stops at the first of: the SPRT's upper boundary (reject H0: one side is better),
    its lower boundary (accept: no difference of the design's size), the low-discordance
    rule when the design has an ``mde`` (accept), or ``max_steps`` discordant pairs.
    """
    xa = np.asarray(a, dtype=np.int64).reshape(-1)
    xb = np.asarray(b, dtype=np.int64).reshape(-1)
    if xa.shape != xb.shape:
        raise ValueError(f"a and b must pair up: {xa.size} vs {xb.size} outcomes")
    disagree = xa != xb
    where = np.flatnonzero(disagree)[: design.max_steps]
    b_won = (xb[where] > xa[where]).astype(np.int64)
    win, loss = _steps(design.p0, design.p1)
    wins = np.cumsum(b_won)
    m = np.arange(1, where.size + 1)
    up = wins * win + (m - wins) * loss
    down = (m - wins) * win + wins * loss
    stat = np.maximum(up, down)
    hits = np.flatnonzero((stat >= design.upper) | (stat <= design.lower))
    low = None if design.mde is None else low_discordance(disagree, design.mde, design.alpha)
    if hits.size and (low is None or int(where[hits[0]]) <= low):
        j = int(hits[0])
        rejected = bool(stat[j] >= design.upper)
        better: Literal["a", "b"] | None = ("b" if up[j] >= down[j] else "a") if rejected else None
        return SequentialState(
            "reject_h0" if rejected else "accept_h0",
            int(where[j]) + 1,
            j + 1,
            int(wins[j]),
            float(stat[j]),
            better,
            "upper" if rejected else "lower",
        )
    if low is not None:
        j = int(np.searchsorted(where, low, side="right"))
        last = float(stat[j - 1]) if j else 0.0
        return SequentialState(
            "accept_h0", low + 1, j, int(wins[j - 1]) if j else 0, last, None, "discordance"
        )
    steps = where.size
    last = float(stat[-1]) if steps else 0.0
    if steps >= design.max_steps:
        return SequentialState("accept_h0", int(where[-1]) + 1, steps, int(wins[-1]), last, None, "max_steps")
    return SequentialState("continue", xa.size, steps, int(wins[-1]) if steps else 0, last)


def msprt_path(
    a: npt.ArrayLike, b: npt.ArrayLike, alpha: float = 0.05, mde: float | None = None
) -> SequentialState:
    """The always-valid alternative to :func:`paired_path`: stop when the beta-binomial
    mixture SPRT (:func:`assay.stats.discordant_msprt`) rejects H0, or, with ``mde``,
    when the low-discordance rule shows no difference of ``mde`` is possible.

    Valid however often the data are looked at and whatever decides the stopping, and it
    needs no design alternative; it has no futility stop besides low discordance, so a
    null difference runs to the budget (see benchmarks/adaptive.py).
    """
    xa = np.asarray(a, dtype=np.int64).reshape(-1)
    xb = np.asarray(b, dtype=np.int64).reshape(-1)
    if xa.shape != xb.shape:
        raise ValueError(f"a and b must pair up: {xa.size} vs {xb.size} outcomes")
    test = discordant_msprt(xb, xa, alpha=alpha)
    low = None if mde is None else low_discordance(xa != xb, mde, alpha)
    if test.stopped and (low is None or test.n - 1 <= low):
        n = test.n
        steps = int(np.count_nonzero(xa[:n] != xb[:n]))
        wins = int(np.count_nonzero(xb[:n] > xa[:n]))
        return SequentialState(
            "reject_h0", n, steps, wins, test.log_lr, "b" if 2 * wins > steps else "a", "upper"
        )
    n = xa.size if low is None else low + 1
    steps = int(np.count_nonzero(xa[:n] != xb[:n]))
    wins = int(np.count_nonzero(xb[:n] > xa[:n]))
    if low is not None:
        return SequentialState("accept_h0", n, steps, wins, test.log_lr, None, "discordance")
    return SequentialState("continue", n, steps, wins, test.log_lr)
