"""A trial as a person reads it: steps of the conversation (user, agent, tool calls with
their results), the span timeline, the state diff and every grader's verdict placed next
to the step it concerns.

Where a verdict belongs is found by these rules, in order:

1. a grader may name the step itself: ``metrics["step"]`` = index of the message;
2. ``state`` graders belong to the state diff;
3. action/trajectory graders belong to the first tool call whose name their reason
   mentions (``"no confirmation before refund_order"`` → the ``refund_order`` call);
4. graders of what was said (communicate, text, judge, schema) belong to the agent's
   last message;
5. anything else is shown with the verdicts at the end.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..core.results import GradeResult, TrialResult
from ..core.transcript import Span, Transcript

_SAID_KINDS = {"communicate", "text", "judge", "schema", "pairwise", "rubric"}
_ACTION_KINDS = {"actions", "action", "trajectory", "process", "tool"}


@dataclass
class Verdict:
    """One grader's verdict, with where it was placed (``step`` index, ``"diff"`` or None)."""

    grader: str
    kind: str
    status: str  # pass | fail | skipped | none
    reason: str
    category: str | None = None
    score: float | None = None
    gating: bool = True
    veto: bool = False
    needs_review: bool = False
    place: int | str | None = None


@dataclass
class Step:
    """One readable step: a user or agent message, or one tool call with its result."""

    index: int
    role: str  # user | agent | tool | system
    text: str = ""
    tool: str | None = None
    args: str | None = None
    result: str | None = None
    error: bool = False
    caller: str = "agent"
    duration_ms: float | None = None
    tokens: int | None = None
    message_index: int = 0
    verdicts: list[Verdict] = field(default_factory=list)


@dataclass
class TimelineRow:
    """A span on the timeline: offsets and widths in percent of the trial's duration."""

    kind: str
    name: str
    start: float
    duration_ms: float
    left_pct: float
    width_pct: float
    depth: int
    tokens: int | None = None
    error: str | None = None


@dataclass
class TranscriptView:
    """Everything the transcript screen shows for one trial."""

    run_id: str
    task_id: str
    trial_index: int
    seed: int
    reward: int | None
    termination: str
    latency_s: float
    cost_usd: float | None
    tokens: int | None
    root_cause: str | None
    category: str | None
    outcome_error: str | None
    steps: list[Step]
    timeline: list[TimelineRow]
    diff: list[dict[str, Any]]
    verdicts: list[Verdict]
    has_transcript: bool

    @property
    def status(self) -> str:
        return "excluded" if self.reward is None else "pass" if self.reward == 1 else "fail"

    def verdicts_at(self, place: int | str | None) -> list[Verdict]:
        return [v for v in self.verdicts if v.place == place]


def _span_tokens(span: Span) -> int | None:
    attrs = span.attributes
    total = 0
    found = False
    for key in ("input_tokens", "output_tokens", "tokens"):
        value = attrs.get(key)
        if isinstance(value, (int, float)):
            total += int(value)
            found = True
    usage = attrs.get("usage")
    if isinstance(usage, dict):
        for key in ("input_tokens", "output_tokens"):
            if isinstance(usage.get(key), (int, float)):
                total += int(usage[key])
                found = True
    return total if found else None


def _pretty(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=1 if len(json.dumps(value)) > 80 else None)
    except (TypeError, ValueError):
        return str(value)


def _pretty_result(content: str) -> str:
    """Short JSON results stay on one (wrapped) line; long ones are indented."""
    text = content.strip()
    if text[:1] in "{[" and len(text) > 600:
        try:
            return json.dumps(json.loads(text), ensure_ascii=False, indent=1)
        except ValueError:
            return content
    return content


def _steps(transcript: Transcript) -> list[Step]:
    spans = transcript.spans
    queues: dict[str, list[Span]] = {
        "agent": [s for s in spans if s.kind == "agent"],
        "user": [s for s in spans if s.kind == "user"],
        "tool": [s for s in spans if s.kind == "tool" and s.attributes.get("caller", "agent") == "agent"],
        "user_tool": [s for s in spans if s.kind == "tool" and s.attributes.get("caller") == "user"],
    }
    results = transcript.tool_results()
    steps: list[Step] = []

    def take(kind: str) -> Span | None:
        queue = queues[kind]
        return queue.pop(0) if queue else None

    def ms(span: Span | None) -> float | None:
        return None if span is None or span.end is None else round(1000 * span.duration, 3)

    for i, m in enumerate(transcript.messages):
        if m.role in ("user", "system"):
            span = take("user") if m.role == "user" else None
            if m.content or not m.tool_calls:
                steps.append(Step(len(steps), m.role, m.content, duration_ms=ms(span), message_index=i))
            for call in m.tool_calls:  # dual control: the user's own tools, shown as theirs
                tspan = take("user_tool")
                res = results.get(call.id)
                steps.append(
                    Step(
                        len(steps),
                        "tool",
                        tool=call.name,
                        args=_pretty(call.arguments),
                        result=_pretty_result(res.content) if res is not None else None,
                        error=bool(res.error) if res is not None else False,
                        caller="user",
                        duration_ms=ms(tspan),
                        message_index=i,
                    )
                )
        elif m.role == "assistant":
            span = take("agent")
            if m.content or not m.tool_calls:
                steps.append(
                    Step(
                        len(steps),
                        "agent",
                        m.content,
                        duration_ms=ms(span),
                        tokens=_span_tokens(span) if span else None,
                        message_index=i,
                    )
                )
            for call in m.tool_calls:
                tspan = take("tool")
                res = results.get(call.id)
                steps.append(
                    Step(
                        len(steps),
                        "tool",
                        tool=call.name,
                        args=_pretty(call.arguments),
                        result=_pretty_result(res.content) if res is not None else None,
                        error=bool(res.error) if res is not None else False,
                        duration_ms=ms(tspan),
                        message_index=i,
                    )
                )
    return steps


def _timeline(transcript: Transcript) -> list[TimelineRow]:
    spans = transcript.spans
    if not spans:
        return []
    total = max((s.end or s.start) for s in spans) or 1e-9
    by_id = {s.id: s for s in spans}

    def depth(s: Span) -> int:
        d, seen = 0, set()
        while s.parent is not None and s.parent in by_id and s.parent not in seen:
            seen.add(s.parent)
            s = by_id[s.parent]
            d += 1
        return d

    rows = []
    for s in spans:
        end = s.end if s.end is not None else s.start
        rows.append(
            TimelineRow(
                kind=s.kind,
                name=s.name,
                start=round(s.start, 6),
                duration_ms=round(1000 * (end - s.start), 3),
                left_pct=round(100 * s.start / total, 3),
                width_pct=round(max(0.3, 100 * (end - s.start) / total), 3),
                depth=depth(s),
                tokens=_span_tokens(s),
                error=s.error,
            )
        )
    return rows


def _status(g: GradeResult) -> str:
    if g.skipped:
        return "skipped"
    return "none" if g.passed is None else "pass" if g.passed else "fail"


def _place(g: GradeResult, steps: list[Step]) -> int | str | None:
    step = g.metrics.get("step")
    if isinstance(step, (int, float)):
        for s in steps:
            if s.message_index == int(step):
                return s.index
    kind = (g.kind or "").lower()
    if kind == "state" or g.grader == "state":
        return "diff"
    if kind in _ACTION_KINDS or g.grader in _ACTION_KINDS:
        for s in steps:
            if s.role == "tool" and s.tool and re.search(rf"\b{re.escape(s.tool)}\b", g.reason):
                return s.index
        return None
    if kind in _SAID_KINDS or g.grader in _SAID_KINDS:
        agent = [s for s in steps if s.role == "agent" and s.text]
        return agent[-1].index if agent else None
    return None


def transcript_view(result: TrialResult, transcript: Transcript | None) -> TranscriptView:
    """Build the readable view of one trial (``transcript`` may be missing)."""
    steps = _steps(transcript) if transcript is not None else []
    verdicts = []
    for g in result.grades:
        v = Verdict(
            grader=g.grader,
            kind=g.kind,
            status=_status(g),
            reason=g.reason,
            category=g.category,
            score=g.score,
            gating=g.gating,
            veto=g.veto,
            needs_review=g.needs_review,
            place=_place(g, steps),
        )
        verdicts.append(v)
        if isinstance(v.place, int):
            steps[v.place].verdicts.append(v)
    outcome = result.outcome
    tokens = (
        None
        if result.input_tokens is None and result.output_tokens is None
        else (result.input_tokens or 0) + (result.output_tokens or 0)
    )
    return TranscriptView(
        run_id=result.run_id,
        task_id=result.task_id,
        trial_index=result.trial_index,
        seed=result.seed,
        reward=result.reward,
        termination=result.termination,
        latency_s=result.latency_s,
        cost_usd=result.cost_usd,
        tokens=tokens,
        root_cause=result.root_cause,
        category=result.error_category,
        outcome_error=outcome.error if outcome else None,
        steps=steps,
        timeline=_timeline(transcript) if transcript is not None else [],
        diff=list(outcome.diff) if outcome else [],
        verdicts=verdicts,
        has_transcript=transcript is not None,
    )
