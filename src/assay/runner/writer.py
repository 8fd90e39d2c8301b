"""Writing finished trials to the store in small batches, off the event loop, with
backpressure.

A finished trial is handed to one writer thread in a batch at most ``max_delay``
seconds after it finished (sooner when ``batch`` trials are waiting); each batch is one
transaction. At most ``max_pending`` finished trials may wait to be committed: when the
store falls behind, :meth:`TrialWriter.add` returns an awaitable and the trial's worker
waits for room before it starts another trial, and trials that finish while a batch is
being written go together in the next one (group commit), so memory stays bounded and no result
waits long to be durable (the *durability window*): about ``max_delay`` plus the time
the store takes to write ``max_pending`` trials (docs/scale.md has the figures). A crash
loses at most the trials of that window, which a resume runs again (same seeds, same
results): none is lost from the plan, none is ever duplicated.

The thread may first create the run's own rows (:meth:`TrialWriter.begin`) while the
first trials run: no trial is written before they are, and none at all if that fails.
Once no trial is left to start (:meth:`TrialWriter.drain`), what finishes is handed to
the thread as soon as it is idle, so the run's last trials are not held back.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from ..core.results import TrialResult
from ..store.store import Store

T = TypeVar("T")


class TrialWriter:
    """Batches finished trials into store transactions, with a bounded backlog.

    ``on_written`` is called once per trial after its batch committed, from the writer
    thread (calls are never concurrent with each other)."""

    def __init__(
        self,
        store: Store,
        *,
        batch: int = 64,
        max_delay: float = 0.05,
        max_pending: int = 256,
        on_written: Callable[[TrialResult], None] | None = None,
        background: bool = True,
    ):
        if max_pending < 1 or batch < 1:
            raise ValueError("batch and max_pending must be at least 1")
        self.store = store
        self.batch = batch
        self.max_delay = max_delay
        self.max_pending = max_pending
        self.on_written = on_written
        self._pending: list[TrialResult] = []
        self._oldest = 0.0
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="assay-writer") if background else None
        self._inflight: list[Future[None]] = []
        self._lock = threading.Lock()
        self._uncommitted = 0  # added, not yet committed (waiting here or in the thread)
        self._writing = 0  # batches handed to the thread, not yet committed
        self._room: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._created: Future[None] | None = None
        self._started = threading.Event()  # the first trials have started: the run's rows may be made
        self._draining = False
        self._halted = threading.Event()  # batches handed over are kept, not written (see halt)
        self._held: list[TrialResult] = []

    @property
    def uncommitted(self) -> int:
        """Finished trials not yet committed to the store."""
        with self._lock:
            return self._uncommitted

    def add(self, result: TrialResult) -> Awaitable[None] | None:
        """Queue a finished trial. Returns an awaitable when the backlog is full: the
        caller (a trial's worker) awaits it before it starts another trial."""
        now = time.monotonic()
        if not self._pending:
            self._oldest = now
        self._pending.append(result)
        with self._lock:
            self._uncommitted += 1
            full = self._uncommitted >= self.max_pending
            writing = self._writing
        # When the backlog is full and a batch is being written, what comes meanwhile
        # waits for the next batch (group commit): flushing each trial on its own then
        # made batches of one or two trials, a transaction each, and the store fell
        # further behind (2,000 trials at C=100: 1,300 transactions).
        if (
            len(self._pending) >= self.batch
            or now - self._oldest >= self.max_delay
            or (not writing and (full or self._draining))
        ):
            self.flush()
        if full and self._pool is not None:
            return self._wait_for_room()
        return None

    async def _wait_for_room(self) -> None:
        loop = asyncio.get_running_loop()
        if self._room is None or self._loop is not loop:
            self._room, self._loop = asyncio.Event(), loop
        while True:
            with self._lock:
                if self._uncommitted < self.max_pending:
                    return
                self._room.clear()
                idle = self._writing == 0
            if idle and self._pending:  # nothing being written: what waits goes now
                self.flush()
            self._check()
            await self._room.wait()

    def begin(self, create: Callable[[], None]) -> None:
        """Have the thread run ``create`` (the run's own rows) before any trial, once the
        event loop has started the first trials (see :meth:`draining`: the two would
        otherwise take turns on the interpreter lock, and the first trials start later).
        Trials wait in the backlog until it is done; if it fails, no trial is written and
        the error is raised where a failed write's would be."""
        if self._pool is None:
            create()
            return
        self._loop = asyncio.get_running_loop()

        def once_started() -> None:
            self._started.wait()
            create()

        self._created = self._pool.submit(once_started)

    def settle(self) -> None:
        """Wait for what :meth:`begin` handed to the thread, whatever its end."""
        self._started.set()
        if self._created is not None:
            with contextlib.suppress(BaseException):
                self._created.result()

    async def unless_creation_fails(self, trials: Awaitable[None]) -> None:
        """Await ``trials``, cancelling them as soon as what :meth:`begin` handed to the
        thread fails (then its error is raised)."""
        created = self._created
        if created is None:
            await trials
            return
        running = asyncio.ensure_future(trials)
        loop = asyncio.get_running_loop()

        def stop(future: Future[None]) -> None:  # in the writer's thread
            if not future.cancelled() and future.exception() is not None:
                with contextlib.suppress(RuntimeError):  # the loop has closed: nothing left to stop
                    loop.call_soon_threadsafe(running.cancel)

        created.add_done_callback(stop)
        try:
            await running
        except asyncio.CancelledError:
            if created.done():
                created.result()  # stopped because the run could not be created: that error
            raise

    def draining(self, jobs: Iterator[T]) -> Iterator[T]:
        """``jobs``; once the first ones have started (the loop's next turn after the first
        is taken), what :meth:`begin` handed over is made; once the last one is taken,
        :meth:`drain`."""
        asked = False
        for job in jobs:
            if not asked and self._loop is not None:
                asked = True  # the loop's next turn comes after the first trials' first steps
                self._loop.call_soon_threadsafe(self._started.set)
            yield job
        self._started.set()
        self.drain()

    def drain(self) -> None:
        """No trial is left to start: from now on finished trials go to the thread as
        soon as it is idle instead of waiting to make a batch (called on the event loop)."""
        self._draining = True
        with contextlib.suppress(RuntimeError):  # no loop running: nothing to wake later
            self._loop = self._loop or asyncio.get_running_loop()
        self._flush_if_idle()

    def _flush_if_idle(self) -> None:
        with self._lock:
            idle = self._writing == 0
        if idle and self._pending:
            self.flush()

    def _write(self, batch: list[TrialResult]) -> None:
        if self._halted.is_set():  # kept for close(), after the run's status
            with self._lock:
                self._held.extend(batch)
                self._writing -= 1
            return
        try:
            if self._created is not None:
                self._created.result()  # done (the thread runs in order): its error, if any
            self.store.write_trials(batch)
        finally:
            with self._lock:
                self._uncommitted -= len(batch)
                self._writing -= 1
            loop = self._loop
            if loop is not None and not loop.is_closed():
                if self._room is not None:
                    loop.call_soon_threadsafe(self._room.set)
                if self._draining:
                    loop.call_soon_threadsafe(self._flush_if_idle)
        if self.on_written is not None:
            for result in batch:
                self.on_written(result)

    def flush(self) -> None:
        """Hand what waits to the writer thread (or write it now without one)."""
        batch, self._pending = self._pending, []
        self._check()
        if not batch:
            return
        with self._lock:
            self._writing += 1
        if self._pool is None:
            self._write(batch)
        else:
            self._inflight.append(self._pool.submit(self._write, batch))

    def _check(self) -> None:
        """Re-raise the error of a failed write, so a broken store stops the run."""
        if self._created is not None and self._created.done():
            self._created.result()
        still = []
        for future in self._inflight:
            if future.done():
                future.result()
            else:
                still.append(future)
        self._inflight = still

    def halt(self) -> None:
        """After a failure, before the run's final status: the batch being written ends,
        and the batches handed to the thread after it are kept, not written, until
        :meth:`close`. On a full disk the room the status needs (see
        :mod:`assay.store.reserve`) is then not taken by a batch written meanwhile."""
        self._halted.set()
        if self._pool is None:
            return
        with contextlib.suppress(RuntimeError):  # closed already: nothing is being written
            self._pool.submit(lambda: None).result()  # the thread runs in order: all before it are done

    def close(self) -> None:
        """Write everything that waits and wait until it is committed."""
        self._started.set()
        if self._halted.is_set():
            self._halted.clear()
            with self._lock:
                self._pending, self._held = [*self._held, *self._pending], []
        try:
            self.flush()
            if self._created is not None:
                self._created.result()
            for future in self._inflight:
                future.result()
        finally:
            self._inflight = []
            if self._pool is not None:
                self._pool.shutdown(wait=True)

    async def run(self) -> None:
        """Flush whatever waits, every ``max_delay`` seconds, until cancelled."""
        while True:
            await asyncio.sleep(self.max_delay)
            if self._pending and time.monotonic() - self._oldest >= self.max_delay:
                self.flush()
