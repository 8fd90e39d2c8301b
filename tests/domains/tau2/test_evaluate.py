"""tau2's evaluator rules, one by one, on small crafted trajectories."""

from __future__ import annotations

from assay.domains.tau2 import (
    Action,
    Message,
    Task,
    Tau2Domain,
    ToolCall,
    check_actions,
    check_communicate,
    compare_databases,
    evaluate,
)
from assay.envs.state import Database


def _task(**criteria: object) -> Task:
    return Task.model_validate({"id": "t", "evaluation_criteria": criteria})


def test_communicate_lowercases_and_drops_commas_from_messages_only() -> None:
    messages = [
        Message(role="user", content="The refund is 1,234"),
        Message(role="assistant", content="Your refund is $1,234.50, Mastercard."),
        Message(role="assistant", content="   "),
    ]
    checks = check_communicate(_task(communicate_info=["1234.50", "MASTERCARD", "1,234"]), messages)
    assert checks is not None
    assert [(c.met, c.message_index) for c in checks] == [(True, 1), (True, 1), (False, None)]
    assert check_communicate(_task(communicate_info=[]), messages) is None


def test_actions_match_by_name_and_compare_args() -> None:
    calls = [
        ToolCall(id="1", name="f", arguments={"a": 1, "b": 2}),
        ToolCall(id="2", name="g", arguments={"x": 1}, requestor="user"),
    ]
    messages = [Message(role="assistant", tool_calls=calls[:1]), Message(role="user", tool_calls=calls[1:])]
    actions = [
        {"name": "f", "arguments": {"a": 1, "b": 2}},
        {"name": "f", "arguments": {"a": 1, "b": 3}},
        {"name": "f", "arguments": {"a": 1, "b": 3}, "compare_args": ["a"]},
        {"name": "f", "arguments": {}, "compare_args": []},
        {"name": "g", "arguments": {"x": 1}, "requestor": "user"},
        {"name": "h", "arguments": {}},
    ]
    checks = check_actions(_task(actions=actions), messages)
    assert checks is not None
    assert [c.met for c in checks] == [True, False, True, True, True, False]
    assert (
        Action(name="f", arguments={"a": 1}).matches(ToolCall(name="f", arguments={"a": 1, "extra": 0}))
        is False
    )


def test_database_check_is_type_and_order_sensitive(telecom: Tau2Domain) -> None:
    keys = telecom.loaded.spec.keys

    def state(change: dict | None = None, reorder: bool = False):  # type: ignore[no-untyped-def]
        db = Database(keys, telecom.loaded.base)
        if change:
            db.put("plans", "P1001", {**db.get("plans", "P1001"), **change})  # type: ignore[dict-item]
        if reorder:
            plan = db.get("plans", "P1001")
            db.delete("plans", "P1001")
            db.snapshot()
            db.put("plans", "P1001", plan)  # type: ignore[arg-type]
        return db.snapshot()

    base = state()
    assert compare_databases(telecom, base, state()).match
    assert not compare_databases(telecom, base, state({"data_limit_gb": 5})).match  # 5 is not 5.0
    assert compare_databases(telecom, base, state({"data_limit_gb": 5.0})).match
    moved = compare_databases(telecom, base, state(reorder=True))
    assert (moved.match, moved.agent_match, moved.user_match) == (False, False, True)


def test_reward_is_the_product_of_the_basis(mock: Tau2Domain) -> None:
    call = ToolCall(
        id="c1", name="update_task_status", arguments={"task_id": "task_1", "status": "completed"}
    )
    messages = [
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", id="c1", content="{}"),
        Message(role="assistant", content="Done, it is completed."),
    ]
    actions = [{"name": "update_task_status", "arguments": {"task_id": "task_1", "status": "completed"}}]
    good = _task(
        actions=actions, communicate_info=["completed"], reward_basis=["DB", "COMMUNICATE", "ACTION"]
    )
    verdict = evaluate(mock, good, messages, "user_stop")
    assert (verdict.reward, verdict.breakdown) == (1.0, {"DB": 1.0, "ACTION": 1.0, "COMMUNICATE": 1.0})
    other = [{"name": "update_task_status", "arguments": {"task_id": "task_1", "status": "pending"}}]
    bad = _task(actions=other, reward_basis=["DB"])
    assert evaluate(mock, bad, messages, "agent_stop").reward == 0.0
    assert evaluate(mock, good, messages, "max_steps").reward == 0.0
    judged = _task(actions=actions, reward_basis=["DB", "NL_ASSERTION"])
    assert evaluate(mock, judged, messages, "user_stop").reward is None


def test_initialization_data_merges_records_and_replaces_lists(mock: Tau2Domain, telecom: Tau2Domain) -> None:
    from assay.domains.tau2 import InitialState

    merged = mock.environment_for(
        InitialState.model_validate(
            {"initialization_data": {"agent_data": {"users": {"user_1": {"tasks": ["task_1", "task_9"]}}}}}
        )
    )
    merged.reset(0)
    assert merged.snapshot()["users"]["user_1"] == {
        "user_id": "user_1",
        "name": "Test User",
        "tasks": ["task_1", "task_9"],
    }
    plans = list(telecom.loaded.base["plans"].values())
    swapped = [plans[1], plans[0]]
    env = telecom.environment_for(
        InitialState.model_validate({"initialization_data": {"agent_data": {"plans": swapped}}})
    )
    env.reset(0)
    assert list(env.snapshot()["plans"]) == [plans[1]["plan_id"], plans[0]["plan_id"]]


def test_assertions_hold_on_a_final_state_without_changing_it(telecom: Tau2Domain) -> None:
    from assay.domains.tau2 import EnvAssertion, assertion_holds, load_tasks

    task = next(t for t in load_tasks(telecom.loaded.tasks_path) if t.evaluation_criteria.env_assertions)  # type: ignore[union-attr]
    env = telecom.task_environment(task)
    final = env.snapshot()
    checks = task.evaluation_criteria.env_assertions  # type: ignore[union-attr]
    assert [assertion_holds(telecom, final, a) for a in checks] == [env.run_assertion(a) for a in checks]
    assert assertion_holds(telecom, final.to_dict(), checks[0]) == assertion_holds(telecom, final, checks[0])
    flipped = checks[0].model_copy(update={"assert_value": not checks[0].assert_value})
    assert assertion_holds(telecom, final, flipped) != assertion_holds(telecom, final, checks[0])
    assert final.hash() == env.snapshot().hash()
    assert isinstance(flipped, EnvAssertion)
