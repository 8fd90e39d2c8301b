"""A new run's first trials start while the store's writer thread creates the run's
rows; no trial is stored before them, none at all when that fails, and the run stops
at once. Its last trials are written as they end, not held back to make a batch."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

import assay
from assay.core.results import TrialResult
from assay.errors import AssayError, ResumeError, SuiteError
from assay.runner.executor import deliver
from assay.runner.writer import TrialWriter
from assay.store.store import Store

SUITE = """\
name: starts
version: "1"
defaults: {trials: 1}
tasks:
  - id: t
    instances: 6
    user: {opening: "Say hello."}
    graders:
      - text: {contains: hello}
"""

STARTED: list[float] = []
HERE = f"python:{__name__}"  # the name pytest imported this module by: the agents share STARTED


class SlowAgent:
    """Answers after 0.3 s and counts the trials it was asked to play."""

    def __init__(self, ctx: object) -> None:
        STARTED.append(time.perf_counter())

    async def respond(self, conversation: object, tools: object) -> str:
        await asyncio.sleep(0.3)
        return "hello"


def hello(conversation: object) -> str:
    return "hello"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "suite.yaml").write_text(SUITE)
    return tmp_path / "suite"


def test_a_run_that_loses_the_race_for_its_id_stops_at_once_and_leaves_the_winner_alone(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes start the same --run-id: the check before the trials passes for
    both, the loser learns it when the writer thread creates the run. Its trials stop
    then (at most the first one had begun), it stores nothing, and the winner's run keeps
    its trials and its status."""
    store = Store(tmp_path / "s.db")
    winner = assay.run(str(suite), agent=f"{HERE}:hello", store=store, run_id="same")
    before = sorted((r.task_id, r.reward) for r in winner.results)
    has_run, asked = Store.has_run, []

    def not_yet(self: Store, run_id: str) -> bool:  # the other process creates it just after
        asked.append(run_id)
        return has_run(self, run_id) if len(asked) > 1 else False

    monkeypatch.setattr(Store, "has_run", not_yet)
    STARTED.clear()
    started = time.perf_counter()
    with pytest.raises(ResumeError, match="already exists"):
        assay.run(str(suite), agent=f"{HERE}:SlowAgent", store=store, run_id="same", concurrency=1)
    assert len(STARTED) <= 1, "the trials went on after the run could not be created"
    assert time.perf_counter() - started < 0.3 + 0.25  # not after its first trial ended
    again = assay.Run.load("same", store)
    assert sorted((r.task_id, r.reward) for r in again.results) == before
    assert store.get_run("same").status == "finished"  # not marked interrupted by the loser


def test_trials_that_end_before_the_run_is_created_wait_for_it(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slow store (a database across the network): the instant agent's trials all end
    while the run's rows are being written; each is stored after them, none lost."""
    create_run = Store.create_run

    def slow_create(self: Store, info: object, tasks: object) -> None:
        time.sleep(0.3)
        create_run(self, info, tasks)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "create_run", slow_create)
    run = assay.run(str(suite), agent=f"{HERE}:hello", store=str(tmp_path / "s.db"), trials=3)
    assert len(run.results) == 18 and run.summary().overall.success_rate == 1.0
    assert run.info.status == "finished"


def result(i: int) -> TrialResult:
    return TrialResult("r", f"t{i}", 0, i, "c", 1, "user_stop")


class Recording:
    def __init__(self) -> None:
        self.written: list[tuple[str, int]] = []

    def write_trials(self, batch: list[TrialResult]) -> int:
        self.written.extend(r.key for r in batch)
        return len(batch)


def test_once_the_jobs_are_all_taken_each_trial_is_written_as_it_ends() -> None:
    store = Recording()
    writer = TrialWriter(store, batch=1000, max_delay=60)  # type: ignore[arg-type]

    async def produce() -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
        for i in range(5):
            await deliver(writer.add, result(i))
        await asyncio.sleep(0.05)
        batching = list(store.written)  # waiting for a batch of 1,000 or a minute
        writer.drain()
        for i in range(5, 10):
            await deliver(writer.add, result(i))
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.05)
        return batching, list(store.written)

    batching, draining = asyncio.run(produce())
    writer.close()
    assert batching == []
    assert sorted(draining) == sorted(result(i).key for i in range(10))


def test_an_on_start_that_raises_leaves_the_run_interrupted(suite: Path, tmp_path: Path) -> None:
    """The run's rows were written before ``on_start`` failed: the run is there, stopped."""

    def boom(info: object) -> None:
        raise RuntimeError("on_start failed")

    store = Store(tmp_path / "s.db")
    with pytest.raises(RuntimeError, match="on_start failed"):
        assay.run(str(suite), agent=f"{HERE}:hello", store=store, run_id="r", on_start=boom)
    assert store.get_run("r").status == "interrupted"


TEMPLATED = """\
name: templated
version: "1"
templates: templates.py
defaults: {trials: 1}
tasks:
  - id: q
    template: greet
    instances: 40
"""

GREET = """\
import os
from assay.suites.templates import template


@template("greet")
def greet(ctx):
    if os.environ.get("GREET_FAILS_AT") == ctx.task_id:
        raise LookupError(f"no data for {ctx.task_id}")
    return {"user": {"opening": "Say hello."}, "graders": [{"text": {"contains": "hello"}}]}
"""


def test_a_template_that_fails_at_run_time_stops_the_run_before_any_trial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A suite with templates has its tasks made before the first trial (they run the
    suite's code): a template failing on the 31st task (here only at run time, not when
    the suite was loaded) is told before any trial starts, and nothing is stored."""
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "suite.yaml").write_text(TEMPLATED)
    (folder / "templates.py").write_text(GREET)
    loaded = assay.load_suite(folder)
    monkeypatch.setenv("GREET_FAILS_AT", "q-31")
    STARTED.clear()
    begun = time.perf_counter()
    with pytest.raises(SuiteError, match="template 'greet' failed: LookupError"):
        assay.run(loaded, agent=f"{HERE}:SlowAgent", store=str(tmp_path / "s.db"), concurrency=4)
    assert time.perf_counter() - begun < 1.5  # 40 trials of 0.3 s, 4 at a time, would take 3 s
    assert STARTED == []
    assert Store(tmp_path / "s.db").list_runs() == []


def test_filters_that_select_no_task_store_nothing(suite: Path, tmp_path: Path) -> None:
    """The run's task list is made in the writer thread: filters that select nothing are
    still one sentence, and no run is stored."""
    with pytest.raises(AssayError, match="no task of suite starts matches the filters given"):
        assay.run(str(suite), agent=f"{HERE}:hello", store=str(tmp_path / "s.db"), tags=["nowhere"])
    assert Store(tmp_path / "s.db").list_runs() == []


def test_the_run_returned_is_the_run_stored(suite: Path, tmp_path: Path) -> None:
    """``run`` and ``resume`` return the run from the info they wrote (its task list made
    in the writer thread, its final status), not read back: it must be what is stored."""
    store = Store(tmp_path / "s.db")
    run = assay.run(str(suite), agent=f"{HERE}:hello", store=store, trials=2)
    stored = Store(tmp_path / "s.db").get_run(run.run_id)
    assert run.info == stored and stored.status == "finished" and stored.finished_at is not None
    assert run.info.task_ids == [f"t-{i}" for i in range(1, 7)] and run.info.planned_trials == 12
    store.set_status(run.run_id, "interrupted")
    resumed = assay.resume(run.run_id, store=store, retry_errors=True)
    assert resumed.info == Store(tmp_path / "s.db").get_run(run.run_id)
    assert resumed.info.status == "finished"


@pytest.mark.parametrize("kind", ["copies", "kept_on_disk", "templated"])
def test_where_the_task_list_is_made(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Copies of a task kept in memory are made by the writer thread while the first
    trials run; a suite kept on disk (more than IN_MEMORY_TASKS tasks, JSONL files) is
    read whole first, so that no trial's result waits long for the run's rows (the
    durability window), and so is a suite with templates (they run the suite's code)."""
    from assay.runner import api, resolve

    if kind == "kept_on_disk":
        monkeypatch.setattr(resolve, "IN_MEMORY_TASKS", 3)
    if kind == "templated":
        (suite / "suite.yaml").write_text(TEMPLATED.replace("instances: 40", "instances: 6"))
        (suite / "templates.py").write_text(GREET)
    made_in, real = [], api._task_metas

    def recording(resolved: object) -> object:
        made_in.append(threading.current_thread().name)
        return real(resolved)  # type: ignore[arg-type]

    monkeypatch.setattr(api, "_task_metas", recording)
    run = assay.run(str(suite), agent=f"{HERE}:hello", store=str(tmp_path / "s.db"), trials=2)
    assert len(run.results) == 12 and run.info.planned_trials == 12
    assert len(made_in) == 1
    assert (made_in[0] == "MainThread") == (kind != "copies"), made_in
