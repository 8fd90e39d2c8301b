"""Per-model concurrency and rate limits: async token buckets for requests and tokens."""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

Sleep = Callable[[float], Awaitable[None]]
Clock = Callable[[], float]


class TokenBucket:
    """``capacity`` units, refilled continuously at ``capacity / period_s`` per second.

    :meth:`acquire` waits (FIFO) until enough units are there; :meth:`debit` takes units
    after the fact and may drive the level negative, which delays later acquirers."""

    def __init__(
        self,
        capacity: float,
        period_s: float = 60.0,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ):
        if capacity <= 0:
            raise ValueError("a rate limit must be positive")
        self.capacity = float(capacity)
        self.rate = self.capacity / period_s
        self.level = self.capacity
        self._clock = clock
        self._sleep = sleep
        self._stamp = clock()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._stamp) * self.rate)
        self._stamp = now

    async def acquire(self, amount: float = 1.0) -> float:
        """Take ``amount`` (capped at the capacity); returns the seconds waited."""
        amount = min(float(amount), self.capacity)
        waited = 0.0
        async with self._lock:
            while True:
                self._refill()
                if self.level >= amount:
                    self.level -= amount
                    return waited
                delay = (amount - self.level) / self.rate
                waited += delay
                await self._sleep(delay)

    def debit(self, amount: float) -> None:
        self._refill()
        self.level -= amount


@dataclass(frozen=True, slots=True)
class LimitSettings:
    """``max_concurrency`` requests in flight, ``rpm`` requests and ``tpm`` tokens per
    minute (None = unlimited)."""

    max_concurrency: int | None = None
    rpm: float | None = None
    tpm: float | None = None


class Limiter:
    """Concurrency slot + request bucket + token bucket for one model endpoint."""

    def __init__(
        self,
        settings: LimitSettings,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ):
        self.settings = settings
        self._sem = asyncio.Semaphore(settings.max_concurrency) if settings.max_concurrency else None
        self._requests = TokenBucket(settings.rpm, clock=clock, sleep=sleep) if settings.rpm else None
        self._tokens = TokenBucket(settings.tpm, clock=clock, sleep=sleep) if settings.tpm else None

    @asynccontextmanager
    async def slot(self, estimated_tokens: int) -> AsyncIterator[None]:
        """Hold a concurrency slot; before entering, wait for the rate buckets."""
        if self._requests is not None:
            await self._requests.acquire(1)
        if self._tokens is not None:
            await self._tokens.acquire(estimated_tokens)
        if self._sem is None:
            yield
            return
        async with self._sem:
            yield

    def settle(self, estimated_tokens: int, actual_tokens: int | None) -> None:
        """Correct the token bucket once the real usage is known."""
        if self._tokens is not None and actual_tokens is not None:
            self._tokens.debit(actual_tokens - min(estimated_tokens, self._tokens.capacity))


_shared: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[object, ...], Limiter]]
_shared = weakref.WeakKeyDictionary()


def shared_limiter(
    key: tuple[object, ...],
    settings: LimitSettings,
    *,
    clock: Clock = time.monotonic,
    sleep: Sleep = asyncio.sleep,
) -> Limiter:
    """The limiter of ``key`` (provider, endpoint, model) on the running event loop, so
    every model instance of one endpoint shares its limits."""
    loop = asyncio.get_running_loop()
    per_loop = _shared.setdefault(loop, {})
    full_key = (*key, settings, id(clock), id(sleep))
    limiter = per_loop.get(full_key)
    if limiter is None:
        limiter = per_loop[full_key] = Limiter(settings, clock=clock, sleep=sleep)
    return limiter
