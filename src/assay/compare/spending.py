"""The paired test at the discordance the data show, with an exact type-I error.

A paired comparison reads only discordant pairs (one side passed, the other failed).
Under H0 each is won by either side with probability ½; when the rates differ by δ and
the runs disagree on a share ψ of pairs, the better side wins ``θ₁ = ½ + δ/(2ψ)`` of
them. The SPRT powered for δ depends on ψ, which nobody knows before the runs: two
independent agents at 0.80 and 0.85 disagree on 29% of pairs, two related ones on 15%
or less, and a test designed for the wrong ψ loses its power (designed for 15%, true
29%: power 0.3 instead of 0.8) or runs far longer than needed.

So the test uses, at each discordant pair, the calibrated SPRT
(:func:`.sequential.design_paired`) for the discordance seen so far, ψ̂ = discordant /
pairs (on a grid, so designs are reused): it accepts H0 when that design would, and
rejects when the lead of one side, ``|wins − losses|``, reaches a cut chosen by *alpha
spending*. The test carries, by dynamic programming, the exact H0 distribution of wins
among the paths it has not stopped, given the discordances seen; at step m it may
reject on a tail of that distribution whose mass keeps the total rejected mass within
what the current design's own SPRT spends by step m (≤ alpha in all). Under H0 the
winners of discordant pairs are fair coins whatever the disagreements were, so given
the disagreements the procedure is a fixed test of fair coins whose rejection
probability the dynamic programme computed: its type-I error is at most alpha,
exactly, however ψ̂ moved. When ψ̂ is steady it is the calibrated SPRT itself.

Estimating ψ costs power, not type-I error: an underestimate makes the test expect a
larger win share and accept H0 too readily (power 0.76-0.79 for 0.8 asked, replayed over
1,000 seeds per scenario, benchmarks/README.md). So its designs are made for a type-II
error :data:`BETA_SHARE` of the one asked (:func:`design_power`: 0.83 for 0.8), which
brings the realised power back to about what was asked. Alpha spending is unchanged, so
the type-I error stays exact.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import ClassVar, Literal

import numpy as np
import numpy.typing as npt

from .sequential import (
    SequentialDesign,
    SequentialState,
    _steps,
    design_paired,
    fixed_steps,
    low_discordance,
    msprt_path,
    theta_for,
)

#: Discordant pairs read before the test may stop (it could not, or hardly, earlier).
BURN_IN = 10

#: The type-II error the designs are made for, as a share of the one asked: what
#: estimating ψ costs in power, measured at power 0.8 (benchmarks/README.md, "The
#: spending test designed for power 0.83").
BETA_SHARE = 0.85


def design_power(power: float, beta_share: float = BETA_SHARE) -> float:
    """The power the spending test's designs are made for when ``power`` is asked: the
    type-II error ``1 − power`` scaled by ``beta_share`` (0.8 → 0.83, 0.9 → 0.915)."""
    return round(1 - beta_share * (1 - power), 9)


def design_grid(psi: float, mde: float) -> float:
    """The grid value of discordance a design is made for: ψ to 0.01 up to 0.3, to
    0.025 above; never below 1.5·mde (ψ < mde means no difference of mde is possible,
    which the low-discordance rule shows)."""
    step = 0.01 if psi <= 0.3 else 0.025
    floor = math.ceil(1.5 * mde / 0.005 - 1e-9) * 0.005
    return round(min(1.0, max(round(psi / step) * step, floor)), 4)


@lru_cache(maxsize=256)
def spending_curve(design: SequentialDesign) -> npt.NDArray[np.float64]:
    """Cumulative probability under H0 (θ = ½) that ``design`` has rejected by step m,
    for m = 0..max_steps: how much alpha its SPRT spends by each step."""
    win, loss = _steps(design.p0, design.p1)
    mass = np.ones(1)
    spent = np.zeros(design.max_steps + 1)
    for m in range(1, design.max_steps + 1):
        nxt = np.zeros(m + 1)
        nxt[:m] += mass * 0.5
        nxt[1:] += mass * 0.5
        s = np.arange(m + 1)
        stat = np.maximum(s * win + (m - s) * loss, (m - s) * win + s * loss)
        rej = stat >= design.upper
        spent[m] = spent[m - 1] + nxt[rej].sum()
        nxt[rej | (stat <= design.lower)] = 0.0
        mass = nxt
    return spent


class Designs:
    """Calibrated paired designs by grid discordance, shared by every run of the
    process (a design takes seconds to calibrate; the same one serves many runs). A
    discordance the budget cannot serve maps to the reason.

    ``power`` is what the user asked; the designs are made for ``design_power``
    (:func:`design_power` with ``beta_share``; 1.0 makes them for ``power`` itself)."""

    _lock = threading.Lock()
    _made: ClassVar[dict[tuple[float, float, float, float, int], SequentialDesign | str]] = {}

    def __init__(
        self, mde: float, alpha: float, power: float, max_pairs: int, beta_share: float = BETA_SHARE
    ):
        self.mde, self.alpha, self.power, self.max_pairs = mde, alpha, power, max_pairs
        self.design_power = design_power(power, beta_share)

    def _key(self, psi: float) -> tuple[float, float, float, float, int]:
        theta = theta_for(self.mde, psi)
        steps = 3 * fixed_steps("paired", 0.5, theta, self.alpha, 1 - self.design_power)
        return (self.mde, self.alpha, self.design_power, psi, max(30, min(steps, self.max_pairs)))

    def get(self, psi: float) -> SequentialDesign | str | None:
        """The design for grid discordance ``psi``, why there is none, or None when it
        has not been made yet (see :meth:`make`)."""
        return self._made.get(self._key(psi))

    def make(self, psi: float) -> None:
        """Calibrate the design for ``psi`` (seconds: run it off the event loop)."""
        key = self._key(psi)
        if key in self._made:
            return
        try:
            made: SequentialDesign | str = design_paired(
                theta_for(self.mde, psi), self.alpha, self.design_power, key[-1], self.mde
            )
            spending_curve(made)
        except ValueError:
            made = (
                f"at the discordance the runs show (about {psi:.0%} of pairs), "
                f"detecting {100 * self.mde:g} pts "
                f"at power {self.power:g} needs more pairs than the {self.max_pairs} the baseline offers"
            )
        with self._lock:
            self._made[key] = made


@dataclass
class _Step:
    mass: npt.NDArray[np.float64]
    spent: float
    steps: int
    wins: int


class SpendingPaired:
    """The test of the module doc, fed aligned baseline/candidate outcomes as they grow.

    :meth:`read` processes the pairs it has not seen; when the design for the current
    discordance is not made yet it stops there and sets ``needs`` (the caller makes it
    with :meth:`Designs.make` and reads again).

    When the pairs available cannot power the SPRT at the discordance seen, it hands
    over (``fallback`` says why) to the always-valid mixture SPRT
    (:func:`.sequential.msprt_path`) at the alpha it has not spent: conditionally on
    the disagreements its rejection probability is at most that (Ville), so the total
    stays within alpha. It can then show a difference, not the absence of one.
    """

    def __init__(self, designs: Designs, burn_in: int = BURN_IN):
        self.designs, self.burn_in = designs, burn_in
        self.now = _Step(np.ones(1), 0.0, 0, 0)
        self.pairs = 0
        self.state = SequentialState("continue", 0, 0, 0, 0.0)
        self.needs: float | None = None
        self.fallback: str | None = None
        self.alpha_left = designs.alpha
        self.switch = 0
        self.design: SequentialDesign | None = None
        self.discordance: float | None = None

    def read(self, a: npt.ArrayLike, b: npt.ArrayLike) -> SequentialState:
        xa = np.asarray(a, dtype=np.int64).reshape(-1)
        xb = np.asarray(b, dtype=np.int64).reshape(-1)
        self.needs = None
        if self.state.decision != "continue":
            return self.state
        if self.fallback is not None:
            return self._mixture(xa, xb)
        d = self.designs
        low = low_discordance(xa != xb, d.mde, d.alpha)
        while self.pairs < xa.size:
            i = self.pairs
            if xa[i] != xb[i] and not self._step(i, int(xb[i] > xa[i])):
                if self.fallback is not None:
                    return self._mixture(xa, xb)
                break  # a design to make first
            if self.state.decision != "continue":
                return self.state
            if low is not None and i >= low:
                n = low + 1
                self.state = SequentialState(
                    "accept_h0", n, self.now.steps, self.now.wins, self.state.log_lr, None, "discordance"
                )
                return self.state
            self.pairs += 1
        if self.state.decision == "continue":
            n = self.now.steps
            self.state = SequentialState("continue", self.pairs, n, self.now.wins, self.state.log_lr)
        return self.state

    def _step(self, i: int, won: int) -> bool:
        """Take the discordant pair at index ``i``; False when it must wait."""
        now = self.now
        m, wins = now.steps + 1, now.wins + won
        nxt = np.zeros(m + 1)
        nxt[:m] += now.mass * 0.5
        nxt[1:] += now.mass * 0.5
        if m < self.burn_in:
            self.now = _Step(nxt, now.spent, m, wins)
            return True
        psi = design_grid(m / (i + 1), self.designs.mde)
        design = self.designs.get(psi)
        if design is None:
            self.needs = psi
            return False
        if isinstance(design, str):
            self.fallback, self.alpha_left, self.switch = design, self.designs.alpha - now.spent, i
            return False
        self.design, self.discordance = design, psi
        curve = spending_curve(design)
        allowed = curve[min(m, design.max_steps)] - now.spent
        cut = _cut(nxt, allowed)  # reject when |2·wins − m| ≥ cut
        s = np.arange(m + 1)
        lead = np.abs(2 * s - m)
        reject = lead >= cut
        win, loss = _steps(design.p0, design.p1)
        stat = np.maximum(s * win + (m - s) * loss, (m - s) * win + s * loss)
        accept = ((stat <= design.lower) | (m >= design.max_steps)) & ~reject
        spent = now.spent + float(nxt[reject].sum())
        nxt[reject | accept] = 0.0
        self.now = _Step(nxt, spent, m, wins)
        value = float(stat[wins])
        if reject[wins]:
            better: Literal["a", "b"] = "b" if 2 * wins > m else "a"
            self.state = SequentialState("reject_h0", i + 1, m, wins, value, better, "upper")
        elif accept[wins]:
            reason = "lower" if stat[wins] <= design.lower else "max_steps"
            self.state = SequentialState("accept_h0", i + 1, m, wins, value, None, reason)
        else:
            self.state = SequentialState("continue", i + 1, m, wins, value)
        return True

    def _mixture(self, xa: npt.NDArray[np.int64], xb: npt.NDArray[np.int64]) -> SequentialState:
        if self.alpha_left <= 1e-12:  # nothing left to reject with
            return SequentialState("continue", xa.size, self.now.steps, self.now.wins, 0.0)
        state = msprt_path(xa, xb, self.alpha_left, self.designs.mde)
        if state.decision != "continue":  # known from the pair where it took over
            self.state = replace(state, observations=max(state.observations, self.switch + 1))
            return self.state
        return state


def _cut(mass: npt.NDArray[np.float64], allowed: float) -> int:
    """The smallest lead c such that P(|2s − m| ≥ c) under ``mass`` is ≤ ``allowed``
    (m + 1 when even the largest lead would spend too much)."""
    m = mass.size - 1
    half = (m + 1) // 2  # pairs (j, m − j) with j < m − j
    left = np.cumsum(mass[:half])
    right = np.cumsum(mass[::-1][:half])
    tails = left + right  # tails[j]: mass of s ≤ j or s ≥ m − j, i.e. lead ≥ m − 2j
    fits = np.flatnonzero(tails <= allowed + 1e-15)
    if fits.size == 0:
        return m + 1
    j = int(fits[-1])
    if j == half - 1 and m % 2 == 0 and mass.sum() <= allowed + 1e-15:
        return 0  # everything, the centre too
    return m - 2 * j
