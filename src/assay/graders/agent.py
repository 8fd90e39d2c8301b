"""Grader kinds over the agent's tool calls: ``trajectory``, ``tool_selection`` and
``error_recovery`` (the pure metrics live in :mod:`.trajectory`)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..core.results import GradeResult, Outcome
from ..core.task import Action, Task
from ..core.transcript import Transcript
from .base import Grader, Params, PathKey, named_tools
from .trajectory import (
    ArgsMode,
    Mode,
    error_recovery,
    parameter_accuracy,
    tool_selection,
    trajectory_match,
    unnecessary_call_rate,
)


class TrajectoryParams(Params):
    mode: Mode = "strict"
    args: ArgsMode = "exact"
    reference: list[Action] | None = Field(None, description="default: the task's reference actions")
    ignore: list[str] = Field(default_factory=list, description="tools left out on both sides")
    succeeded_only: bool = Field(False, description="compare only the agent's calls that succeeded")


class TrajectoryGrader(Grader[TrajectoryParams]):
    """The agent's tool-call trajectory against the reference (:func:`trajectory_match`)."""

    kind = "trajectory"
    Params = TrajectoryParams

    @classmethod
    def coerce(cls, raw: Any) -> Any:
        return {"mode": raw} if isinstance(raw, str) else ({} if raw is None else raw)

    @classmethod
    def tool_refs(cls, params: TrajectoryParams) -> list[tuple[PathKey, str]]:
        return named_tools(params, "reference", "ignore")

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        p: TrajectoryParams = self.params
        reference = p.reference if p.reference is not None else task.reference.actions
        if not reference:
            return self.skip("no reference trajectory (give reference or task.reference.actions)")
        results = transcript.tool_results()
        calls = [
            c
            for c in transcript.tool_calls()
            if c.name not in p.ignore
            and not (p.succeeded_only and (c.id not in results or results[c.id].error))
        ]
        ref = [a for a in reference if a.name not in p.ignore]
        ok = trajectory_match(calls, ref, p.mode, p.args)
        seq = " -> ".join(c.name for c in calls) or "no calls"
        want = " -> ".join(a.name for a in ref)
        return self.result(
            ok,
            f"trajectory {'matches' if ok else 'does not match'} the reference ({p.mode}, args {p.args}): "
            f"{seq}" + ("" if ok else f"; expected {want}"),
            category=None if ok else "wrong_trajectory",
            metrics={"trajectory_match": float(ok), "tool_calls": float(len(calls))},
        )


class ToolSelectionParams(Params):
    necessary: list[str] | None = Field(None, description="default: task.reference.necessary_tools()")
    min_precision: float = Field(0.0, ge=0, le=1)
    min_recall: float = Field(1.0, ge=0, le=1)
    exact_set: bool = False
    min_parameter_accuracy: float | None = Field(None, ge=0, le=1)
    max_unnecessary_rate: float | None = Field(None, ge=0, le=1)


class ToolSelectionGrader(Grader[ToolSelectionParams]):
    """Tool selection precision / recall / exact set, parameter accuracy and unnecessary
    call rate against the reference; passes when the configured bounds hold."""

    kind = "tool_selection"
    Params = ToolSelectionParams

    @classmethod
    def tool_refs(cls, params: ToolSelectionParams) -> list[tuple[PathKey, str]]:
        return named_tools(params, "necessary")

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        p: ToolSelectionParams = self.params
        needed = set(p.necessary) if p.necessary is not None else task.reference.necessary_tools()
        if not needed:
            return self.skip("no necessary tools (give necessary or a task reference)")
        calls = transcript.tool_calls()
        sel = tool_selection(calls, needed)
        metrics: dict[str, float] = {"tool_exact_set": float(sel.exact_set)}
        if sel.precision is not None:
            metrics["tool_precision"] = sel.precision
        if sel.recall is not None:
            metrics["tool_recall"] = sel.recall
        acc = parameter_accuracy(calls, task.reference.actions)
        if acc is not None:
            metrics["parameter_accuracy"] = acc
        extra = unnecessary_call_rate(calls, task.reference.actions) if task.reference.actions else None
        if extra is not None:
            metrics["unnecessary_call_rate"] = extra
        problems = []
        if (sel.recall or 0.0) < p.min_recall:
            problems.append(
                f"recall {sel.recall or 0:.2f} < {p.min_recall:g} (missing {', '.join(sel.missing_tools)})"
            )
        if (sel.precision or 0.0) < p.min_precision:
            problems.append(f"precision {sel.precision or 0:.2f} < {p.min_precision:g}")
        if p.exact_set and not sel.exact_set:
            problems.append(
                f"tool set differs (extra {list(sel.extra_tools)}, missing {list(sel.missing_tools)})"
            )
        if (
            p.min_parameter_accuracy is not None
            and (acc if acc is not None else 1.0) < p.min_parameter_accuracy
        ):
            problems.append(f"parameter accuracy {acc:.2f} < {p.min_parameter_accuracy:g}")
        if p.max_unnecessary_rate is not None and (extra or 0.0) > p.max_unnecessary_rate:
            problems.append(f"unnecessary call rate {extra:.2f} > {p.max_unnecessary_rate:g}")
        if problems:
            return self.result(False, "; ".join(problems), category="tool_selection", metrics=metrics)
        return self.result(True, f"tool selection within bounds ({len(calls)} calls)", metrics=metrics)


class ErrorRecoveryParams(Params):
    handover_tools: list[str] | None = Field(None, description="default: the domain's tools named transfer*")
    min_rate: float = Field(1.0, ge=0, le=1)


class ErrorRecoveryGrader(Grader[ErrorRecoveryParams]):
    """After each tool error: fixed / alternative / handover / unrecovered, counted
    separately; passes when the recovery rate reaches ``min_rate``. Skipped when no
    tool call failed (there was nothing to recover from)."""

    kind = "error_recovery"
    Params = ErrorRecoveryParams

    @classmethod
    def tool_refs(cls, params: ErrorRecoveryParams) -> list[tuple[PathKey, str]]:
        return named_tools(params, "handover_tools")

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        p: ErrorRecoveryParams = self.params
        names = self.domain.toolkit.names()
        handover = p.handover_tools if p.handover_tools is not None else [n for n in names if "transfer" in n]
        report = error_recovery(transcript, handover, self.domain.toolkit.write_tools("agent"))
        if not report.events:
            return self.skip("no tool call failed: nothing to recover from")
        counts = report.counts
        rate = report.rate or 0.0
        metrics = {"tool_errors": float(len(report.events)), "error_recovery_rate": rate}
        metrics.update({f"recovery_{k}": float(v) for k, v in counts.items()})
        summary = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
        ok = rate >= p.min_rate - 1e-12
        return self.result(
            ok,
            f"{len(report.events)} tool error(s): {summary}",
            score=rate,
            category=None if ok else "no_error_recovery",
            metrics=metrics,
        )
