"""Gate verdicts: one result per check, and the run's pass/fail with its exit code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["pass", "fail", "skip"]
Kind = Literal["absolute", "relative", "high_risk", "harness_errors", "primary", "guardrail"]


@dataclass
class CheckResult:
    """The outcome of one check: its value against its threshold, in one sentence."""

    kind: Kind
    name: str
    status: Status
    reason: str
    value: float | None = None
    threshold: str = ""
    where: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "status": self.status,
            "value": self.value,
            "threshold": self.threshold,
            "reason": self.reason,
            "where": self.where,
            "details": self.details,
        }


@dataclass
class Verdict:
    """All checks of a policy on one run (and its baseline, if any)."""

    run_id: str
    agent: str
    baseline: str | None
    policy_name: str
    policy_version: str
    policy_hash: str
    policy_file: str
    checks: list[CheckResult]
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when no check failed (skipped checks are listed, not counted as passes)."""
        return not any(c.failed for c in self.checks)

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    @property
    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if c.failed]

    @property
    def skipped(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == "skip"]

    def counts(self) -> dict[str, int]:
        out = {"pass": 0, "fail": 0, "skip": 0}
        for c in self.checks:
            out[c.status] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "assay.gate/1",
            "passed": self.passed,
            "exit_code": self.exit_code,
            "run_id": self.run_id,
            "agent": self.agent,
            "baseline": self.baseline,
            "policy": {
                "name": self.policy_name,
                "version": self.policy_version,
                "hash": self.policy_hash,
                "file": self.policy_file,
            },
            "counts": self.counts(),
            "checks": [c.to_dict() for c in self.checks],
            "notes": self.notes,
        }
