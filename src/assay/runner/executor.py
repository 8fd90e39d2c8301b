"""Executors run trial jobs concurrently and hand each result to a callback as soon
as it is done. The local executor is asyncio with N workers."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol

from ..core.results import TrialResult
from .orchestrator import TrialJob, run_trial

OnResult = Callable[[TrialResult], "Awaitable[None] | None"]
"""Called with each finished trial. It may return an awaitable (the store is behind):
the executor awaits it before it starts another trial (backpressure)."""


async def deliver(on_result: OnResult, result: TrialResult) -> None:
    """Hand a result over, waiting when the receiver asks to (see :data:`OnResult`)."""
    waiting = on_result(result)
    if waiting is not None and inspect.isawaitable(waiting):  # None: the common case
        await waiting


class Executor(Protocol):
    async def execute(self, jobs: Iterable[TrialJob], on_result: OnResult) -> None: ...


class LocalExecutor:
    """``concurrency`` asyncio workers pulling jobs from one iterator: memory stays
    flat however many trials are planned. When one raises (a usage error, the run's
    breaker), the others are cancelled: their trials stay missing, for a resume."""

    def __init__(self, concurrency: int = 8, run: Callable[[TrialJob], Awaitable[TrialResult]] = run_trial):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency
        self._run = run

    async def execute(self, jobs: Iterable[TrialJob], on_result: OnResult) -> None:
        iterator = iter(jobs)

        async def worker() -> None:
            for job in iterator:
                await deliver(on_result, await self._run(job))

        workers = [asyncio.ensure_future(worker()) for _ in range(self.concurrency)]
        try:
            await asyncio.gather(*workers)
        finally:  # one worker failed (or the run was cancelled): stop the others too
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
