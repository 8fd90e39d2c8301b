"""Writing finished trials to the store in small batches.

A trial is committed at most ``max_delay`` seconds after it finished (sooner when
``batch`` trials are waiting), each batch in one transaction. Batching removes most of
the per-trial cost of a commit; a crash loses at most the trials that finished in the
last ``max_delay`` seconds, which a resume runs again (same seeds, same results):
none is lost from the plan, none is ever duplicated.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from ..core.results import TrialResult
from ..store.store import Store


class TrialWriter:
    def __init__(
        self,
        store: Store,
        *,
        batch: int = 64,
        max_delay: float = 0.05,
        on_written: Callable[[TrialResult], None] | None = None,
    ):
        self.store = store
        self.batch = batch
        self.max_delay = max_delay
        self.on_written = on_written
        self._pending: list[TrialResult] = []
        self._oldest = 0.0

    def add(self, result: TrialResult) -> None:
        if not self._pending:
            self._oldest = time.monotonic()
        self._pending.append(result)
        if len(self._pending) >= self.batch or time.monotonic() - self._oldest >= self.max_delay:
            self.flush()

    def flush(self) -> None:
        pending, self._pending = self._pending, []
        if not pending:
            return
        self.store.write_trials(pending)
        if self.on_written is not None:
            for result in pending:
                self.on_written(result)

    async def run(self) -> None:
        """Flush whatever waits, every ``max_delay`` seconds, until cancelled."""
        while True:
            await asyncio.sleep(self.max_delay)
            if self._pending and time.monotonic() - self._oldest >= self.max_delay:
                self.flush()
