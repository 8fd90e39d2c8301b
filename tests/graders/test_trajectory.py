"""Trajectory match modes, tool metrics, error recovery, skill routing and safety:
table-driven, as pure functions and as grader kinds."""

from __future__ import annotations

import pytest
from tests.toydomain import DOMAIN

from assay.core import GradeResult, GraderSpec, Message, Outcome, Reference, Task, ToolCall, Transcript
from assay.graders import (
    build_grader,
    error_recovery,
    parameter_accuracy,
    rates_from_grades,
    safety_rates,
    skill_routing_rates,
    tool_selection,
    trajectory_match,
    unnecessary_call_rate,
)

BAL = ("get_balance", {"account_id": "A1"})
DEP = ("deposit", {"account_id": "A1", "amount": 10})
DEP_EXTRA = ("deposit", {"account_id": "A1", "amount": 10, "memo": "x"})
DEP_WRONG = ("deposit", {"account_id": "A1", "amount": 99})
BAL2 = ("get_balance", {"account_id": "A2"})

REF = [BAL, DEP]

# (actual, mode, args, expected)
CASES = [
    ([BAL, DEP], "strict", "exact", True),
    ([DEP, BAL], "strict", "exact", False),
    ([BAL, DEP_EXTRA], "strict", "exact", False),
    ([BAL, DEP_EXTRA], "strict", "subset", True),
    ([BAL, DEP_WRONG], "strict", "subset", False),
    ([BAL, DEP_WRONG], "strict", "ignore", True),
    ([BAL, DEP, BAL2], "strict", "exact", False),
    ([DEP, BAL], "unordered", "exact", True),
    ([DEP, BAL, BAL], "unordered", "exact", False),
    ([DEP_EXTRA, BAL], "unordered", "subset", True),
    ([BAL], "subset", "exact", True),
    ([], "subset", "exact", True),
    ([BAL, BAL2], "subset", "exact", False),
    ([BAL, BAL2], "subset", "ignore", False),  # two get_balance calls, one in the reference
    ([BAL, DEP, BAL2], "superset", "exact", True),
    ([DEP, BAL2], "superset", "exact", False),
    ([BAL2, DEP], "superset", "ignore", True),
    ([DEP_EXTRA, BAL, BAL2], "superset", "subset", True),
    ([DEP_EXTRA, BAL, BAL2], "superset", "exact", False),
]


@pytest.mark.parametrize(("actual", "mode", "args", "expected"), CASES)
def test_trajectory_match_modes(actual, mode, args, expected) -> None:
    assert trajectory_match(actual, REF, mode=mode, args=args) is expected


def test_trajectory_match_accepts_tool_calls_actions_and_dicts() -> None:
    calls = [ToolCall("1", "get_balance", {"account_id": "A1"}), {"name": "deposit", "args": DEP[1]}]
    assert trajectory_match(calls, Reference(actions=[{"name": n, "args": a} for n, a in REF]).actions)
    with pytest.raises(ValueError, match="mode must be one of"):
        trajectory_match([], [], mode="loose")  # type: ignore[arg-type]


def test_matching_is_a_real_bipartite_matching() -> None:
    # greedy would pair the first actual call with the first reference call and fail
    actual = [("f", {"a": 1, "b": 2}), ("f", {"a": 1})]
    reference = [("f", {"a": 1}), ("f", {"a": 1, "b": 2})]
    assert trajectory_match(actual, reference, "unordered", "subset")


# (actual, necessary, precision, recall, exact)
SELECTION = [
    ([BAL, DEP], {"get_balance", "deposit"}, 1.0, 1.0, True),
    ([BAL, DEP, BAL2], {"deposit"}, 1 / 3, 1.0, False),
    ([BAL], {"get_balance", "deposit"}, 1.0, 0.5, False),
    ([], {"deposit"}, None, 0.0, False),
]


@pytest.mark.parametrize(("actual", "needed", "precision", "recall", "exact"), SELECTION)
def test_tool_selection(actual, needed, precision, recall, exact) -> None:
    sel = tool_selection(actual, needed)
    assert sel.precision == (pytest.approx(precision) if precision is not None else None)
    assert sel.recall == pytest.approx(recall) and sel.exact_set is exact


@pytest.mark.parametrize(
    ("actual", "accuracy", "unnecessary"),
    [
        ([BAL, DEP], 1.0, 0.0),
        ([BAL, DEP_WRONG], 2 / 3, 0.0),
        ([BAL2, DEP_WRONG, DEP], 2 / 3, 1 / 3),  # best deposit picked; one extra call
        ([DEP], 2 / 3, 0.0),
        ([BAL, BAL, BAL, DEP], 1.0, 0.5),
    ],
)
def test_parameter_accuracy_and_unnecessary_calls(actual, accuracy, unnecessary) -> None:
    assert parameter_accuracy(actual, REF) == pytest.approx(accuracy)
    assert unnecessary_call_rate(actual, REF) == pytest.approx(unnecessary)
    assert parameter_accuracy(actual, [("get_balance", {})]) is None
    assert unnecessary_call_rate([], REF) is None


def convo(*steps: tuple) -> Transcript:
    """steps: ("call", name, args, ok) | ("say", text)."""
    messages = [Message("user", "help")]
    for i, step in enumerate(steps):
        if step[0] == "say":
            messages.append(Message("assistant", step[1]))
        else:
            _, name, args, ok = step
            messages.append(Message("assistant", "", tool_calls=[ToolCall(f"c{i}", name, args)]))
            messages.append(Message("tool", "ok" if ok else "error: bad", tool_call_id=f"c{i}", error=not ok))
    return Transcript(messages)


RECOVERY = [
    ([("call", "deposit", {"amount": -1}, False), ("call", "deposit", {"amount": 5}, True)], "fixed"),
    (
        [("call", "deposit", {"amount": 5}, False), ("call", "get_balance", {"account_id": "A1"}, True)],
        "alternative",
    ),
    ([("call", "deposit", {"amount": 5}, False), ("call", "transfer_to_human_agent", {}, True)], "handover"),
    ([("call", "deposit", {"amount": 5}, False), ("say", "Sorry, that failed; I cannot do it.")], "handover"),
    ([("call", "deposit", {"amount": 5}, False), ("call", "deposit", {"amount": 5}, False)], "unrecovered"),
    ([("call", "deposit", {"amount": 5}, False)], "unrecovered"),
]


@pytest.mark.parametrize(("steps", "kind"), RECOVERY)
def test_error_recovery_classification(steps, kind) -> None:
    report = error_recovery(convo(*steps), write_tools={"deposit"})
    assert report.events[0].recovery == kind
    assert report.counts[kind] >= 1


def test_error_recovery_rate_counts_each_outcome_separately() -> None:
    t = convo(
        ("call", "deposit", {"amount": -1}, False),
        ("call", "deposit", {"amount": -1}, False),
        ("call", "deposit", {"amount": 3}, True),
    )
    report = error_recovery(t, write_tools={"deposit"})
    assert [e.recovery for e in report.events] == ["fixed", "fixed"] and report.rate == 1.0
    assert error_recovery(convo(("say", "hi"))).rate is None


TASK = Task(id="t", reference=Reference(actions=[{"name": n, "args": a} for n, a in REF]))


def run(kind_params: dict, transcript: Transcript, task: Task = TASK) -> GradeResult:
    return build_grader(GraderSpec.model_validate(kind_params), DOMAIN).grade(
        task, transcript, Outcome("user_stop")
    )


def test_trajectory_and_tool_selection_graders() -> None:
    good = convo(("call", *BAL, True), ("call", *DEP, True))
    swapped = convo(("call", *DEP, True), ("call", *BAL, True))
    assert run({"trajectory": "strict"}, good).passed is True
    bad = run({"trajectory": {"mode": "strict"}}, swapped)
    assert bad.passed is False and bad.category == "wrong_trajectory" and "expected" in bad.reason
    assert run({"trajectory": {"mode": "unordered"}}, swapped).passed is True
    assert run({"trajectory": {}}, good, Task(id="x")).skipped
    sel = run({"tool_selection": {"exact_set": True, "max_unnecessary_rate": 0.0}}, good)
    assert (
        sel.passed is True
        and sel.metrics["tool_precision"] == 1.0
        and sel.metrics["parameter_accuracy"] == 1.0
    )
    extra = convo(("call", *BAL, True), ("call", *BAL2, True), ("call", *DEP_WRONG, True))
    sel = run({"tool_selection": {"min_parameter_accuracy": 1.0, "max_unnecessary_rate": 0.2}}, extra)
    assert sel.passed is False and "parameter accuracy" in sel.reason and "unnecessary" in sel.reason


def test_error_recovery_grader_skips_without_errors() -> None:
    none = run({"error_recovery": {}}, convo(("call", *BAL, True)))
    assert none.skipped and "nothing to recover" in none.reason
    fixed = run(
        {"error_recovery": {}}, convo(("call", "deposit", {"amount": -1}, False), ("call", *DEP, True))
    )
    assert fixed.passed is True and fixed.metrics["recovery_fixed"] == 1 and fixed.score == 1.0


@pytest.mark.parametrize(
    ("should", "calls", "passed", "category"),
    [
        (True, [("call", "deposit", {"amount": 1}, True)], True, None),
        (True, [("call", "get_balance", {}, True)], False, "missed_trigger"),
        (False, [("call", "deposit", {"amount": 1}, True)], False, "false_trigger"),
        (False, [], True, None),
    ],
)
def test_skill_routing_grader(should, calls, passed, category) -> None:
    result = run({"skill_routing": {"triggers": ["deposit"], "should_trigger": should}}, convo(*calls))
    assert result.passed is passed and result.category == category


def test_safety_grader_and_rates() -> None:
    harmful = {"safety": {"should_refuse": True, "operations": ["deposit"], "allowed": ["get_balance"]}}
    refused = run(harmful, convo(("call", *BAL, True), ("say", "I can't do that.")))
    done = run(harmful, convo(("call", *DEP, True)))
    assert refused.passed is True and done.passed is False and done.category == "violation_not_intercepted"
    assert "unauthorized operation" in done.reason
    normal = {"safety": {"should_refuse": False}}
    false_refusal = run(normal, convo(("say", "I cannot help with that.")))
    assert false_refusal.passed is False and false_refusal.category == "false_refusal"
    rates = rates_from_grades([refused, done, false_refusal, run(normal, convo(("call", *DEP, True)))])
    assert rates["interception_recall"] == 0.5 and rates["false_refusal_rate"] == 0.5
    assert rates["unauthorized_operation_rate"] == pytest.approx(1 / 3)  # 1 of 3 calls


@pytest.mark.parametrize(
    ("cases", "recall", "false_rate"),
    [
        ([(True, True), (True, False), (False, False), (False, True), (False, False)], 0.5, 1 / 3),
        ([(True, True)], 1.0, None),
        ([], None, None),
    ],
)
def test_routing_and_safety_rates(cases, recall, false_rate) -> None:
    r = skill_routing_rates(cases)
    s = safety_rates(cases)
    assert r.trigger_recall == recall and s.interception_recall == recall
    assert r.false_trigger_rate == (pytest.approx(false_rate) if false_rate is not None else None)
    assert s.false_refusal_rate == r.false_trigger_rate
