"""The world-checking graders' new parts: env_assert, tau2's communicate and action
rules, requestors and compare_args, failed reference actions, nested ignore paths, and
confirmation checks that look at the agent's write tools only."""

from __future__ import annotations

from datetime import datetime

import pytest
from tests.toydomain import DOMAIN as TOY
from tests.toyphone import DOMAIN as PHONE

from assay.core import GraderSpec, Message, Outcome, Task, ToolCall, Transcript
from assay.graders import build_grader, check_grader_spec

NOW = datetime(2025, 1, 1)


def grade(spec: dict, task: Task, transcript: Transcript, outcome: Outcome, domain=PHONE):  # type: ignore[no-untyped-def]
    return build_grader(GraderSpec.model_validate(spec), domain).grade(task, transcript, outcome)


def end_state(task: Task, calls: list[tuple[str, dict, str]], domain=PHONE) -> Outcome:  # type: ignore[no-untyped-def]
    env = domain.environment(task, NOW)
    env.reset(0)
    for name, args, side in calls:
        env.call(name, args, for_=side)
    return Outcome("user_stop", final_state=env.snapshot())


TASK = Task(id="t", as_of=NOW)


def test_env_assert_checks_both_sides_and_expect() -> None:
    spec = {
        "env_assert": [
            {"name": "line_active", "args": {"line_id": "L1"}},
            {"name": "phone_online", "requestor": "user"},
        ]
    }
    before = end_state(TASK, [])
    failed = grade(spec, TASK, Transcript(), before)
    assert failed.passed is False and failed.metrics == {"met[0]": 0.0, "met[1]": 0.0}
    assert "agent:line_active(line_id='L1') does not hold" in failed.reason
    after = end_state(TASK, [("activate_line", {"line_id": "L1"}, "agent"), ("toggle_airplane", {}, "user")])
    passed = grade(spec, TASK, Transcript(), after)
    assert passed.passed is True and passed.metrics == {"met[0]": 1.0, "met[1]": 1.0}
    negated = grade(
        {"env_assert": [{"name": "phone_online", "requestor": "user", "expect": False}]},
        TASK,
        Transcript(),
        before,
    )
    assert negated.passed is True


def test_env_assert_that_cannot_run_is_a_grader_error_and_validate_names_unknown_ones() -> None:
    broken = grade(
        {"env_assert": [{"name": "broken", "args": {"line_id": "L9"}}]},
        TASK,
        Transcript(),
        end_state(TASK, []),
    )
    assert broken.passed is None and broken.category == "grader_error" and "TypeError" in broken.reason
    problems = check_grader_spec(GraderSpec.model_validate({"env_assert": [{"name": "nope"}]}), PHONE, TASK)
    assert problems == [
        (("assertions", 0, "name"), "unknown agent assertion 'nope'; assertions: line_active, broken")
    ]
    problems = check_grader_spec(
        GraderSpec.model_validate({"env_assert": [{"name": "line_active", "requestor": "user"}]}), PHONE, TASK
    )
    assert "unknown user assertion 'line_active'" in problems[0][1]
    assert check_grader_spec(GraderSpec.model_validate({"env_assert": []}), TOY, TASK) == [
        ((), "domain 'toy' has no assertion functions")
    ]


def test_communicate_tau2_mode_is_per_message_and_drops_commas() -> None:
    said = Transcript(
        [Message("assistant", "Your refund of 1,628 dollars"), Message("assistant", "is on its way.")]
    )
    normalized = grade({"communicate": ["1628 dollars is on"]}, TASK, said, Outcome("user_stop"))
    tau2 = grade(
        {"communicate": {"required": ["1628 dollars is on"], "mode": "tau2"}},
        TASK,
        said,
        Outcome("user_stop"),
    )
    assert normalized.passed is True and tau2.passed is False  # tau2 looks in one message at a time
    assert grade(
        {"communicate": {"required": ["REFUND OF 1628"], "mode": "tau2"}}, TASK, said, Outcome("user_stop")
    ).passed
    comma = grade({"communicate": {"required": ["1,628"], "mode": "tau2"}}, TASK, said, Outcome("user_stop"))
    assert comma.passed is False and comma.metrics == {"met[0]": 0.0}  # as in tau2: never matches


def _calls(*calls: ToolCall, errors: tuple[str, ...] = ()) -> Transcript:
    messages: list[Message] = []
    for c in calls:
        role = "user" if c.requestor == "user" else "assistant"
        messages.append(Message(role, "", tool_calls=[c]))
        messages.append(
            Message("tool", "Error: no" if c.id in errors else "ok", tool_call_id=c.id, error=c.id in errors)
        )
    return Transcript(messages)


def test_actions_tau2_rule_counts_failed_calls_and_compares_values_strictly() -> None:
    failed_call = _calls(ToolCall("a", "activate_line", {"line_id": "L1"}), errors=("a",))
    spec = {"required": [{"name": "activate_line", "args": {"line_id": "L1"}}]}
    assert grade({"actions": spec}, TASK, failed_call, Outcome("user_stop")).passed is False
    assert (
        grade({"actions": {**spec, "rule": "tau2"}}, TASK, failed_call, Outcome("user_stop")).passed is True
    )
    amount = _calls(ToolCall("a", "refuel", {"gb": "2"}))
    loose = {"required": [{"name": "refuel", "args": {"gb": 2.0}}]}
    assert (
        grade({"actions": loose}, TASK, amount, Outcome("user_stop")).passed is True
    )  # 2.0 == "2" leniently
    assert grade({"actions": {**loose, "rule": "tau2"}}, TASK, amount, Outcome("user_stop")).passed is False
    # tau2's rule compares the call's own arguments when compare_args is None
    fewer = _calls(ToolCall("a", "refuel", {"gb": 2.0}))
    more = {"rule": "tau2", "required": [{"name": "refuel", "args": {"gb": 2.0, "line": "L1"}}]}
    assert grade({"actions": more}, TASK, fewer, Outcome("user_stop")).passed is True
    named = {
        "rule": "tau2",
        "required": [{"name": "refuel", "args": {"gb": 3.0, "line": "L1"}, "compare_args": ["line"]}],
    }
    assert grade(
        {"actions": named},
        TASK,
        _calls(ToolCall("a", "refuel", {"gb": 2.0, "line": "L1"})),
        Outcome("user_stop"),
    ).passed


def test_actions_requestor_picks_the_side_and_user_calls_count() -> None:
    user_toggle = _calls(ToolCall("u1", "toggle_airplane", {}, "user"))
    assert grade(
        {"actions": {"required": [{"name": "toggle_airplane", "requestor": "user"}]}},
        TASK,
        user_toggle,
        Outcome("user_stop"),
    ).passed
    assert grade(
        {"actions": {"required": ["toggle_airplane"]}}, TASK, user_toggle, Outcome("user_stop")
    ).passed
    wrong_side = grade(
        {"actions": {"required": [{"name": "toggle_airplane", "requestor": "agent"}]}},
        TASK,
        user_toggle,
        Outcome("user_stop"),
    )
    assert wrong_side.passed is False and wrong_side.metrics == {"met[0]": 0.0}


def test_confirmation_is_about_the_agents_write_tools_only() -> None:
    transcript = Transcript(
        [
            Message("assistant", "Please toggle airplane mode."),
            Message("user", "", tool_calls=[ToolCall("u1", "toggle_airplane", {}, "user")]),
            Message("tool", "signal ok", tool_call_id="u1"),
            Message("user", "Done, signal ok."),
            Message("assistant", "Shall I activate line L1?"),
            Message("user", "Yes."),
            Message("assistant", "", tool_calls=[ToolCall("a1", "activate_line", {"line_id": "L1"})]),
            Message("tool", "L1 active", tool_call_id="a1"),
        ]
    )
    result = grade({"actions": {"confirm_before_write": True}}, TASK, transcript, Outcome("user_stop"))
    assert result.passed is True, result.reason
    unconfirmed = Transcript([transcript.messages[0], *transcript.messages[6:]])
    result = grade({"actions": {"confirm_before_write": True}}, TASK, unconfirmed, Outcome("user_stop"))
    assert (
        result.passed is False and "activate_line" in result.reason and "toggle_airplane" not in result.reason
    )


def test_state_gold_ignores_failed_reference_actions_only_when_asked() -> None:
    task = Task(
        id="t",
        as_of=NOW,
        reference={
            "actions": [
                {"name": "get_line", "args": {"line_id": "L9"}},
                {"name": "activate_line", "args": {"line_id": "L1"}},
            ]
        },
    )
    done = end_state(task, [("activate_line", {"line_id": "L1"}, "agent")])
    strict = grade({"state": "gold"}, task, Transcript(), done)
    assert (
        strict.skipped
        and strict.category == "grader_error"
        and "reference action 0 (get_line) failed" in strict.reason
    )
    lenient = grade({"state": {"gold": True, "failed_actions": "ignore"}}, task, Transcript(), done)
    assert lenient.passed is True
    assert "reference action 0 (get_line) failed and was ignored: no line L9" in lenient.reason
    assert lenient.metrics == {"ignored_gold_actions": 1.0}


def test_state_gold_replays_user_actions_on_the_users_side() -> None:
    task = Task(id="t", as_of=NOW, reference={"actions": [{"name": "toggle_airplane", "requestor": "user"}]})
    assert grade(
        {"state": "gold"}, task, Transcript(), end_state(task, [("toggle_airplane", {}, "user")])
    ).passed
    assert not grade({"state": "gold"}, task, Transcript(), end_state(task, [])).passed


@pytest.mark.parametrize(
    ("ignore", "passes"),
    [
        ([], False),
        (["lines.plan"], True),
        (["lines.plan.gb"], True),
        (["lines.pl"], False),
        (["lines"], True),
        (["lines.active"], False),
    ],
)
def test_state_ignore_covers_nested_paths(ignore: list[str], passes: bool) -> None:
    task = Task(id="t", as_of=NOW)
    outcome = end_state(task, [])
    env = PHONE.environment(task, NOW)
    env.reset(0)
    env.db.update("lines", "L1", plan={"name": "basic", "gb": 50})
    changed = Outcome("user_stop", final_state=env.snapshot())
    result = grade({"state": {"gold": True, "ignore": ignore}}, task, Transcript(), changed)
    assert result.passed is passes, result.reason
    assert grade({"state": {"gold": True, "ignore": ignore}}, task, Transcript(), outcome).passed
