"""The time budget model calls run under (a trial's), and what those calls are doing.

A trial's time limit measures the agent, not the model endpoint. So, while a
:class:`TrialClock` is installed (:func:`use_clock`):

- time spent waiting because an endpoint failed (failed attempts, backoff,
  ``Retry-After``) or in the rate limiter is the model's: it pushes the deadline back;
- each request's timeout is capped by the time that remains, so an endpoint that does
  not answer fails as the model's fault before the trial's time runs out;
- should the limit be reached anyway while a call is in flight, :meth:`TrialClock.busy`
  says which call and in what state, so the trial is not blamed on the agent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass


@dataclass
class CallState:
    """One model call in flight."""

    model: str
    role: str
    attempts: int = 0
    state: str = "queued"
    """``queued`` (rate limits), ``requesting``, ``waiting`` (backoff / Retry-After)."""
    last_error: str | None = None

    def describe(self) -> str:
        what = f"{self.role} model {self.model}"
        if self.state == "waiting":
            return f"{what}, waiting to retry after {self.attempts} failed attempt(s) ({self.last_error})"
        if self.state == "queued":
            return f"{what}, waiting for the rate limiter"
        if self.last_error is not None:
            failed = self.attempts - 1
            return f"{what}, attempt {self.attempts} unanswered after {failed} failure(s) ({self.last_error})"
        return f"{what}, no answer to its request"


class TrialClock:
    """The deadline of the work under a time limit, pushed back by the model's waits.

    ``limit_s`` None means no limit (nothing is capped). :meth:`bind` attaches the
    ``asyncio.Timeout`` that enforces the limit, so that extending the deadline
    reschedules it; without one the clock keeps its own deadline (caps still apply)."""

    def __init__(self, limit_s: float | None, *, margin_s: float | None = None):
        self.limit_s = limit_s
        self.margin_s = margin_s if margin_s is not None else min(0.5, 0.1 * (limit_s or 0.0))
        self.extended_s = 0.0
        self._timeout: asyncio.Timeout | None = None
        self._deadline: float | None = None
        self._calls: dict[int, CallState] = {}
        self.cut: list[str] = []
        """The calls a cancellation (the time limit) interrupted."""

    @staticmethod
    def _now() -> float:
        try:
            return asyncio.get_running_loop().time()
        except RuntimeError:
            return time.monotonic()

    def bind(self, timeout: asyncio.Timeout | None = None) -> None:
        """Start the clock (and attach the timeout that enforces it)."""
        self._timeout = timeout
        when = timeout.when() if timeout is not None else None
        if when is None and self.limit_s is not None:
            when = self._now() + self.limit_s
        self._deadline = when

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None: no limit, or not started)."""
        if self._deadline is None:
            return None
        return self._deadline - self._now()

    def extend(self, seconds: float) -> None:
        """Push the deadline back by ``seconds`` spent waiting on a model."""
        if seconds <= 0 or self._deadline is None:
            return
        self._deadline += seconds
        self.extended_s += seconds
        if self._timeout is not None and self._timeout.when() is not None:
            self._timeout.reschedule(self._deadline)

    def request_timeout(self, configured: float | None) -> tuple[float | None, bool]:
        """The timeout of the next request, and whether the trial's remaining time (not
        ``configured``) set it."""
        left = self.remaining()
        if left is None:
            return configured, False
        capped = max(0.0, left - self.margin_s)
        if configured is not None and configured <= capped:
            return configured, False
        return capped, True

    @contextmanager
    def call(self, model: str, role: str) -> Iterator[CallState]:
        """Track one model call for :meth:`busy`."""
        state = CallState(model, role)
        key = id(state)
        self._calls[key] = state
        try:
            yield state
        except asyncio.CancelledError:  # the time limit (or an interrupt) cut it: remember it
            self.cut.append(state.describe())
            raise
        finally:
            self._calls.pop(key, None)

    def busy(self) -> str | None:
        """What the model calls in flight (or cut by a cancellation) were doing; None
        when there was none."""
        described = [c.describe() for c in self._calls.values()] + self.cut
        return "; ".join(described) if described else None


_clock: ContextVar[TrialClock | None] = ContextVar("assay_llm_clock", default=None)


class _ClockScope:
    """The context manager of :func:`use_clock` (a class: one per trial)."""

    __slots__ = ("_token", "clock")

    def __init__(self, clock: TrialClock | None):
        self.clock = clock
        self._token: Token[TrialClock | None] | None = None

    def __enter__(self) -> TrialClock | None:
        self._token = _clock.set(self.clock)
        return self.clock

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _clock.reset(self._token)


def use_clock(clock: TrialClock | None) -> _ClockScope:
    """Install ``clock`` for the model calls made inside the block (and in tasks created
    inside it)."""
    return _ClockScope(clock)


def current_clock() -> TrialClock | None:
    return _clock.get()


@contextmanager
def tracked(clock: TrialClock | None, model: str, role: str) -> Iterator[CallState]:
    """``clock.call(...)``, or an untracked state without a clock."""
    if clock is None:
        yield CallState(model, role)
        return
    with clock.call(model, role) as state:
        yield state
