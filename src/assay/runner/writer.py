"""Writing finished trials to the store in small batches, off the event loop.

A trial is committed at most ``max_delay`` seconds after it finished (sooner when
``batch`` trials are waiting), each batch in one transaction, in a background thread
so the event loop keeps running trials while SQLite writes. A crash loses at most the
trials that finished in the last ``max_delay`` seconds, which a resume runs again (same
seeds, same results): none is lost from the plan, none is ever duplicated.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from ..core.results import TrialResult
from ..store.store import Store


class TrialWriter:
    """Batches finished trials into store transactions.

    ``on_written`` is called once per trial after its batch committed, from the writer
    thread (calls are never concurrent with each other)."""

    def __init__(
        self,
        store: Store,
        *,
        batch: int = 64,
        max_delay: float = 0.05,
        on_written: Callable[[TrialResult], None] | None = None,
        background: bool = True,
    ):
        self.store = store
        self.batch = batch
        self.max_delay = max_delay
        self.on_written = on_written
        self._pending: list[TrialResult] = []
        self._oldest = 0.0
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="assay-writer") if background else None
        self._inflight: list[Future[None]] = []

    def add(self, result: TrialResult) -> None:
        if not self._pending:
            self._oldest = time.monotonic()
        self._pending.append(result)
        if len(self._pending) >= self.batch or time.monotonic() - self._oldest >= self.max_delay:
            self.flush()

    def _write(self, batch: list[TrialResult]) -> None:
        self.store.write_trials(batch)
        if self.on_written is not None:
            for result in batch:
                self.on_written(result)

    def flush(self) -> None:
        """Hand what waits to the writer thread (or write it now without one)."""
        batch, self._pending = self._pending, []
        self._check()
        if not batch:
            return
        if self._pool is None:
            self._write(batch)
        else:
            self._inflight.append(self._pool.submit(self._write, batch))

    def _check(self) -> None:
        """Re-raise the error of a failed write, so a broken store stops the run."""
        still = []
        for future in self._inflight:
            if future.done():
                future.result()
            else:
                still.append(future)
        self._inflight = still

    def close(self) -> None:
        """Write everything that waits and wait until it is committed."""
        self.flush()
        for future in self._inflight:
            future.result()
        self._inflight = []
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    async def run(self) -> None:
        """Flush whatever waits, every ``max_delay`` seconds, until cancelled."""
        while True:
            await asyncio.sleep(self.max_delay)
            if self._pending and time.monotonic() - self._oldest >= self.max_delay:
                self.flush()
