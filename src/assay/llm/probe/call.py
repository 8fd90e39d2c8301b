"""One measured streaming request: timings of every token-carrying chunk, tokens, cost,
or the kind of failure (with the server's Retry-After)."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from ..pricing import Pricing
from ..provider import Provider, observe_stream
from ..retry import classify
from .schema import Sample


@dataclass(slots=True)
class Measured:
    """A request as the probe saw it. Times are seconds: ``at_s`` since the probe began,
    the others since the request was sent."""

    at_s: float
    phase: str
    ok: bool
    kind: str | None = None
    status: int | None = None
    message: str = ""
    retry_after_s: float | None = None
    retryable: bool = False
    ttft_s: float | None = None
    e2e_s: float | None = None
    chunk_times: list[float] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    tokens_from_usage: bool = False
    cost_usd: float | None = None

    @property
    def answered(self) -> bool:
        """The server may have spent tokens on it (success, or a stream cut short)."""
        return self.ok or self.status is None

    @property
    def ended_s(self) -> float:
        return self.at_s + (self.e2e_s or 0.0)

    @property
    def tpot_s(self) -> float | None:
        """Time per output token after the first: (last chunk − first chunk) / (n − 1)."""
        n, times = self.output_tokens, self.chunk_times
        if not self.ok or n is None or n < 2 or len(times) < 2 or times[-1] <= times[0]:
            return None
        return (times[-1] - times[0]) / (n - 1)

    @property
    def output_tokens_per_s(self) -> float | None:
        tpot = self.tpot_s
        return None if tpot is None else 1.0 / tpot

    def gaps(self) -> list[float]:
        t = self.chunk_times
        return [b - a for a, b in itertools.pairwise(t)]

    def to_sample(self) -> Sample:
        return Sample(
            at_s=round(self.at_s, 6),
            phase=self.phase,
            ok=self.ok,
            kind=self.kind,
            status=self.status,
            ttft_s=self.ttft_s,
            e2e_s=self.e2e_s,
            output_tokens=self.output_tokens,
            output_tokens_per_s=self.output_tokens_per_s,
            retry_after_s=self.retry_after_s,
        )


def error_kind(exc: BaseException, status: int | None, retryable: bool) -> str:
    if status == 429:
        return "rate_limited"
    if status is not None:
        return "server_error" if status >= 500 else "rejected"
    names = {k.__name__ for k in type(exc).__mro__}
    if isinstance(exc, TimeoutError) or any("Timeout" in n for n in names):
        return "timeout"
    return "connection" if retryable else "other"


async def measure(
    provider: Provider,
    request: dict[str, Any],
    *,
    timeout_s: float,
    pricing: Pricing | None,
    origin: float,
    phase: str,
) -> Measured:
    """Send ``request`` streamed and time it; failures of the endpoint become a failed
    :class:`Measured` (a bug in assay still raises)."""
    times: list[float] = []
    start = time.perf_counter()
    m = Measured(at_s=start - origin, phase=phase, ok=False)
    with observe_stream(times.append):
        try:
            raw = await provider.send(request, stream=True, timeout=timeout_s)
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            m.e2e_s = time.perf_counter() - start
            m.status = failure.status_code
            m.retry_after_s = failure.retry_after
            m.retryable = failure.retryable
            m.kind = error_kind(exc, failure.status_code, failure.retryable)
            m.message = failure.message
            m.chunk_times = times
            return m
    m.ok = True
    m.chunk_times = times
    m.ttft_s = raw.ttft_s
    m.e2e_s = raw.latency_s if raw.latency_s is not None else time.perf_counter() - start
    if raw.usage is not None:
        m.input_tokens = raw.usage.input_tokens
        m.output_tokens = raw.usage.output_tokens
        m.tokens_from_usage = True
        m.cost_usd = pricing.cost(raw.usage) if pricing is not None else None
    else:
        m.output_tokens = len(times)
    return m
