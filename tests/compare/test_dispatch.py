"""The adaptive dispatcher: seeded order, results read in that order, and a run that
never goes more than one round past its decision."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterable, Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from assay.compare.dispatch import Outcome, Reading, SequentialDispatch, dispatch_order
from assay.compare.sequential import SequentialState


def test_dispatch_order_is_a_seeded_pass_over_every_task_per_index() -> None:
    tasks = [f"t{i}" for i in range(20)]
    order = dispatch_order(tasks, 3, seed=7)
    assert len(order) == 60 and len(set(order)) == 60
    for index in range(3):  # every task once per trial index, indices in turn
        assert sorted(t for t, i in order[20 * index : 20 * index + 20] if i == index) == sorted(tasks)
    assert [t for t, _ in order[:20]] != tasks and order[:20] != [(t, 1) for t, _ in order[20:40]]
    assert dispatch_order(list(reversed(tasks)), 3, seed=7) == order  # the input's order does not matter
    assert dispatch_order(tasks, 3, seed=8) != order
    kept = dispatch_order(tasks, 3, seed=7, keep=lambda key: key[0] != "t3")
    assert kept == [key for key in order if key[0] != "t3"]


class _Executor:
    """``workers`` at once, each trial done after a random delay (so out of order)."""

    def __init__(self, workers: int, rng: random.Random, log: list[tuple[str, Any]]):
        self.workers, self.rng, self.log = workers, rng, log

    async def execute(self, jobs: Iterable[Any], on_result: Callable[[Any], None]) -> None:
        iterator = iter(jobs)

        async def worker() -> None:
            for job in iterator:
                self.log.append(("start", job.key))
                await asyncio.sleep(self.rng.random() * 0.002)
                reward = None if self.rng.random() < 0.1 else int(self.rng.random() < 0.5)
                on_result(SimpleNamespace(task_id=job.key[0], trial_index=job.key[1], reward=reward))

        await asyncio.gather(*(worker() for _ in range(self.workers)))


class _DecidesAt:
    """A test that decides once it has read ``at`` outcomes in order (and, with
    ``pause``, first asks for work to be prepared at that point, as a design would)."""

    def __init__(self, at: int, pause: int | None, log: list[tuple[str, Any]]):
        self.at, self.pause, self.log = at, pause, log
        self.prepare: Callable[[], None] | None = None
        self.ready = False
        self.seen: list[Outcome] = []

    def read(self, outcomes: Sequence[Outcome]) -> Reading:
        assert list(outcomes[: len(self.seen)]) == self.seen  # only ever a longer prefix
        self.seen = list(outcomes)
        if self.pause is not None and len(outcomes) > self.pause and not self.ready:
            self.prepare = lambda: setattr(self, "ready", True)
            return Reading(SequentialState("continue", self.pause, 0, 0, 0.0), consumed=self.pause)
        if len(outcomes) >= self.at:
            self.log.append(("decided", self.at))
            return Reading(SequentialState("reject_h0", self.at, 0, 0, 0.0), needed=self.at)
        return Reading(SequentialState("continue", len(outcomes), 0, 0, 0.0))


@pytest.mark.parametrize("seed", range(12))
def test_a_run_stops_at_most_one_round_after_its_decision(seed: int) -> None:
    rng = random.Random(seed)
    window, workers = rng.choice([1, 3, 8]), rng.choice([1, 4, 16])
    at = rng.randint(1, 150)
    pause = rng.choice([None, rng.randint(0, at)])
    order = dispatch_order([f"t{i}" for i in range(50)], 4, seed)
    log: list[tuple[str, Any]] = []
    monitor = _DecidesAt(at, pause, log)
    dispatch = SequentialDispatch(
        _Executor(workers, rng, log), order, monitor, window=window, budget=len(order), on_round=None
    )
    reported: list[Any] = []
    jobs = [SimpleNamespace(key=key, trial=SimpleNamespace(task_id=key[0], index=key[1])) for key in order]
    asyncio.run(dispatch.execute(reversed(jobs), reported.append))
    started = [key for kind, key in log if kind == "start"]
    assert started == order[: len(started)]  # in dispatch order
    assert dispatch.reading is not None and dispatch.reading.needed == at
    assert 0 <= dispatch.dispatched - at <= window - 1  # at most one round past the decision
    assert log.index(("decided", at)) > max(i for i, (kind, _) in enumerate(log) if kind == "start")
    assert len(reported) == dispatch.dispatched  # the trials in flight were finished and reported
    assert dispatch.rounds[-1].state.decision == "reject_h0" and dispatch.rounds[-1].trials == at
    assert [r.state.decision for r in dispatch.rounds].count("reject_h0") == 1


def test_the_budget_ends_an_undecided_run() -> None:
    order = dispatch_order(["a", "b", "c"], 2, 0)
    monitor = _DecidesAt(10**6, None, [])
    jobs = [SimpleNamespace(trial=SimpleNamespace(task_id=t, index=i), key=(t, i)) for t, i in order]
    dispatch = SequentialDispatch(_Executor(2, random.Random(0), []), order, monitor, window=2, budget=5)
    asyncio.run(dispatch.execute(jobs, lambda r: None))
    assert dispatch.dispatched == 5 and dispatch.reading is not None
    assert dispatch.reading.state.decision == "continue" and dispatch.rounds[-1].trials == 5
