"""What an adaptive run reports: the decision, the trials it ran and needed, and the
saving against the fixed-sample design of the same alpha and power
(``assay.adaptive/2``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..runner.stored import Run
from .dispatch import RoundReport
from .fixed import FixedDesign
from .sequential import SequentialDesign, SequentialState

SCHEMA = "assay.adaptive/2"


@dataclass
class AdaptiveResult:
    """The stored run, the test, where it stopped, and what that cost.

    ``trials_run``: trials the run executed (what you paid for); ``trials_needed``:
    trials of the dispatch order up to the one that decided (what the decision read;
    the rest were in flight when it came); ``fixed``: the fixed-sample design of the
    same alpha and power, and ``saved`` the share of its trials the run did not spend.
    ``power``: the power asked; ``design_power``: the power the test was designed for
    (higher for the paired test at the discordance the data show, which pays so for
    estimating it; none for the mixture SPRT).
    """

    run: Run
    mode: Literal["paired", "rate"]
    method: str
    state: SequentialState
    trials_run: int
    trials_needed: int
    budget: int
    round_size: int
    mde: float
    power: float
    design_power: float | None = None
    rounds: list[RoundReport] = field(default_factory=list)
    design: SequentialDesign | None = None
    fixed: FixedDesign | None = None
    verdict: str = "undecided"
    line: str = ""
    baseline: str | None = None
    always_valid_p: float | None = None
    discordance_design: float | None = None
    discordance_given: bool = False
    fallback: str | None = None
    pairs: int | None = None
    discordant: int | None = None

    @property
    def spent(self) -> str:
        if self.state.decision == "continue":
            return f"{self.trials_run} trials run"
        return f"decided after {self.trials_needed} trials, {self.trials_run} run"

    @property
    def saved(self) -> float | None:
        """Share of the fixed design's trials not run (negative: more were run); none
        when the run did not decide."""
        if self.fixed is None or not self.fixed.n or self.state.decision == "continue":
            return None
        return 1.0 - self.trials_run / self.fixed.n

    @property
    def saved_needed(self) -> float | None:
        """The same, counting only the trials the decision needed."""
        if self.fixed is None or not self.fixed.n or self.state.decision == "continue":
            return None
        return 1.0 - self.trials_needed / self.fixed.n

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "run_id": self.run.run_id,
            "baseline": self.baseline,
            "mode": self.mode,
            "method": self.method,
            "verdict": self.verdict,
            "line": self.line,
            "trials_run": self.trials_run,
            "trials_needed": self.trials_needed,
            "trials_after_decision": self.trials_run - self.trials_needed,
            "budget": self.budget,
            "round_size": self.round_size,
            "fixed_n": None if self.fixed is None else self.fixed.n,
            "fixed_design": None if self.fixed is None else self.fixed.basis,
            "saved": self.saved,
            "saved_needed": self.saved_needed,
            "mde": self.mde,
            "power": self.power,
            "design_power": self.design_power,
            "discordance": None
            if self.mode == "rate"
            else {
                "design": self.discordance_design,
                "given": self.discordance_given,
                "pairs": self.pairs,
                "discordant": self.discordant,
                "observed": (self.discordant or 0) / self.pairs if self.pairs else None,
            },
            "fallback": self.fallback,
            "always_valid_p": self.always_valid_p,
            "design": None if self.design is None else self.design.to_dict(),
            "state": self.state.to_dict(),
            "rounds": [{"round": r.round, "trials": r.trials, **r.state.to_dict()} for r in self.rounds],
        }


def verdict_paired(state: SequentialState, mde: float, spent: str) -> tuple[str, str]:
    if state.decision == "reject_h0":
        side = "better" if state.better == "b" else "worse"
        won = state.successes if state.better == "b" else state.steps - state.successes
        return side, (
            f"the candidate is {side} than the baseline: it {'won' if side == 'better' else 'lost'} "
            f"{won} of {state.steps} discordant pairs ({spent})"
        )
    if state.decision == "accept_h0":
        why = (
            f"they disagree on only {state.steps} of {state.observations} pairs"
            if state.reason == "discordance"
            else f"{state.successes} of {state.steps} discordant pairs won by the candidate"
        )
        return (
            "no_difference",
            f"no difference of {100 * mde:.0f} pts or more between the runs: {why} ({spent})",
        )
    return "undecided", f"the budget is spent ({spent}); neither boundary was reached"


def verdict_rate(state: SequentialState, p0: float, p1: float, spent: str) -> tuple[str, str]:
    rate = f"{state.successes}/{state.steps} trials passed"
    if state.decision == "reject_h0":
        return "above", f"the success rate is above {p0:.0%} ({rate}; {spent})"
    if state.decision == "accept_h0":
        return "below", f"the success rate is not above {p0:.0%}, it is short of {p1:.0%} ({rate}; {spent})"
    return "undecided", f"the budget is spent ({rate}; {spent})"
