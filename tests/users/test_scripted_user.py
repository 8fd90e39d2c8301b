"""The scripted user: progressive disclosure, no invention, confirmations, pushback."""

import itertools

import pytest

from assay.core import Message, UserScenario
from assay.users import STOP, TRANSFER, ScriptedUser, questions

SCENARIO = UserScenario(
    opening="Hi, something is wrong with an order of mine.",
    goal="I'd like a refund for the headphones.",
    known={"email": "lena.park@example.com", "order_id": "#W1234567", "zip": "02139", "name": "Lena Park"},
    pushback=["But customer service already approved it!"],
    follow_ups=["Also, can you tell me when it shipped?"],
)
ASKS = {
    "email": "Could you give me your email address?",
    "order_id": "What is the order id?",
    "zip": "What is your zip code?",
    "name": "May I have your full name?",
}


def converse(user: ScriptedUser, agent_lines: list[str]) -> list[str]:
    conversation = [Message("user", user.next_message([]))]
    for line in agent_lines:
        conversation.append(Message("assistant", line))
        conversation.append(Message("user", user.next_message(conversation)))
    return [m.content for m in conversation if m.role == "user"]


@pytest.mark.parametrize("order", list(itertools.permutations(ASKS)))
def test_a_fact_never_appears_before_it_is_asked_for(order: tuple[str, ...]) -> None:
    user = ScriptedUser(SCENARIO)
    replies = converse(user, [ASKS[k] for k in order])
    for i, key in enumerate(order):
        value = str(SCENARIO.known[key])
        # reply 0 is the opening; reply i+1 answers the i-th question
        assert all(value not in r for r in replies[: i + 1]), f"{key} disclosed before it was asked"
        assert value in replies[i + 1]


def test_unknown_facts_get_i_dont_know_never_an_invention() -> None:
    user = ScriptedUser(UserScenario(known={"email": "a@b.c"}))
    reply = converse(user, ["What is the order id?"])[1]
    assert reply == "I don't know my order id."
    reply = converse(user, ["What is your phone number?"])[1]
    assert "phone" not in reply or "don't know" in reply


def test_email_or_name_and_zip_gives_one_identity() -> None:
    both = ScriptedUser(SCENARIO)
    reply = converse(both, ["Could you provide your email, or your name and zip code?"])[1]
    assert reply == "My email is lena.park@example.com."
    no_email = ScriptedUser(UserScenario(known={"name": "Lena Park", "zip": "02139"}))
    reply = converse(no_email, ["Could you provide your email, or your name and zip code?"])[1]
    assert reply == "My name is Lena Park. My zip code is 02139."


def test_flow_goal_confirmation_pushback_followup_stop() -> None:
    user = ScriptedUser(SCENARIO)
    replies = converse(
        user,
        [
            "Hello! How can I help you today?",
            "I can refund order #W1234567 for $99. Shall I proceed (yes/no)?",
            "I'm sorry, that order is outside the 7-day refund window.",
            "I understand, but I still cannot refund it.",
            "It shipped on May 2.",
        ],
    )
    assert replies == [
        SCENARIO.opening,
        SCENARIO.goal,
        "Yes, please go ahead.",
        SCENARIO.pushback[0],
        SCENARIO.follow_ups[0],
        f"Thank you, that's all. {STOP}",
    ]


def test_declines_when_scenario_says_so_and_detects_transfer() -> None:
    user = ScriptedUser(UserScenario(goal="Cancel it.", confirm=False))
    assert converse(user, ["Shall I cancel order #W1?"])[1] == "No, please don't do that."
    assert converse(user, ["I'm transferring you to a human agent."])[1] == TRANSFER


def test_only_question_sentences_count_as_asks() -> None:
    assert questions("I sent it to your email. What is your zip code?") == ["What is your zip code?"]
    user = ScriptedUser(SCENARIO)
    replies = converse(user, ["Hello! How can I help you today?", "A receipt went to your email."])
    assert SCENARIO.known["email"] not in replies[-1]


def test_deterministic() -> None:
    lines = ["How can I help?", "What is your email?", "Done."]
    assert converse(ScriptedUser(SCENARIO), lines) == converse(ScriptedUser(SCENARIO), lines)


def test_email_address_is_not_a_postal_address() -> None:
    user = ScriptedUser(UserScenario(known={"name": "Lena Park", "zip": "02139", "address": "1 Main St"}))
    reply = converse(user, ["Could you provide your email address, or your name and zip code?"])[1]
    assert reply == "My name is Lena Park. My zip code is 02139."


def test_confirmation_naming_given_facts_gets_yes_or_no() -> None:
    scenario = UserScenario(
        goal="Change my address.", known={"order_id": "#W1234567", "address": "1 Main St"}
    )
    user = ScriptedUser(scenario)
    replies = converse(
        user,
        [
            "How can I help?",
            "What is the order id?",
            "What is the new address?",
            "Shall I change the shipping address of order #W1234567 to 1 Main St?",
        ],
    )
    assert replies[-1] == "Yes, please go ahead."
    # a fact not given yet is still disclosed when a confirmation-like question asks for it
    fresh = ScriptedUser(scenario)
    assert converse(fresh, ["Can you confirm the order id?"])[1] == "The order id is #W1234567."


def test_cached_readings_of_a_question_are_per_vocabulary_not_shared() -> None:
    """What a question asks for is cached by (sentence, vocabulary): a user whose
    scenario knows a custom fact finds it asked, one that does not know it still gets
    the common facts only, whichever asked first."""
    question = "What is your loyalty number and your email?"
    plain = ScriptedUser(SCENARIO)
    custom = ScriptedUser(SCENARIO.model_copy(update={"known": {**SCENARIO.known, "loyalty_number": "L-77"}}))
    for _ in range(2):  # a second time from the cache
        assert plain.asked_facts(question) == ["email"]
        assert custom.asked_facts(question) == ["email", "loyalty_number"]
        assert custom.disclose(custom.asked_facts(question)) == (
            "My email is lena.park@example.com. My loyalty number is L-77."
        )
    assert questions(question) == [question]
    listed = questions("Thanks. Which one?")
    listed.append("changed by the caller")  # a fresh list each time: the cache is not shared
    assert questions("Thanks. Which one?") == ["Which one?"]


class _Unmemoised(ScriptedUser):
    """A subclass: its replies are computed every time (subclasses are not memoised)."""


def _replies(user: ScriptedUser, agent_lines: list[str]) -> list[str]:
    import asyncio

    conversation = [Message("user", asyncio.run(user.reply([])).text)]
    for line in agent_lines:
        conversation.append(Message("assistant", line))
        conversation.append(Message("user", asyncio.run(user.reply(conversation)).text))
    return [m.content for m in conversation if m.role == "user"]


def test_memoised_replies_are_the_replies_computed_afresh() -> None:
    """Replies are memoised per scenario and conversation (the k trials of a task share
    them): from the memo or not, each is the one computed afresh; another conversation
    or another scenario (even an equal one) is another reply."""
    lines = [ASKS["email"], "Would you like me to proceed (yes/no)?", "Anything else?", "Bye."]
    fresh = _replies(_Unmemoised(SCENARIO), lines)
    assert ScriptedUser(SCENARIO)._walk is not None and _Unmemoised(SCENARIO)._walk is None
    assert _replies(ScriptedUser(SCENARIO), lines) == fresh
    assert _replies(ScriptedUser(SCENARIO), lines) == fresh  # now from the memo
    other = [ASKS["zip"], *lines[1:]]
    assert _replies(ScriptedUser(SCENARIO), other) == _replies(_Unmemoised(SCENARIO), other)
    declining = SCENARIO.model_copy(update={"confirm": False})
    assert _replies(ScriptedUser(declining), lines) == _replies(_Unmemoised(declining), lines)
    assert _replies(ScriptedUser(declining), lines) != fresh


def test_a_scenario_takes_its_memo_with_it() -> None:
    import gc

    from assay.users import scripted

    scenario = SCENARIO.model_copy()
    _replies(ScriptedUser(scenario), [ASKS["email"]])
    root = scripted._ROOTS[id(scenario)][1]
    assert root in scripted._MEMO.roots
    del scenario
    gc.collect()
    assert root not in scripted._MEMO.roots


def test_tool_calls_of_the_user_are_not_memoised() -> None:
    import asyncio

    from assay.core.task import Action

    scenario = UserScenario(goal="Fix it.", actions=[Action(name="toggle_airplane_mode", args={"on": False})])
    conversation = [Message("user", "Fix it."), Message("assistant", "Please use toggle_airplane_mode.")]
    first = asyncio.run(ScriptedUser(scenario).reply(conversation))
    again = asyncio.run(ScriptedUser(scenario).reply(conversation))
    assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
        ("user-1", "toggle_airplane_mode", {"on": False})
    ]
    assert [(c.id, c.name, c.arguments) for c in again.tool_calls] == [
        (c.id, c.name, c.arguments) for c in first.tool_calls
    ]
    assert again.tool_calls[0] is not first.tool_calls[0]


def test_the_vocabulary_is_the_same_in_every_process() -> None:
    """The scenario's own facts come in the order it gives them: a set's order changed
    with the process's hash seed, and with it which of two facts asked at once came first."""
    import json
    import subprocess
    import sys

    code = (
        "import json; from assay.core import UserScenario; from assay.users import ScriptedUser;"
        "keys = ['zeta_code', 'alpha_pin', 'mid_word', 'beta_tag'];"
        "s = UserScenario(opening='Hi', known={k: 'v' for k in keys});"
        "print(json.dumps(ScriptedUser(s).vocabulary))"
    )
    seen = set()
    for seed in ("1", "2", "3", "4"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed},
        )
        seen.add(out.stdout)
    assert len(seen) == 1
    assert json.loads(seen.pop())[-4:] == ["zeta_code", "alpha_pin", "mid_word", "beta_tag"]
