"""What ``assay regrade`` reports for a tau2 results file (:class:`RegradeReport`): the
replayed tool outputs that differ from the recorded ones, and how often assay's verdicts,
and the port's tau2 evaluator's, agree with the recorded verdicts."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

COMPONENTS = ("db", "env_assertions", "communicate", "actions", "reward")


@dataclass(frozen=True)
class ToolMismatch:
    """A replayed tool output that differs from the recorded one."""

    simulation_id: str
    task_id: str
    message_index: int
    """Index of the tool message in the recorded simulation."""
    tool: str
    requestor: str
    expected: str
    got: str | None
    """None: the call was never replayed (the conversation went another way)."""


@dataclass
class Agreement:
    """How often assay's verdict equals the recorded one, for one component."""

    compared: int = 0
    agreed: int = 0
    disagreements: list[str] = field(default_factory=list)
    """``simulation id: what differs``."""

    def add(self, simulation: str, ours: Any, recorded: Any) -> None:
        """One verdict; a list of checks (env assertions, communicate, actions) counts
        check by check."""
        if isinstance(recorded, list):
            ours_list = ours if isinstance(ours, list) else []
            if len(ours_list) != len(recorded):
                self.compared += len(recorded) or 1
                self.disagreements.append(f"{simulation}: assay {ours!r}, recorded {recorded!r}")
                return
            for i, (a, b) in enumerate(zip(ours_list, recorded, strict=True)):
                self.compared += 1
                if a == b:
                    self.agreed += 1
                else:
                    self.disagreements.append(f"{simulation}: check {i}: assay {a!r}, recorded {b!r}")
            return
        self.compared += 1
        if ours == recorded:
            self.agreed += 1
        else:
            self.disagreements.append(f"{simulation}: assay {ours!r}, recorded {recorded!r}")

    @property
    def rate(self) -> float | None:
        return self.agreed / self.compared if self.compared else None


@dataclass
class RegradeReport:
    """What ``assay regrade`` found for one results file."""

    path: Path
    domain: str
    model: str
    run_id: str
    store: str
    simulations: int
    tool_outputs: int = 0
    mismatches: list[ToolMismatch] = field(default_factory=list)
    flow: list[str] = field(default_factory=list)
    """Simulations whose replayed conversation did not follow the recording."""
    agreement: dict[str, Agreement] = field(default_factory=lambda: {c: Agreement() for c in COMPONENTS})
    evaluator: dict[str, Agreement] = field(default_factory=lambda: {c: Agreement() for c in COMPONENTS})
    """The port's tau2 evaluator on the same simulations (the cross-check)."""
    needs_judge: int = 0
    """Simulations whose reward basis has NL_ASSERTION (reward not compared without a judge)."""
    mean_reward: float | None = None
    recorded_mean_reward: float | None = None

    def to_dict(self) -> dict[str, Any]:
        def agreement(table: dict[str, Agreement]) -> dict[str, Any]:
            return {
                name: {"compared": a.compared, "agreed": a.agreed, "disagreements": a.disagreements}
                for name, a in table.items()
            }

        return {
            "schema": "assay.regrade/1",
            "file": str(self.path),
            "format": "tau2",
            "domain": self.domain,
            "model": self.model,
            "run_id": self.run_id,
            "store": self.store,
            "simulations": self.simulations,
            "tool_outputs": self.tool_outputs,
            "mismatches": [m.__dict__ for m in self.mismatches],
            "flow": self.flow,
            "agreement": agreement(self.agreement),
            "evaluator": agreement(self.evaluator),
            "needs_judge": self.needs_judge,
            "mean_reward": self.mean_reward,
            "recorded_mean_reward": self.recorded_mean_reward,
        }


__all__ = ["COMPONENTS", "Agreement", "RegradeReport", "ToolMismatch"]
