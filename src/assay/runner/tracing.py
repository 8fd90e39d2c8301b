"""Spans with timings, relative to the start of the trial."""

from __future__ import annotations

from time import perf_counter
from typing import Any

from ..core.transcript import Span, SpanKind


class Tracer:
    """Records the span tree of one trial. Span 0 is the trial itself."""

    __slots__ = ("spans", "t0")

    def __init__(self, name: str):
        self.t0 = perf_counter()
        self.spans: list[Span] = [Span(0, "trial", name, 0.0)]

    def now(self) -> float:
        return perf_counter() - self.t0

    def start(self, kind: SpanKind, name: str, parent: int = 0, **attributes: Any) -> Span:
        span = Span(len(self.spans), kind, name, self.now(), parent=parent, attributes=attributes)
        self.spans.append(span)
        return span

    def end(self, span: Span, error: str | None = None) -> None:
        span.end = self.now()
        if error is not None:
            span.error = error

    def close(self) -> float:
        root = self.spans[0]
        root.end = self.now()
        return root.end
