"""``replay``: a run of a recorded conversation made the recorded tool calls, in order
(docs/traces.md). Fails at the first call that differs, naming it."""

from __future__ import annotations

from typing import Any

from ..core.results import GradeResult, Outcome
from ..core.task import Task
from ..core.transcript import Transcript
from ..envs.replay import DivergenceReport, divergence
from .base import Grader, Params


def calls_made(transcript: Transcript) -> list[tuple[str, dict[str, Any], str]]:
    """Every tool call of a trial, agent's and user's, in order: (name, arguments, caller)."""
    return [
        (s.name, s.attributes.get("args") or {}, str(s.attributes.get("caller", "agent")))
        for s in transcript.spans
        if s.kind == "tool"
    ]


def replay_report(task: Task, transcript: Transcript) -> DivergenceReport | None:
    """How a trial's calls compare with its task's recording (None: not a replay task)."""
    if task.replay is None:
        return None
    return divergence(task.replay, calls_made(transcript))


class ReplayGrader(Grader[Params]):
    kind = "replay"

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        report = replay_report(task, transcript)
        if report is None:
            return self.skip("the task has no recorded conversation (replay)")
        metrics = {
            "recorded_calls": float(report.recorded),
            "calls": float(report.made),
            "unrecorded_calls": float(report.unrecorded),
            "unused_recorded_calls": float(report.unused),
        }
        if report.first is None:
            return self.result(
                True, f"the {report.made} recorded call(s) were made in order", metrics=metrics
            )
        metrics["first_divergence"] = float(report.first.index + 1)
        return self.result(
            False,
            f"diverged from the recording at {report.first.describe()}",
            category="replay_divergence",
            metrics=metrics,
        )
