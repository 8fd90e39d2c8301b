"""Per-trial usage metering through context variables, and budget checks."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Literal

from ..core.messages import ToolSpec
from .errors import BudgetExceeded
from .types import Usage

CallRole = Literal["agent", "user", "judge"] | str
CallSource = Literal["network", "cache", "cassette"]


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One model call as the meter saw it.

    ``usage`` and ``cost_usd`` are None when unknown (no usage returned, no price).
    A call served from the cache or a cassette (``cached=True``) carries the usage and
    cost of the original call: what this configuration costs, not what this run paid.
    ``latency_s`` is the successful request's duration; ``started_at``/``ended_at`` are
    wall-clock epoch seconds around the whole call, backoff included. ``error`` is set
    (and the call raised) when the call failed for good. ``waited_s`` is the time the
    call lost to the endpoint's failures (failed attempts, backoff, ``Retry-After``) and
    to the rate limits: the model's time, not the agent's."""

    role: str
    model: str
    usage: Usage | None
    cost_usd: float | None
    latency_s: float | None
    ttft_s: float | None
    retries: int
    cached: bool
    started_at: float
    ended_at: float
    error: str | None = None
    source: CallSource = "network"
    request_hash: str = ""
    system_prompt: str | None = None
    """The system prompt the call was made with (the same object the caller passed)."""
    tools: tuple[ToolSpec, ...] = ()
    """The tool definitions the call was made with."""
    waited_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Totals:
    """Sums over call records.

    ``cost_usd`` is None as soon as one call has an unknown cost (missing usage or no
    price); ``known_cost_usd`` sums the known ones (a lower bound) and is what budgets
    check. Token sums cover the calls with usage; ``missing_usage`` counts the others."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = 0.0
    known_cost_usd: float = 0.0
    missing_usage: int = 0
    unpriced: int = 0
    retries: int = 0
    cached_calls: int = 0
    errors: int = 0
    latency_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def _totals(records: list[CallRecord]) -> Totals:
    inp = out = cr = cw = rs = missing = unpriced = retries = cached = errors = 0
    known = 0.0
    latency = 0.0
    for r in records:
        retries += r.retries
        cached += r.cached
        if r.error is not None:
            errors += 1
            continue
        latency += r.latency_s or 0.0
        if r.usage is None:
            missing += 1
        else:
            inp += r.usage.input_tokens
            out += r.usage.output_tokens
            cr += r.usage.cache_read_tokens
            cw += r.usage.cache_write_tokens
            rs += r.usage.reasoning_tokens
        if r.cost_usd is None:
            unpriced += 1
        else:
            known += r.cost_usd
    return Totals(
        calls=len(records),
        input_tokens=inp,
        output_tokens=out,
        cache_read_tokens=cr,
        cache_write_tokens=cw,
        reasoning_tokens=rs,
        cost_usd=None if unpriced else known,
        known_cost_usd=known,
        missing_usage=missing,
        unpriced=unpriced,
        retries=retries,
        cached_calls=cached,
        errors=errors,
        latency_s=latency,
    )


class Meter:
    """Collects the :class:`CallRecord` of every model call made while it is installed
    (:func:`use_meter`). One per trial; safe to share across tasks and threads.
    ``on_record`` (e.g. the orchestrator adding an ``llm`` span) is called for each."""

    def __init__(self, on_record: Callable[[CallRecord], None] | None = None):
        self._records: list[CallRecord] = []
        self._lock = threading.Lock()
        self.on_record = on_record

    def record(self, rec: CallRecord) -> None:
        with self._lock:
            self._records.append(rec)
        if self.on_record is not None:
            self.on_record(rec)

    @property
    def calls(self) -> int:
        """How many calls were recorded."""
        return len(self._records)

    @property
    def records(self) -> list[CallRecord]:
        with self._lock:
            return list(self._records)

    def totals(self, role: str | None = None) -> Totals:
        recs = self.records
        return _totals([r for r in recs if role is None or r.role == role])

    def by_role(self) -> dict[str, Totals]:
        recs = self.records
        roles = sorted({r.role for r in recs})
        return {role: _totals([r for r in recs if r.role == role]) for role in roles}

    def check(self, max_tokens: int | None = None, max_cost_usd: float | None = None) -> None:
        """Raise :class:`BudgetExceeded` when the calls so far went past a limit.

        Tokens are input + output of calls with usage; cost is the known cost."""
        t = self.totals()
        if max_tokens is not None and t.total_tokens > max_tokens:
            raise BudgetExceeded("tokens", max_tokens, t.total_tokens)
        if max_cost_usd is not None and t.known_cost_usd > max_cost_usd:
            raise BudgetExceeded("cost", max_cost_usd, t.known_cost_usd)


_meter: ContextVar[Meter | None] = ContextVar("assay_llm_meter", default=None)
_role: ContextVar[str] = ContextVar("assay_llm_role", default="agent")


class _MeterScope:
    """The context manager of :func:`use_meter`: a class, not a generator, since every
    trial enters one per turn (a generator-based one costs several times as much)."""

    __slots__ = ("_m_token", "_r_token", "meter", "role")

    def __init__(self, meter: Meter | None, role: str | None):
        self.meter, self.role = meter, role
        self._m_token: Token[Meter | None] | None = None
        self._r_token: Token[str] | None = None

    def __enter__(self) -> Meter | None:
        # a value already in place is not set again (setting a context variable copies
        # the context's mapping: a trial's turns all run under the trial's meter)
        meter, role = self.meter, self.role
        if meter is not None and _meter.get() is not meter:
            self._m_token = _meter.set(meter)
        if role is not None and _role.get() != role:
            self._r_token = _role.set(role)
        return meter if meter is not None else _meter.get()

    def __exit__(self, *exc: object) -> None:
        if self._r_token is not None:
            _role.reset(self._r_token)
        if self._m_token is not None:
            _meter.reset(self._m_token)


def use_meter(meter: Meter | None, role: str | None = None) -> _MeterScope:
    """Install ``meter`` (and the caller ``role``: agent, user, judge) for the calls made
    inside the block, including in tasks created inside it. ``role=None`` keeps the
    current role; ``meter=None`` keeps the current meter while setting a role."""
    return _MeterScope(meter, role)


def current_meter() -> Meter | None:
    return _meter.get()


def current_role() -> str:
    return _role.get()
