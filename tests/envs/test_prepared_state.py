"""A task's records are applied to the base database once per task, not once per trial
(environments of the same task continue from one frozen database): each trial still
starts from exactly the task's state, writes of one trial never reach another, and two
tasks never share each other's records."""

from __future__ import annotations

import gc
from datetime import datetime

from tests.toydomain import DOMAIN

from assay.core import InitialState, Task
from assay.envs import diff, state_hash
from assay.envs import environment as environment_module

NOW = datetime(2025, 1, 1)


def _task(task_id: str, balance: int, data: dict | None = None) -> Task:
    records = {"accounts": [{"account_id": "A9", "owner": task_id, "balance": balance}]}
    return Task(id=task_id, initial_state=InitialState(seed=0, records=records, data=data or {}))


def _fresh_hash(task: Task) -> str:
    """The task's initial state hash built without the cache."""
    from tests.toydomain import generate

    db = generate(0)
    db.apply_records(task.initial_state.records)
    for table, rows in task.initial_state.data.items():
        for key, patch in rows.items():
            db.put(table, key, {**(db.get(table, key) or {}), **patch})
    return db.hash()


def test_trials_of_a_task_start_from_its_state_and_do_not_see_each_others_writes() -> None:
    task = _task("one", 10)
    first = DOMAIN.environment(task, NOW)
    first.reset(0)
    start = first.snapshot()
    first.call("deposit", {"account_id": "A9", "amount": 5})
    assert first.call("get_balance", {"account_id": "A9"}) == '{"account_id": "A9", "balance": 15.0}'
    second = DOMAIN.environment(task, NOW)
    second.reset(0)  # the same task again: from the cache
    assert second.call("get_balance", {"account_id": "A9"}) == '{"account_id": "A9", "balance": 10}'
    assert state_hash(second.snapshot()) == state_hash(start) == _fresh_hash(task)
    changes = diff(second.snapshot(), first.snapshot())
    assert [(c["table"], c["key"], c["old"], c["new"]) for c in changes] == [("accounts", "A9", 10, 15.0)]


def test_two_tasks_never_share_their_records() -> None:
    a, b = _task("a", 1), _task("b", 2, data={"accounts": {"A1": {"owner": "patched"}}})
    for task, balance in ((a, 1), (b, 2), (a, 1)):
        env = DOMAIN.environment(task, NOW)
        env.reset(0)
        assert env.db.get("accounts", "A9")["balance"] == balance
        assert env.db.get("accounts", "A1")["owner"] == ("patched" if task is b else "user1")
        assert state_hash(env.snapshot()) == _fresh_hash(task)


def test_the_cache_lets_go_of_a_task_that_is_gone() -> None:
    task = _task("gone", 3)
    env = DOMAIN.environment(task, NOW)
    env.reset(0)
    key = next(k for k, v in environment_module._PREPARED.items() if v[0]() is task.initial_state)
    del env, task
    gc.collect()
    assert key not in environment_module._PREPARED
