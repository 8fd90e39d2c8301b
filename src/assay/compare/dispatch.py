"""Dispatching an adaptive run: trials in a seeded random order, a sequential test read
as results arrive, and no new trial once it has decided.

:class:`SequentialDispatch` wraps the run's executor (local or Ray). It hands the
executor the planned trials in *dispatch order* (:func:`dispatch_order`: every task once
in a seeded random order, then every task a second time in another order...), at most
``window`` trials beyond the contiguous prefix the test has read. Results arrive in any
order; the test (a :class:`Monitor`) reads them in dispatch order only, so what it sees
never depends on which trials happened to finish first (a failing trial that times out
late cannot bias it). Once the test decides, nothing more is dispatched: the trials in
flight finish and are stored, and the run stops at most ``window`` trials after the one
that decided.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..core.hashing import derive_seed
from ..core.results import TrialResult
from ..runner.executor import Executor, OnResult
from ..runner.orchestrator import TrialJob
from .sequential import SequentialState

Key = tuple[str, int]
Outcome = int | None
_MISSING = -1


def dispatch_order(
    task_ids: Sequence[str], trials: int, seed: int, keep: Callable[[Key], bool] | None = None
) -> list[Key]:
    """(task, trial index) in the order an adaptive run dispatches them: trial index
    outer, and for each index every task in a fresh random order seeded by ``seed``
    (so each task runs once before any runs twice); the same for any order of
    ``task_ids``. ``keep`` drops keys (e.g. those without a baseline result to pair
    with)."""
    order: list[Key] = []
    for index in range(trials):
        tasks = sorted(task_ids)
        random.Random(derive_seed(seed, "adaptive-order", index)).shuffle(tasks)
        order += [(task, index) for task in tasks if keep is None or keep((task, index))]
    return order


@dataclass(frozen=True)
class Reading:
    """What a test made of the outcomes so far: its state and (when it decided) how
    many trials of the dispatch order the decision needed."""

    state: SequentialState
    needed: int | None = None
    consumed: int | None = None
    """How many of the outcomes given the test has taken in (all when None): fewer
    when it waits for ``prepare``."""

    @property
    def final(self) -> bool:
        return self.state.decision != "continue"


class Monitor(Protocol):
    """A sequential test fed the outcomes of the dispatch order's prefix.

    ``read(outcomes)`` gets every outcome so far (``None``: a harness error, not
    counted). When it needs heavy work before it can read on (designing the test after
    a pilot), it sets ``prepare`` to a function the dispatcher runs in a thread, and
    reads again afterwards."""

    prepare: Callable[[], None] | None

    def read(self, outcomes: Sequence[Outcome]) -> Reading: ...


@dataclass(frozen=True)
class RoundReport:
    """The state of the test after one round (``window`` more trials read)."""

    round: int
    trials: int
    state: SequentialState


class SequentialDispatch:
    """Executor for an adaptive run (see the module doc). ``order``: the dispatch order
    (keys missing from the run's jobs are skipped); ``budget``: at most this many
    trials; ``window``: at most this many trials run beyond what the test has read."""

    def __init__(
        self,
        inner: Executor,
        order: Sequence[Key],
        monitor: Monitor,
        *,
        window: int,
        budget: int,
        on_round: Callable[[RoundReport], None] | None = None,
    ):
        if window < 1:
            raise ValueError("window must be at least 1")
        self.inner, self.order, self.monitor = inner, list(order), monitor
        self.window, self.budget, self.on_round = window, budget, on_round
        self.outcomes: list[Outcome] = []
        self.dispatched = 0
        self.completed = 0  # the contiguous prefix of the dispatch order that has finished
        self.read = 0  # the prefix the test has read
        self.reading: Reading | None = None
        self.rounds: list[RoundReport] = []
        self._pending: asyncio.Future[None] | None = None

    @property
    def decided(self) -> bool:
        return self.reading is not None and self.reading.final

    async def execute(self, jobs: Iterable[TrialJob], on_result: OnResult) -> None:
        by_key = {(job.trial.task_id, job.trial.index): job for job in jobs}
        queue = [by_key[key] for key in self.order if key in by_key][: self.budget]
        position = {(job.trial.task_id, job.trial.index): i for i, job in enumerate(queue)}
        self.outcomes = [_MISSING] * len(queue)

        def arrived(result: TrialResult) -> None:
            on_result(result)
            i = position.get((result.task_id, result.trial_index))
            if i is None:
                return
            self.outcomes[i] = result.reward
            while self.completed < len(queue) and self.outcomes[self.completed] != _MISSING:
                self.completed += 1
            self._read()

        def feed() -> Iterator[TrialJob]:
            while self.dispatched < len(queue) and not self.decided:
                if self.dispatched >= self.read + self.window:
                    return  # a round ahead of the test: wait for it
                self.dispatched += 1
                yield queue[self.dispatched - 1]

        while True:
            before = (self.dispatched, self.read)
            await self.inner.execute(feed(), arrived)
            if self._pending is not None:
                await self._pending
                self._pending = None
                self._read(force=True)
                continue
            if self.decided or self.dispatched >= len(queue) or before == (self.dispatched, self.read):
                break
        if not self.rounds or (not self.decided and self.rounds[-1].trials != self.read):
            self._round()

    def _read(self, force: bool = False) -> None:
        """Let the test read the completed prefix (unless it decided or is preparing)."""
        if self.decided or self._pending is not None or (self.completed <= self.read and not force):
            return
        self.reading = self.monitor.read(self.outcomes[: self.completed])
        self.read = self.completed if self.reading.consumed is None else self.reading.consumed
        prepare = self.monitor.prepare
        if prepare is not None:  # e.g. design the test once its pilot has been read
            self.monitor.prepare = None
            self._pending = asyncio.get_running_loop().run_in_executor(None, prepare)
            return
        if self.decided or self.read - (self.rounds[-1].trials if self.rounds else 0) >= self.window:
            self._round()

    def _round(self) -> None:
        if self.reading is None:
            self.reading = self.monitor.read(self.outcomes[: self.completed])
        read = self.reading.needed if self.reading.needed is not None else self.read
        report = RoundReport(len(self.rounds) + 1, read, self.reading.state)
        self.rounds.append(report)
        if self.on_round is not None:
            self.on_round(report)
