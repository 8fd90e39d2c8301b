"""The Ray executor: a local 2-CPU Ray on 127.0.0.1, compared trial by trial with the
local executor; worker deaths retried, never lost nor duplicated."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.toyagents import DepositAgent

import assay
from assay.core import Config, Limits, Trial
from assay.core.transcript import Transcript
from assay.errors import AssayError
from assay.runner import LocalExecutor, RunContext, TrialJob
from assay.runner.ray_executor import RayExecutor, import_ray, make_executor
from assay.store import Store

pytestmark = pytest.mark.slow  # a real Ray cluster per module; pytest -m slow and CI run it

SUITE = """\
name: bank
domain: toy
defaults: {trials: 3}
tasks:
  - {id: dep, template: deposit, instances: 4, tags: [money]}
  - {id: dep-hard, template: deposit, stratum: high_risk, difficulty: 3, tags: [money, hard]}
"""
TOY_AGENT = "python:tests.toyagents:DepositAgent"
HERE = "tests.runner.test_ray"
sys.modules.setdefault(HERE, sys.modules[__name__])


def _descendants(root: int) -> set[int]:
    """This process and every process it started (Ray's GCS, raylet, workers...)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        children = [child for child, parent in parents.items() if parent == pid and child not in found]
        found.update(children)
        frontier.extend(children)
    return found


def _socket_inodes(pids: set[int]) -> set[str]:
    inodes = set()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").glob("*"):
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    return inodes


def _listening(pids: set[int] | None = None) -> set[tuple[str, str]]:
    """(address, port) of the listening TCP sockets (of ``pids`` only, when given), from
    /proc (hex, as the kernel writes): other processes of the machine do not count."""
    inodes = _socket_inodes(pids) if pids is not None else None
    found = set()
    for name in ("tcp", "tcp6"):
        path = Path("/proc/net") / name
        if path.exists():
            for line in path.read_text().splitlines()[1:]:
                parts = line.split()
                if parts[3] == "0A" and (inodes is None or parts[9] in inodes):  # LISTEN
                    found.add(tuple(parts[1].rsplit(":", 1)))
    return found


LOOPBACK = {"0100007F", "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}


@pytest.fixture(scope="module")
def ray_executor():
    pytest.importorskip("ray", reason="ray is not installed (pip install 'assay[ray]')")
    before = _listening(_descendants(os.getpid()))
    executor = RayExecutor(num_cpus=2, runtime_env={"env_vars": {"ASSAY_PLUGINS": "tests.toydomain"}})
    executor.connect()
    # only the sockets of the processes this test started (Ray's), not the machine's
    executor.new_sockets = _listening(_descendants(os.getpid())) - before  # type: ignore[attr-defined]
    yield executor
    executor.close()


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    (tmp_path / "suite.yaml").write_text(SUITE)
    return tmp_path


def _trial_view(run: assay.Run) -> list[tuple[Any, ...]]:
    rows = []
    for r in run.results:
        transcript = run.transcript(r.task_id, r.trial_index)
        assert transcript is not None
        rows.append(
            (
                r.task_id,
                r.trial_index,
                r.seed,
                r.task_hash,
                r.reward,
                r.termination,
                r.error_category,
                [(g.grader, g.passed) for g in r.grades],
                r.outcome.final_hash if r.outcome else None,
                transcript.messages,
            )
        )
    return rows


def test_ray_binds_loopback_only(ray_executor: RayExecutor) -> None:
    sockets = ray_executor.new_sockets  # type: ignore[attr-defined]
    assert sockets, "Ray opened no listening socket?"
    assert {address for address, _ in sockets} <= LOOPBACK
    assert import_ray().get_runtime_context().gcs_address.startswith("127.0.0.1:")


def test_toy_suite_same_results_as_local(ray_executor: RayExecutor, suite_dir: Path) -> None:
    store = Store()
    options: dict[str, Any] = {"trials": 3, "seed": 7, "params": {"skip_confirm": 0.5}, "store": store}
    local = assay.run(str(suite_dir), agent=TOY_AGENT, run_id="local", **options)
    remote = assay.run(str(suite_dir), agent=TOY_AGENT, run_id="ray", executor=ray_executor, **options)
    assert len(remote.results) == 15
    assert _trial_view(remote) == _trial_view(local)
    assert 0 < remote.summary().to_dict()["overall"]["success_rate"] < 1  # seeded slips happen, identically


def test_retail_slice_same_results_as_local(ray_executor: RayExecutor) -> None:
    store = Store()
    tasks = ["refund-in-window-email", "cancel-pending", "approved-claim", "refund-15-days-old"]
    options: dict[str, Any] = {"trials": 2, "seed": 3, "task_ids": tasks, "store": store}
    local = assay.run("retail", agent="builtin:retail-flaky", params={"slip": 0.3}, run_id="l", **options)
    remote = assay.run(
        "retail",
        agent="builtin:retail-flaky",
        params={"slip": 0.3},
        run_id="r",
        executor=ray_executor,
        **options,
    )
    assert len(remote.results) == len(local.results) >= 18
    assert _trial_view(remote) == _trial_view(local)
    rewards = {r.reward for r in remote.results}
    assert rewards == {0, 1}


def test_fault_plans_travel_with_the_job(ray_executor: RayExecutor) -> None:
    store = Store()
    options: dict[str, Any] = {"trials": 2, "seed": 5, "task_ids": ["refund-in-window-email"], "store": store}
    plan = "get_order_details:timeout@0.5,get_user_details:format@0.3"
    local = assay.run("retail", run_id="l", faults=plan, **options)
    remote = assay.run("retail", run_id="r", faults=plan, executor=ray_executor, **options)
    assert _trial_view(remote) == _trial_view(local)
    spans = [
        s for r in remote.results for s in (remote.transcript(r.task_id, r.trial_index) or Transcript()).spans
    ]
    assert any(s.attributes.get("fault") for s in spans)


class CrashOnce(DepositAgent):
    """The deposit agent, except that the first trial to reach it (across processes,
    through an O_EXCL marker file) kills its worker process mid-trial."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.marker = ctx.params["marker"]

    async def respond(self, conversation, tools):
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return await super().respond(conversation, tools)
        os._exit(1)  # the worker dies: no exception, no result


class AlwaysCrash:
    def __init__(self, ctx):
        pass

    async def respond(self, conversation, tools):
        os._exit(1)


class UsageError:
    def __init__(self, ctx):
        pass

    async def respond(self, conversation, tools):
        raise AssayError("cassette.yaml: no recorded exchange matches this request")


def test_worker_dying_mid_trial_is_retried_not_lost_nor_duplicated(
    ray_executor: RayExecutor, suite_dir: Path, tmp_path: Path
) -> None:
    store = Store()
    marker = tmp_path / "crashed"
    run = assay.run(
        str(suite_dir),
        agent=f"python:{HERE}:CrashOnce",
        trials=3,
        seed=1,
        params={"marker": str(marker)},
        store=store,
        executor=ray_executor,
    )
    assert marker.exists()  # a worker did die mid-trial
    keys = [(r.task_id, r.trial_index) for r in run.results]
    assert len(keys) == len(set(keys)) == 5 * 3
    assert run.info.status == "finished"
    assert all(r.reward == 1 and r.termination == "user_stop" for r in run.results)


def test_trial_whose_worker_always_dies_is_a_harness_error(
    ray_executor: RayExecutor, suite_dir: Path
) -> None:
    fragile = RayExecutor(max_retries=1)  # joins the running Ray
    run = assay.run(
        str(suite_dir), agent=f"python:{HERE}:AlwaysCrash", trials=1, task_ids=["dep-hard"], executor=fragile
    )
    (result,) = run.results
    assert result.termination == "harness_error" and result.reward is None and result.root_cause == "HARNESS"
    assert result.outcome is not None and "2 attempts" in (result.outcome.error or "")
    assert run.summary().to_dict()["excluded"]["by_termination"] == {"harness_error": 1}


def test_usage_error_inside_a_trial_stops_the_run(ray_executor: RayExecutor, suite_dir: Path) -> None:
    with pytest.raises(AssayError) as caught:
        assay.run(str(suite_dir), agent=f"python:{HERE}:UsageError", trials=1, executor=ray_executor)
    assert str(caught.value) == "cassette.yaml: no recorded exchange matches this request"


def test_in_flight_window_is_bounded(ray_executor: RayExecutor) -> None:
    from assay.suites.instantiate import instantiate
    from assay.suites.loader import load_suite

    task = instantiate(load_suite("retail"), 0)[0]
    pulled, seen, most = 0, 0, 0

    def jobs():
        nonlocal pulled, most
        for i in range(12):
            pulled += 1
            most = max(most, pulled - seen)  # submitted, not yet returned
            yield TrialJob(
                RunContext("w", Config(agent="builtin:retail-careful"), domain="retail"),
                task,
                Trial(task.id, i, i),
                Limits(),
            )

    def on_result(result) -> None:
        nonlocal seen
        seen += 1

    # polls that time out (poll_s tiny) must not let the window grow
    asyncio.run(RayExecutor(max_in_flight=3, poll_s=0.001).execute(jobs(), on_result))
    assert seen == 12 and most <= 3


def test_make_executor_and_missing_ray(monkeypatch) -> None:
    assert isinstance(make_executor("local", 4, None), LocalExecutor)
    with pytest.raises(AssayError, match="--executor 'spark'"):
        make_executor("spark", 4, None)
    with pytest.raises(AssayError, match="needs --executor ray"):
        make_executor("local", 4, "auto")
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(AssayError, match=r"pip install 'assay\[ray\]'"):
        make_executor("ray", 4, None)
