"""Each rule grader on hand-built transcripts: a passing and a failing case per rule."""

import contextlib
from datetime import datetime

import pytest
from tests.toydomain import DOMAIN

from assay.core import GraderSpec, InitialState, Message, Outcome, Reference, Task, ToolCall, Transcript
from assay.core.transcript import Span
from assay.graders import build_grader, confirmation_violations, normalize_text, process_metrics

NOW = datetime(2025, 1, 1)


def task(**kw) -> Task:
    base = {
        "id": "t",
        "as_of": NOW,
        "initial_state": InitialState(
            seed=0, records={"accounts": [{"account_id": "X", "owner": "x", "balance": 0}]}
        ),
        "reference": Reference(
            actions=[
                {"name": "get_balance", "args": {"account_id": "X"}},
                {"name": "deposit", "args": {"account_id": "X", "amount": 10}},
            ]
        ),
    }
    return Task(**{**base, **kw})


def call(name: str, cid: str = "c1", **args) -> ToolCall:
    return ToolCall(cid, name, args)


def transcript(*messages: Message) -> Transcript:
    return Transcript(list(messages))


def run_env(t: Task, calls: list[ToolCall]) -> Outcome:
    env = DOMAIN.environment(t, NOW)
    env.reset(t.initial_state.seed)
    for c in calls:
        with contextlib.suppress(Exception):
            env.call(c.name, c.arguments)
    return Outcome("user_stop", final_state=env.snapshot())


def grade(kind_params: dict, t: Task, tr: Transcript, outcome: Outcome):
    grader = build_grader(GraderSpec.model_validate(kind_params), DOMAIN)
    return grader.grade(t, tr, outcome)


CONFIRMED = [
    Message("user", "Please deposit 10 dollars into X."),
    Message("assistant", "I will deposit $10.00 into account X. Shall I proceed?"),
    Message("user", "Yes, please go ahead."),
    Message("assistant", "", tool_calls=[call("deposit", account_id="X", amount=10)]),
    Message("tool", "deposited 10 into X", tool_call_id="c1", name="deposit"),
    Message("assistant", "Done: deposited $10 into X. It is available in 3–5 business days."),
]


def test_state_gold_pass_and_fail() -> None:
    t = task()
    good = grade({"state": "gold"}, t, transcript(), run_env(t, [call("deposit", account_id="X", amount=10)]))
    assert good.passed is True
    bad = grade({"state": "gold"}, t, transcript(), run_env(t, [call("deposit", account_id="X", amount=20)]))
    assert bad.passed is False
    assert "accounts X.balance is 20" in bad.reason and "expected 10" in bad.reason
    nothing = grade({"state": "gold"}, t, transcript(), run_env(t, []))
    assert nothing.passed is False


def test_state_assertions() -> None:
    t = task()
    out = run_env(t, [call("deposit", account_id="X", amount=10)])
    ok = grade(
        {
            "state": {
                "gold": False,
                "assert": [{"table": "accounts", "key": "X", "field": "balance", "equals": 10}],
            }
        },
        t,
        transcript(),
        out,
    )
    assert ok.passed
    ko = grade(
        {
            "state": {
                "gold": False,
                "assert": [{"table": "accounts", "key": "X", "field": "balance", "equals": 11}],
            }
        },
        t,
        transcript(),
        out,
    )
    assert not ko.passed and "expected 11" in ko.reason
    gone = grade(
        {"state": {"gold": False, "assert": [{"table": "accounts", "key": "Q", "exists": True}]}},
        t,
        transcript(),
        out,
    )
    assert not gone.passed and "does not exist" in gone.reason


def test_state_with_broken_reference_is_skipped_not_passed() -> None:
    t = task(reference=Reference(actions=[{"name": "deposit", "args": {"account_id": "NOPE", "amount": 1}}]))
    result = grade({"state": "gold"}, t, transcript(), run_env(t, []))
    assert result.skipped and result.passed is None and result.category == "grader_error"
    assert "reference action 0 (deposit) failed" in result.reason


def test_communicate_normalises_and_detects_missing_and_forbidden() -> None:
    t = task()
    tr = transcript(*CONFIRMED)
    assert grade({"communicate": ["$10", "3-5 business days"]}, t, tr, Outcome("user_stop")).passed
    missing = grade({"communicate": ["refund id"]}, t, tr, Outcome("user_stop"))
    assert not missing.passed and "refund id" in missing.reason
    leaked = grade({"communicate": {"forbidden": ["account x"]}}, t, tr, Outcome("user_stop"))
    assert not leaked.passed and leaked.category == "disclosure"
    assert normalize_text("Refund of $1,299.00 — OK") == "refund of 1299 - ok"


def test_actions_required_forbidden_order_confirmation() -> None:
    t = task()
    tr = transcript(*CONFIRMED)
    out = Outcome("user_stop")
    assert grade(
        {
            "actions": {
                "required": [{"name": "deposit", "args": {"amount": 10.0}}],
                "confirm_before_write": True,
            }
        },
        t,
        tr,
        out,
    ).passed
    wrong_args = grade({"actions": {"required": [{"name": "deposit", "args": {"amount": 11}}]}}, t, tr, out)
    assert not wrong_args.passed and "required action not done" in wrong_args.reason
    forbidden = grade({"actions": {"forbidden": ["deposit"]}}, t, tr, out)
    assert not forbidden.passed and forbidden.category == "forbidden_action"
    order = grade({"actions": {"order": [["get_balance", "deposit"]]}}, t, tr, out)
    assert not order.passed and "deposit happened before get_balance" in order.reason


def test_confirmation_must_be_an_answer_to_a_question() -> None:
    hasty = transcript(
        Message("user", "Yes, deposit 10 into X."),  # consent not asked for
        Message("assistant", "", tool_calls=[call("deposit", account_id="X", amount=10)]),
        Message("tool", "ok", tool_call_id="c1"),
    )
    assert confirmation_violations(hasty, {"deposit"}) == ["deposit"]
    declined = transcript(
        Message("assistant", "Shall I deposit $10?"),
        Message("user", "No, please don't do that."),
        Message("assistant", "", tool_calls=[call("deposit", account_id="X", amount=10)]),
    )
    assert confirmation_violations(declined, {"deposit"}) == ["deposit"]
    assert confirmation_violations(transcript(*CONFIRMED), {"deposit"}) == []


def test_failed_call_does_not_satisfy_required_action() -> None:
    t = task()
    tr = transcript(
        Message("assistant", "", tool_calls=[call("deposit", account_id="X", amount=10)]),
        Message("tool", "Error: nope", tool_call_id="c1", error=True),
    )
    assert not grade({"actions": {"required": ["deposit"]}}, t, tr, Outcome("user_stop")).passed


@pytest.mark.parametrize(
    ("params", "answer", "passed"),
    [
        ({"exact": "Paris"}, "paris", True),
        ({"exact": "Paris"}, "Paris, France", False),
        ({"contains": ["paris", "france"]}, "It is Paris, France.", True),
        ({"contains": "lyon"}, "It is Paris.", False),
        ({"regex": r"\bparis\b"}, "PARIS it is", True),
        ({"regex": r"^\d+$"}, "12a", False),
        ({"numeric": 4.0, "tolerance": 0.01}, "The answer is 4.005", True),
        ({"numeric": 4.0}, "The answer is 5", False),
        ({"numeric": 100, "tolerance": 0.05, "relative": True}, "about 104", True),
        ({"numeric": 100}, "no numbers here", False),
    ],
)
def test_text_grader(params: dict, answer: str, passed: bool) -> None:
    tr = transcript(Message("user", "q"), Message("assistant", answer))
    assert grade({"text": params}, task(), tr, Outcome("user_stop")).passed is passed


def test_text_grader_without_expectation_is_skipped() -> None:
    tr = transcript(Message("user", "q"), Message("assistant", "a"))
    result = grade({"text": {}}, task(), tr, Outcome("user_stop"))
    assert result.skipped and result.passed is None


def test_process_metrics() -> None:
    tr = Transcript(
        [
            Message("user", "hi"),
            Message(
                "assistant",
                "",
                tool_calls=[
                    call("get_balance", "1", account_id="X"),
                    call("get_balance", "2", account_id="X"),
                    call("nope", "3"),
                ],
            ),
            Message("tool", "ok", tool_call_id="1"),
            Message("tool", "ok", tool_call_id="2"),
            Message("tool", "Error: unknown tool", tool_call_id="3", error=True),
            Message("assistant", "done"),
        ],
        [
            Span(1, "tool", "get_balance", 0.0),
            Span(2, "tool", "get_balance", 0.0),
            Span(3, "tool", "nope", 0.0, attributes={"error": "invalid"}),
        ],
    )
    m = process_metrics(task(), tr)
    assert m["tool_calls"] == 3 and m["redundant_calls"] == 1 and m["invalid_calls"] == 1
    assert m["tool_precision"] == pytest.approx(
        1 / 2
    )  # used {get_balance, nope}, necessary {get_balance, deposit}
    assert m["tool_recall"] == pytest.approx(1 / 2)
    assert m["turns"] == 2


def test_redundant_calls_are_those_of_equal_canonical_json() -> None:
    from enum import Enum

    from assay.core.hashing import canonical_json
    from assay.graders.process import _repeated

    class Color(str, Enum):
        RED = "red"

    def by_json(calls: list[ToolCall]) -> int:
        keys = [(c.name, canonical_json(c.arguments)) for c in calls]
        return len(keys) - len(set(keys))

    cases = [
        [call("f", a=1, b="x"), call("f", b="x", a=1), call("g", a=1, b="x")],  # order of names
        [call("f", a=1), call("f", a=1.0), call("f", a=True), call("f", a="1"), call("f", a=None)],
        [call("f", a=0.0), call("f", a=-0.0), call("f", a=float("nan")), call("f", a=float("nan"))],
        [call("f", a="red"), call("f", a=Color.RED)],  # not plain: canonical JSON for all
        [call("f", a=[1, 2]), call("f", a=[1, 2]), call("f", a={"b": 1})],
        [],
    ]
    for calls in cases:
        assert _repeated(calls) == by_json(calls), calls


def test_shared_graders_are_built_once_per_spec_domain_and_settings() -> None:
    from assay.graders import GraderSettings
    from assay.graders.state import StateGrader

    spec = GraderSpec.model_validate({"actions": {"required": ["deposit"]}})
    first = build_grader(spec, DOMAIN)
    assert build_grader(spec, DOMAIN) is first  # the trials of a task share it
    assert build_grader(spec, DOMAIN, GraderSettings(("openai:gpt-4o",))) is not first
    assert (
        build_grader(GraderSpec.model_validate({"actions": {"required": ["deposit"]}}), DOMAIN) is not first
    )
    text = GraderSpec.model_validate({"text": {"exact": "4"}})
    assert build_grader(text, DOMAIN) is not build_grader(text, DOMAIN)  # not declared shared

    class Mine(StateGrader):  # a subclass is not shared unless it says so
        kind = "mine"

    from assay.graders.registry import GRADERS

    GRADERS.register("mine", Mine)
    try:
        mine = GraderSpec(kind="mine")
        assert build_grader(mine, DOMAIN) is not build_grader(mine, DOMAIN)
    finally:
        GRADERS._entries.pop("mine", None)


def test_values_are_compared_as_before_with_numbers_read_once_per_text() -> None:
    from assay.graders import matching

    pairs = [
        ("#W3165533", "#W3165533"),
        ("$1,299.00", 1299),
        (" 12.5 ", "12.50"),
        ("nan", "nan"),
        ("inf", float("inf")),
        ("Ana", " ana "),
        (True, 1),
        ({"a": "1,000"}, {"a": 1000.0}),
        ("1" * 2100, "1" * 2100),  # long: read each time
    ]
    first = [matching.values_equal(a, b) for a, b in pairs]
    again = [matching.values_equal(a, b) for a, b in pairs]  # now from the cache
    assert first == again == [True, True, True, False, False, True, True, True, False]  # as before
    assert matching._text_number("#W1") is None and matching._text_number("$1,299.50") == 1299.5
