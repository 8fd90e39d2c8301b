"""The span tree of one trial, with timings relative to the start of the trial.

trial → turn → agent step → llm call / tool call, and turn → user (→ llm call);
grading is a child of the trial. A turn begins with each user message (or with the
agent's first step when the agent speaks first) and ends when the next one begins.
Spans are opened and closed in the order the trial runs them (one coroutine), so the
tree is kept with a stack of open spans: a new span's parent is the innermost open one.
"""

from __future__ import annotations

from time import perf_counter
from typing import Any

from ..core.transcript import Span, SpanKind


class Tracer:
    """Records the span tree of one trial. Span 0 is the trial itself."""

    __slots__ = ("_open", "_turn", "spans", "t0", "turns")

    def __init__(self, name: str):
        self.t0 = perf_counter()
        self.spans: list[Span] = [Span(0, "trial", name, 0.0)]
        self._open: list[Span] = [self.spans[0]]
        self._turn: Span | None = None
        self.turns = 0

    def now(self) -> float:
        return perf_counter() - self.t0

    def start(self, kind: SpanKind, name: str, parent: int | None = None, **attributes: Any) -> Span:
        """Open a span under ``parent`` (default: the innermost open span). A ``user``
        span begins a new turn; an ``agent`` span outside any turn begins one; a
        ``grader`` span closes the turn (grading is a child of the trial)."""
        if kind == "user" or (kind == "agent" and self._turn is None):
            self._begin_turn()
        elif kind == "grader":
            self._unwind(0)
            self._turn = None
        pid = self._open[-1].id if parent is None else parent
        span = Span(len(self.spans), kind, name, self.now(), parent=pid, attributes=attributes)
        self.spans.append(span)
        self._open.append(span)
        return span

    def add(self, kind: SpanKind, name: str, start: float, end: float, **attributes: Any) -> Span:
        """Record a span that already ended (times relative to the trial), under the
        innermost open span."""
        span = Span(len(self.spans), kind, name, start, end, self._open[-1].id, attributes)
        self.spans.append(span)
        return span

    def end(self, span: Span, error: str | None = None) -> None:
        """Close ``span`` (and any span opened inside it and left open)."""
        now = self.now()
        span.end = now
        if error is not None:
            span.error = error
        stack = self._open
        for i in range(len(stack) - 1, 0, -1):
            if stack[i] is span:
                self._unwind(i - 1, now)
                break

    def _unwind(self, depth: int, now: float | None = None) -> None:
        """Close every open span above ``depth`` in the stack."""
        now = self.now() if now is None else now
        while len(self._open) > depth + 1:
            top = self._open.pop()
            if top.end is None:
                top.end = now
            if top is self._turn:
                self._turn = None

    def _begin_turn(self) -> None:
        self._unwind(0)
        self.turns += 1
        span = Span(len(self.spans), "turn", f"turn {self.turns}", self.now(), parent=0)
        span.attributes["turn"] = self.turns
        self.spans.append(span)
        self._open.append(span)
        self._turn = span

    def close(self) -> float:
        """End the trial span (and whatever is still open); returns its duration."""
        self._unwind(0)
        root = self.spans[0]
        root.end = self.now()
        return root.end
