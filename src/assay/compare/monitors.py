"""The sequential tests of an adaptive run, fed outcomes in dispatch order
(:mod:`.dispatch`): the rate test, and the paired test in its three forms."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .dispatch import Outcome, Reading
from .sequential import (
    SequentialDesign,
    SequentialState,
    design_paired,
    msprt_path,
    paired_path,
    rate_path,
    theta_for,
)
from .spending import Designs, SpendingPaired


def _needed(state: SequentialState, positions: Sequence[int]) -> int | None:
    """Trials of the dispatch order up to the observation that decided."""
    if state.decision == "continue" or state.observations == 0:
        return None
    return positions[state.observations - 1] + 1


class RateMonitor:
    """One-sided SPRT of a success rate over the counted trials, in dispatch order."""

    prepare: Callable[[], None] | None = None

    def __init__(self, design: SequentialDesign):
        self.design = design

    def read(self, outcomes: Sequence[Outcome]) -> Reading:
        positions = [i for i, o in enumerate(outcomes) if o is not None]
        state = rate_path([o for o in outcomes if o is not None], self.design)
        return Reading(state, _needed(state, positions))


class PairedMonitor:
    """Paired test of candidate against baseline over pairs in dispatch order.

    ``baseline[i]``: the baseline's outcome of the i-th trial of the dispatch order.
    ``method="sprt"`` with ``discordance=None`` (the default): the SPRT at the
    discordance the data show, exact by alpha spending (:mod:`.spending`), its designs
    made for a power raised to pay for estimating the discordance
    (:func:`.spending.design_power`); with
    ``discordance``: the calibrated SPRT designed for it; ``method="msprt"``: the
    always-valid mixture SPRT (no design, no futility stop). All also stop when an
    always-valid test shows the runs disagree on fewer than ``mde`` of pairs.
    """

    prepare: Callable[[], None] | None = None

    def __init__(
        self,
        baseline: Sequence[int],
        *,
        mde: float,
        alpha: float,
        power: float,
        method: str = "sprt",
        discordance: float | None = None,
    ):
        self.baseline, self.mde, self.alpha, self.method = baseline, mde, alpha, method
        self.power = power
        self.design: SequentialDesign | None = None
        self.spending: SpendingPaired | None = None
        if method == "sprt" and discordance is not None:
            self.design = design_paired(theta_for(mde, discordance), alpha, power, mde=mde)
        elif method == "sprt":
            self.spending = SpendingPaired(Designs(mde, alpha, power, len(baseline)))
        self.a: list[int] = []
        self.b: list[int] = []
        self.positions: list[int] = []
        self.seen = 0

    @property
    def discordance(self) -> float | None:
        """The discordance the test's current design is made for (spending test)."""
        return None if self.spending is None else self.spending.discordance

    @property
    def design_power(self) -> float | None:
        """The power the test's designs are made for (None for the mixture SPRT): above
        the power asked for the spending test, the power asked with ``discordance``."""
        if self.spending is not None:
            return self.spending.designs.design_power
        return None if self.method == "msprt" else self.power

    @property
    def fallback(self) -> str | None:
        """Why the spending test handed over to the mixture SPRT, if it did."""
        return None if self.spending is None else self.spending.fallback

    def read(self, outcomes: Sequence[Outcome]) -> Reading:
        for i in range(self.seen, len(outcomes)):
            o = outcomes[i]
            if o is not None:
                self.a.append(self.baseline[i])
                self.b.append(o)
                self.positions.append(i)
        self.seen = len(outcomes)
        consumed = None
        if self.spending is not None:
            state = self.spending.read(self.a, self.b)
            self.design = self.spending.design
            psi = self.spending.needs
            if psi is not None:  # it stopped before pair `spending.pairs` to have a design made
                designs = self.spending.designs
                self.prepare = lambda: designs.make(psi)
                consumed = self.positions[self.spending.pairs]
        elif self.design is not None:
            state = paired_path(self.a, self.b, self.design)
        else:
            state = msprt_path(self.a, self.b, self.alpha, self.mde)
        return Reading(state, _needed(state, self.positions), consumed)
