"""Bounded memory while running: the writer's backlog never exceeds its bound (trials
wait for a slow store instead of piling up), every trial is still written once, a
failed write stops the run; and a run parses its suite's tasks once."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest

import assay
import assay.suites.loader as loader
from assay.core.results import TrialResult
from assay.errors import SuiteError
from assay.runner.executor import deliver
from assay.runner.resolve import MadeOnce
from assay.runner.writer import TrialWriter
from assay.suites.instantiate import instantiate


class SlowStore:
    """Takes ``delay`` seconds per batch and records the backlog it saw."""

    def __init__(self, delay: float, fail_after: int | None = None):
        self.delay, self.fail_after = delay, fail_after
        self.written: list[tuple[str, int]] = []
        self.lock = threading.Lock()

    def write_trials(self, batch: list[TrialResult]) -> int:
        time.sleep(self.delay)
        with self.lock:
            if self.fail_after is not None and len(self.written) >= self.fail_after:
                raise OSError("disk full")
            self.written.extend(r.key for r in batch)
        return len(batch)


def hello(conversation: object) -> str:  # an instant agent
    return "hello"


def result(i: int) -> TrialResult:
    return TrialResult("r", f"t{i}", 0, i, "c", 1, "user_stop")


async def produce(writer: TrialWriter, n: int, peaks: list[int]) -> None:
    flusher = asyncio.create_task(writer.run())
    try:
        for i in range(n):
            await deliver(writer.add, result(i))
            peaks.append(writer.uncommitted)
    finally:
        flusher.cancel()


def test_backlog_is_bounded_and_every_trial_is_written_once() -> None:
    store = SlowStore(delay=0.01)
    writer = TrialWriter(store, batch=8, max_pending=32)  # type: ignore[arg-type]
    peaks: list[int] = []
    started = time.perf_counter()
    asyncio.run(produce(writer, 600, peaks))
    writer.close()
    assert max(peaks) <= 32  # the producer waited for the store
    assert sorted(store.written) == sorted(result(i).key for i in range(600))
    assert time.perf_counter() - started >= 600 / 32 * 0.01 * 0.5  # it did have to wait


class CountingStore(SlowStore):
    def __init__(self, delay: float):
        super().__init__(delay)
        self.batches: list[int] = []

    def write_trials(self, batch: list[TrialResult]) -> int:
        self.batches.append(len(batch))
        return super().write_trials(batch)


async def produce_concurrently(writer: TrialWriter, n: int, workers: int) -> None:
    """``workers`` producers (a run's trial workers) handing ``n`` results over."""
    flusher = asyncio.create_task(writer.run())
    todo = iter(range(n))

    async def worker() -> None:
        for i in todo:
            await asyncio.sleep(0)  # the trial
            await deliver(writer.add, result(i))

    try:
        await asyncio.gather(*(worker() for _ in range(workers)))
    finally:
        flusher.cancel()


def test_a_full_backlog_is_written_in_batches_not_trial_by_trial() -> None:
    """Group commit: while a batch is being written, trials that come meanwhile wait for
    the next batch. Flushing each one on its own once the backlog was full made batches
    of one or two trials (a transaction each) and the store fell further behind."""
    store = CountingStore(delay=0.005)
    writer = TrialWriter(store, batch=64, max_pending=32)  # type: ignore[arg-type]
    asyncio.run(produce_concurrently(writer, 800, workers=50))
    writer.close()
    assert sorted(store.written) == sorted(result(i).key for i in range(800))
    assert sum(store.batches) == 800
    assert len(store.batches) <= 800 / 8, store.batches  # trial by trial: about 800


def test_a_failed_write_stops_the_producer() -> None:
    store = SlowStore(delay=0.001, fail_after=40)
    writer = TrialWriter(store, batch=8, max_pending=16)  # type: ignore[arg-type]
    with pytest.raises(OSError, match="disk full"):
        asyncio.run(produce(writer, 10_000, []))
    with pytest.raises(OSError):
        writer.close()


class GatedStore(SlowStore):
    """Writes its first batch only once ``gate`` is set."""

    def __init__(self) -> None:
        super().__init__(delay=0.0)
        self.gate, self.writing = threading.Event(), threading.Event()

    def write_trials(self, batch: list[TrialResult]) -> int:
        self.writing.set()
        assert self.gate.wait(10)
        return super().write_trials(batch)


def test_a_halted_writer_finishes_its_batch_and_keeps_the_others_until_closed() -> None:
    """After a failure the run's status is written before anything else (on a full disk
    its reserved room must not go to a batch): ``halt`` lets the batch being written end
    and keeps the ones handed over after it for ``close``."""
    store = GatedStore()
    writer = TrialWriter(store, batch=2, max_pending=100)  # type: ignore[arg-type]
    for i in range(6):  # three batches handed to the thread
        assert writer.add(result(i)) is None
    assert store.writing.wait(10)  # the first is being written
    halted = threading.Thread(target=writer.halt)
    halted.start()
    halted.join(0.2)
    assert halted.is_alive()  # it waits for the batch being written
    store.gate.set()
    halted.join(10)
    assert not halted.is_alive()
    assert store.written == [result(0).key, result(1).key]  # the others are kept...
    assert writer.uncommitted == 4
    writer.close()  # ...and written by close
    assert store.written == [result(i).key for i in range(6)]
    assert writer.uncommitted == 0


def counted_tasks(n: int, made: list[int]):
    """A task source making ``n`` tasks, each noted in ``made`` as it is made."""

    def parse():
        for i in range(n):
            made.append(i)
            yield assay.core.task.Task(id=f"t{i}")

    return parse


@pytest.mark.parametrize("spill", [False, True])
def test_tasks_are_made_once_and_read_again_in_order(spill: bool) -> None:
    made: list[int] = []
    parse = counted_tasks(50, made)
    source = MadeOnce(parse, spill=spill)
    first = [t.id for t in source()]
    assert [t.id for t in source()] == first == [t.id for t in source()] == [f"t{i}" for i in range(50)]
    assert made == list(range(50))
    half = MadeOnce(parse, spill=spill)
    made.clear()
    passes = half(), half()
    assert [next(passes[0]).id for _ in range(3)] == ["t0", "t1", "t2"]  # a pass given up half-way...
    assert [t.id for t in passes[1]] == first and made == list(range(50))  # ... left its tasks to the next
    retail = instantiate(assay.load_suite("retail"), 0)  # rich tasks: records, graders, scripts
    kept = MadeOnce(lambda: iter(retail), spill=spill)
    assert list(kept()) == retail
    assert list(kept()) == retail  # read back whole and equal, pass after pass


@pytest.mark.parametrize("spill", [False, True])
def test_two_threads_share_one_making_of_the_tasks(spill: bool) -> None:
    """The event loop takes the first trials' tasks while the store's writer thread
    takes every task's metadata: each task is made once, each pass sees them all in order."""
    made: list[int] = []
    source = MadeOnce(counted_tasks(2000, made), spill=spill)
    seen: dict[str, list[str]] = {}

    def take(name: str) -> None:
        seen[name] = [t.id for t in source()]

    threads = [threading.Thread(target=take, args=(f"pass{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    take("here")
    for t in threads:
        t.join()
    expected = [f"t{i}" for i in range(2000)]
    assert all(ids == expected for ids in seen.values()) and len(seen) == 4
    assert made == list(range(2000))


def test_an_error_making_a_task_reaches_every_pass() -> None:
    def parse():
        yield assay.core.task.Task(id="t0")
        raise SuiteError([])

    source = MadeOnce(parse)
    for _ in range(2):
        with pytest.raises(SuiteError):
            list(source())


def test_a_jsonl_suite_is_parsed_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = tmp_path / "suite"
    (suite / "tasks").mkdir(parents=True)
    (suite / "suite.yaml").write_text("name: lines\ndefaults: {trials: 3}\n")
    task = {"user": {"opening": "Say hello."}, "graders": [{"text": {"contains": "hello"}}]}
    lines = [json.dumps({"id": f"q{i}", **task}) for i in range(5)]
    (suite / "tasks" / "all.jsonl").write_text("\n".join(lines) + "\n")
    passes = []
    real = loader.iter_specs

    def counting(loaded):
        passes.append(1)
        return real(loaded)

    monkeypatch.setattr(loader, "iter_specs", counting)
    loaded = assay.load_suite(suite)
    assert loaded.streamed
    passes.clear()
    run = assay.run(loaded, agent="python:tests.runner.test_writer:hello", store=str(tmp_path / "s.db"))
    assert len(run.frame()) == 15 and run.summary().overall.success_rate == 1.0
    assert len(passes) == 1  # not once per trial index (k = 3) plus once to plan


def test_a_run_waits_for_a_slow_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through ``assay.run``: finished trials wait for room in the writer rather than pile
    up (the run's result callback once dropped the writer's awaitable, and the backlog
    grew with the run: a 100,000-trial run held trials 14 s on median before storing them)."""
    import assay.runner.api as api
    from assay.store import Store

    peaks: list[int] = []

    class Watched(TrialWriter):
        def __init__(self, store: Store, **kwargs: object) -> None:
            super().__init__(store, batch=4, max_pending=16, **kwargs)  # type: ignore[arg-type]

        def add(self, result: TrialResult):  # type: ignore[no-untyped-def]
            waiting = super().add(result)
            peaks.append(self.uncommitted)
            return waiting

    real = Store.write_trials

    def slow(self: Store, results: list[TrialResult]) -> int:
        time.sleep(0.02)
        return real(self, results)

    monkeypatch.setattr(api, "TrialWriter", Watched)
    monkeypatch.setattr(Store, "write_trials", slow)
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "suite.yaml").write_text(
        "name: many\ndefaults: {trials: 4}\ntasks:\n  - id: t\n    instances: 60\n"
        "    user: {opening: 'Say hello.'}\n    graders: [{text: {contains: hello}}]\n"
    )
    run = assay.run(
        str(suite), agent="python:tests.runner.test_writer:hello", store=str(tmp_path / "s.db"), concurrency=8
    )
    assert len(run.frame()) == 240
    assert max(peaks) <= 16 + 8  # the bound, plus the trials in flight when it was reached
