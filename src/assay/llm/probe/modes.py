"""The three probe modes over one session: a fixed number of requests (latency), a
concurrency ramp, and periodic checks (availability)."""

from __future__ import annotations

import asyncio
import math
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from assay.stats import wilson_interval

from ..pricing import Pricing
from ..provider import Provider
from ..retry import RetryPolicy
from .call import Measured, measure
from .guard import Guard
from .schema import AvailabilitySummary, ProbeConfig, RampLevel, RampSummary
from .summary import incidents, ramp_level

Sleep = Callable[[float], Awaitable[None]]


@dataclass
class Session:
    """What every mode shares: the endpoint, the request, the ceilings and the record of
    every measured request."""

    provider: Provider
    request: dict[str, Any]
    config: ProbeConfig
    pricing: Pricing | None
    guard: Guard
    origin: float = field(default_factory=time.perf_counter)
    measured: list[Measured] = field(default_factory=list)
    sleep: Sleep = asyncio.sleep

    def __post_init__(self) -> None:
        self.backoff = RetryPolicy(
            rng=random.Random(self.config.seed), max_retry_after_s=self.config.max_retry_after_s
        )

    def now(self) -> float:
        return time.perf_counter() - self.origin

    async def one(self, phase: str) -> Measured | None:
        """One request within the ceilings; None when a ceiling (or a rejection) stops."""
        if not self.guard.admit():
            return None
        m = await measure(
            self.provider,
            self.request,
            timeout_s=self.config.timeout_s,
            pricing=self.pricing,
            origin=self.origin,
            phase=phase,
        )
        self.guard.settle(m.cost_usd if m.ok else None, answered=m.answered)
        self.measured.append(m)
        if not m.ok and not m.retryable:
            self.guard.stop("rejected", f"the endpoint rejected the probe's request: {m.message}")
        return m

    async def pause_after(self, m: Measured, failures: int, deadline: float | None = None) -> None:
        """After a failure: wait what a 429's Retry-After asks (capped), else back off
        with seeded jitter; never past ``deadline``."""
        if m.ok:
            return
        delay = self.backoff.delay(max(0, failures - 1), m.retry_after_s)
        if deadline is not None:
            delay = min(delay, max(0.0, deadline - self.now()))
        if delay > 0:
            await self.sleep(delay)

    async def warmup(self) -> None:
        failures = 0
        for _ in range(self.config.warmup):
            m = await self.one("warmup")
            if m is None:
                return
            failures = 0 if m.ok else failures + 1
            await self.pause_after(m, failures)

    def counted(self) -> list[Measured]:
        return [m for m in self.measured if m.phase != "warmup"]


async def run_latency(s: Session) -> None:
    """``requests`` requests over ``concurrency`` workers."""
    await s.warmup()
    remaining = s.config.requests

    async def worker() -> None:
        nonlocal remaining
        failures = 0
        while remaining > 0 and not s.guard.stopped:
            remaining -= 1
            m = await s.one("latency")
            if m is None:
                return
            failures = 0 if m.ok else failures + 1
            await s.pause_after(m, failures)

    await asyncio.gather(*(worker() for _ in range(min(s.config.concurrency, s.config.requests))))


async def _level(s: Session, concurrency: int, stagger_s: float) -> tuple[list[Measured], float]:
    """``concurrency`` closed-loop workers for ``step_s``; worker i starts ``i × stagger``
    late so that sends spread over the cycle."""
    start = s.now()
    deadline = start + s.config.step_s
    phase = f"c={concurrency}"
    level: list[Measured] = []

    async def worker(i: int) -> None:
        offset = min(i * stagger_s, s.config.step_s)
        if offset > 0:
            await s.sleep(offset)
        failures = 0
        while s.now() < deadline and not s.guard.stopped:
            m = await s.one(phase)
            if m is None:
                return
            level.append(m)
            failures = 0 if m.ok else failures + 1
            await s.pause_after(m, failures, deadline)

    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    sent_until = max((m.at_s for m in level), default=start)
    duration = max(min(s.now(), deadline), sent_until) - start
    return level, duration


async def run_ramp(s: Session) -> RampSummary:
    """Concurrency ``ramp_start``, ×``ramp_factor``, … up to ``max_concurrency``; a level
    lasts ``step_s``. Ends at the first level with 429s (the limit is found), with too
    many other errors, at the concurrency ceiling, or when a ceiling stops the probe."""
    cfg = s.config
    await s.warmup()
    warm = [m.e2e_s for m in s.measured if m.ok and m.e2e_s is not None]
    cycle = statistics.median(warm) if warm else 1.0
    levels: list[RampLevel] = []
    ended_by = "max_concurrency"
    first_429: tuple[int, float, float | None] | None = None
    c = cfg.ramp_start
    while True:
        level, duration = await _level(s, c, cycle / c)
        if level:
            lvl = ramp_level(c, duration, level)
            levels.append(lvl)
        if s.guard.stopped:
            ended_by = "rejected" if s.guard.stopped_by == "rejected" else "ceiling"
            break
        if not level:
            break
        if lvl.rate_limited:
            at = min(m.at_s for m in level if m.kind == "rate_limited")
            first_429 = (c, at, lvl.demand_rpm)
            ended_by = "rate_limit"
            break
        if (lvl.sent - lvl.ok) / lvl.sent > cfg.max_error_rate:
            ended_by = "errors"
            break
        if c >= cfg.max_concurrency:
            break
        cycle = lvl.e2e_p50_s or cycle
        c = min(c * cfg.ramp_factor, cfg.max_concurrency)
    rated = [lv for lv in levels if lv.success_rpm is not None]
    best = max(rated, key=lambda lv: lv.success_rpm or 0.0, default=None)
    clean = [lv.success_rpm for lv in rated if lv.ok == lv.sent and lv.success_rpm is not None]
    limited = next((lv for lv in levels if lv.rate_limited), None)
    return RampSummary(
        levels=levels,
        ended_by=ended_by,
        sustainable_rpm=best.success_rpm if best else None,
        sustainable_tpm=best.tokens_per_min if best else None,
        clean_rpm=max(clean) if clean else None,
        rate_limit_rpm=limited.success_rpm if limited else None,
        first_429_concurrency=first_429[0] if first_429 else None,
        first_429_at_s=first_429[1] if first_429 else None,
        demand_rpm_at_first_429=first_429[2] if first_429 else None,
    )


async def run_availability(s: Session) -> AvailabilitySummary:
    """One check every ``interval_s`` for ``duration_s`` (no warm-up: every check counts).
    Checks start on schedule, so a hanging one does not delay the next."""
    cfg = s.config
    n = max(1, math.floor(cfg.duration_s / cfg.interval_s + 1e-9))
    start = s.now()
    tasks: list[asyncio.Task[Measured | None]] = []
    for i in range(n):
        wait = start + i * cfg.interval_s - s.now()
        if wait > 0:
            await s.sleep(wait)
        if s.guard.stopped:
            break
        tasks.append(asyncio.create_task(s.one("check")))
        await asyncio.sleep(0)  # let it take its place under the ceilings now
    await asyncio.gather(*tasks)
    checks = [m for m in s.measured if m.phase == "check"]
    end = max(s.now(), start + cfg.duration_s) if not s.guard.stopped else s.now()
    found, downtime = incidents(checks, end)
    up = sum(m.ok for m in checks)
    return AvailabilitySummary(
        interval_s=cfg.interval_s,
        duration_s=cfg.duration_s,
        checks=len(checks),
        up=up,
        uptime=up / len(checks) if checks else None,
        uptime_ci=wilson_interval(up, len(checks), cfg.confidence) if checks else None,
        incidents=found,
        downtime_s=downtime,
    )
