"""The retail reference agents in conversation with the scripted user, graded by the
rule graders: careful passes, hasty fails the traps, flaky slips with a seeded
probability; all three are pure functions of the conversation."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from functools import cache
from typing import Any

import pytest

from assay.agents import AgentContext, agent_factory
from assay.agents.base import AgentTurn
from assay.core.hashing import derive_seed
from assay.core.messages import Message, ToolCall
from assay.domains.retail import DOMAIN
from assay.domains.retail.agents import CarefulAgent, FlaggedAgent, FlakyAgent, HastyAgent, memo
from assay.domains.retail.agents.memo import message_key
from assay.domains.retail.agents.policy import decide_on
from assay.domains.retail.agents.view import View
from assay.stats import pass_hat_k
from assay.suites import instantiate, load_suite
from tests.domains.retail.helpers import TrialOutcome, run_all, run_trial

SUITE = load_suite("retail")


@cache
def tasks(seed: int) -> tuple[Any, ...]:
    return tuple(instantiate(SUITE, seed))


def rates(results: list[TrialOutcome]) -> dict[str, float]:
    by: dict[str, list[int]] = defaultdict(list)
    for r in results:
        by[r.task.stratum].append(r.reward or 0)
        by["all"].append(r.reward or 0)
    return {k: sum(v) / len(v) for k, v in by.items()}


@cache
def careful_results() -> tuple[TrialOutcome, ...]:
    return tuple(r for seed in (0, 1) for r in run_all(list(tasks(seed)), CarefulAgent, [seed]))


def test_careful_passes_nearly_every_task():
    results = careful_results()
    failed = [f"{r.task.id}: {r.failures()}" for r in results if r.reward != 1]
    assert rates(list(results))["all"] >= 0.95, failed
    assert all(r.termination in ("user_stop", "transfer") for r in results)


def test_careful_uses_exactly_the_tools_a_solution_needs():
    for r in careful_results():
        assert r.metrics.get("tool_precision", 1.0) == 1.0, r.task.id
        assert r.metrics.get("tool_recall", 1.0) == 1.0, r.task.id
        assert r.metrics["redundant_calls"] == 0, r.task.id


def test_hasty_fails_the_traps():
    hasty = rates(run_all(list(tasks(0)), HastyAgent, [0]))
    careful = rates(list(careful_results()))
    for stratum in ("adversarial", "high_risk"):
        assert hasty[stratum] <= 0.1
        assert careful[stratum] - hasty[stratum] >= 0.8
    assert hasty["all"] < 0.5


def flaky_trials(run_seed: int, k: int, options: dict[str, Any] | None = None):
    async def go() -> list[TrialOutcome]:
        return [
            await run_trial(task, FlakyAgent, derive_seed(run_seed, task.id, i), options)
            for i in range(k)
            for task in tasks(run_seed)
        ]

    return asyncio.run(go())


def test_flaky_slips_so_pass_hat_k_falls_with_k():
    results = flaky_trials(0, 4)
    counts: dict[str, list[int]] = defaultdict(list)
    for r in results:
        counts[r.task.id].append(r.reward or 0)
    curve = [sum(pass_hat_k(len(v), sum(v), k) for v in counts.values()) / len(counts) for k in (1, 2, 3, 4)]
    assert curve == sorted(curve, reverse=True) and curve[0] > curve[3]
    assert 0.6 < curve[0] < rates(list(careful_results()))["all"]
    assert rates(results)["all"] > rates(run_all(list(tasks(0)), HastyAgent, [0]))["all"]


def test_flaky_is_reproducible_for_the_same_seed():
    first = [(r.task.id, r.reward, len(r.messages)) for r in flaky_trials(3, 1)]
    again = [(r.task.id, r.reward, len(r.messages)) for r in flaky_trials(3, 1)]
    assert first == again


def dialogue(results: list[TrialOutcome]) -> list[list[tuple[str, str]]]:
    return [[(m.role, m.content or str(m.tool_calls)) for m in r.messages] for r in results]


def test_flaky_slip_zero_is_careful_and_slip_one_is_hasty():
    subset = list(tasks(2))[::4]
    careful = run_all(subset, CarefulAgent, [5])
    hasty = run_all(subset, HastyAgent, [5])
    assert dialogue(run_all(subset, FlakyAgent, [5], {"slip": 0.0})) == dialogue(careful)
    assert dialogue(run_all(subset, FlakyAgent, [5], {"slip": 1.0})) == dialogue(hasty)


@pytest.mark.parametrize("cls", [CarefulAgent, HastyAgent, FlakyAgent])
def test_agents_are_pure_functions_of_the_conversation(cls):
    """Replaying any prefix of a finished trial, in any order, on a fresh agent gives
    the move that was made: the agents keep no state between calls."""
    options = {"slip": 0.3}
    for task in list(tasks(1))[::3]:
        result = asyncio.run(run_trial(task, cls, 11, options))
        fresh = cls(AgentContext(11, "retail", DOMAIN.policy, task.as_of, "UTC", params=options))
        steps = [i for i, m in enumerate(result.messages) if m.role == "assistant"]
        for i in reversed(steps):
            move = asyncio.run(fresh.respond(result.messages[:i], DOMAIN.toolkit.specs()))
            made: Message = result.messages[i]
            assert move.text == made.content, (task.id, i)
            assert [(c.name, c.arguments) for c in move.tool_calls] == [
                (c.name, c.arguments) for c in made.tool_calls
            ], (task.id, i)


def test_builtin_specs_build_the_reference_agents():
    ctx = AgentContext(0, "retail", DOMAIN.policy, tasks(0)[0].as_of, "UTC")
    assert isinstance(agent_factory("builtin:retail-careful")(ctx), CarefulAgent)
    assert isinstance(agent_factory("builtin:retail-hasty")(ctx), HastyAgent)
    flaky = agent_factory("builtin:retail-flaky")(
        AgentContext(0, "retail", "", ctx.now, "UTC", params={"slip": 0.5})
    )
    assert isinstance(flaky, FlakyAgent) and flaky.probability == 0.5


def _facts(view: View) -> tuple[Any, ...]:
    return (view.user, view.agent, [(e.index, e.name, e.args, e.ok, e.content) for e in view.events])


def test_a_view_extending_the_previous_one_reads_the_same_facts_as_a_whole_one():
    """The reference agents extend the previous turn's View (same message objects, then
    new ones): the facts, and so the moves, equal those of a View read whole."""
    for task in list(tasks(3))[::5]:
        result = asyncio.run(run_trial(task, CarefulAgent, 3))
        view = None
        for i in range(len(result.messages) + 1):
            view = View(result.messages[:i], view)
            assert _facts(view) == _facts(View(result.messages[:i])), (task.id, i)


def test_a_view_reads_whole_what_does_not_extend_the_previous_conversation():
    call = ToolCall("c1", "get_order_details", {"order_id": "#W0000001"})
    first = [
        Message("user", "Where is my order #W0000001?"),
        Message("assistant", "", tool_calls=[call]),
        Message("tool", '{"order_id": "#W0000001", "total": "$10.00"}', tool_call_id="c1"),
    ]
    before = View(first)
    # an equal but different message object: not the same conversation, read whole
    other = [Message("user", "Cancel order #W0000002."), *first[1:]]
    assert View(other, before).mentioned_order == (0, "#W0000002")
    assert before.mentioned_order == (0, "#W0000001")  # the previous View is unchanged
    # a call id used again later pairs its result with the last call of that id, as a
    # whole reading does
    again = ToolCall("c1", "get_user_details", {"user_id": "u1"})
    longer = [*first, Message("assistant", "", tool_calls=[again])]
    assert _facts(View(longer, before)) == _facts(View(longer))
    assert View(longer, before).events[0].name == "get_user_details"


def test_a_tool_result_is_parsed_once_per_event():
    event = View(
        [
            Message("assistant", "", tool_calls=[ToolCall("c1", "get_order_details", {})]),
            Message("tool", '{"total": "$1,299.00", "created_at": "June 10, 2025"}', tool_call_id="c1"),
        ]
    ).events[0]
    assert event.data == {"total": 1299.0, "created_at": "2025-06-10"}
    assert event.data is event.data


def _derived(view: View) -> tuple[Any, ...]:
    return (
        view.goal,
        view.injection_index,
        view.email,
        view.name,
        view.zip,
        view.item,
        view.new_address,
        view.requested_amount,
        view.mentioned_order,
        view.dont_know_order_index,
        view.verified_user,
        view.transferred,
        [(e.index, e.name) for e in view.writes],
        view.asks_for_human(),
    )


@pytest.mark.parametrize("cls", [CarefulAgent, HastyAgent])
def test_an_extending_view_derives_the_facts_of_a_whole_one(cls):
    """The facts a View keeps as it reads on (the goal, the order named last, the
    verified user...) equal those of a View that reads the conversation whole, whether
    asked every turn or only now and then (a fact not asked for is read on later)."""
    for task in list(tasks(2))[::2]:
        result = asyncio.run(run_trial(task, cls, 2))
        every = sometimes = None
        for i in range(len(result.messages) + 1):
            whole = View(result.messages[:i])
            every = View(result.messages[:i], every)
            sometimes = View(result.messages[:i], sometimes)
            assert _derived(every) == _derived(whole), (task.id, i)
            if i % 3 == 0 or i == len(result.messages):
                assert _derived(sometimes) == _derived(whole), (task.id, i)


def _afresh(agent: CarefulAgent, conversation: list[Message]) -> AgentTurn:
    return decide_on(View(conversation), agent.ctx.now, agent.slip)


def _move(turn: AgentTurn) -> tuple[Any, ...]:
    return (turn.text, [(c.id, c.name, c.arguments, c.requestor) for c in turn.tool_calls], turn.invalid)


@pytest.mark.parametrize("cls", [CarefulAgent, HastyAgent])
def test_memoised_moves_are_the_moves_computed_afresh(cls):
    """The careful and hasty agents make a move once per conversation within a run (its
    event loop): every move, from the memo or not, is the one computed afresh."""

    async def check(task: Any) -> None:
        first = await run_trial(task, cls, 1)
        again = await run_trial(task, cls, 2)  # its moves come from the memo
        assert dialogue([again]) == dialogue([first])
        agent = cls(AgentContext(0, "retail", DOMAIN.policy, task.as_of, "UTC"))
        live: list[Message] = []
        for m in again.messages:
            if m.role == "assistant" and not (live and live[-1].role == "assistant"):
                move = await agent.respond(live, [])
                assert _move(move) == _move(_afresh(agent, list(live))), (task.id, len(live))
            live.append(m)

    async def main() -> None:
        hits = memo.loop_memo()
        for task in list(tasks(4))[::3]:
            await check(task)
        assert hits is not None and hits.nodes > 0

    asyncio.run(main())


def test_a_memoised_move_is_a_copy_and_random_slips_are_not_memoised():
    task = tasks(0)[0]
    ctx = AgentContext(0, "retail", DOMAIN.policy, task.as_of, "UTC")

    async def main() -> None:
        result = await run_trial(task, CarefulAgent, 0)
        step = next(i for i, m in enumerate(result.messages) if m.tool_calls)
        conversation = result.messages[:step]
        move = await CarefulAgent(ctx).respond(conversation, [])
        move.tool_calls[0].arguments["spoiled"] = True
        move.tool_calls.append(ToolCall("x", "calculate", {"expression": "1"}))
        again = await CarefulAgent(ctx).respond(conversation, [])
        assert _move(again) == _move(_afresh(CarefulAgent(ctx), conversation))

    asyncio.run(main())
    assert CarefulAgent(ctx)._moves is not None and HastyAgent(ctx)._moves is not None
    assert FlakyAgent(ctx)._moves is None and FlaggedAgent(ctx)._moves is None

    class Careless(CarefulAgent):  # a subclass may slip as it likes: not memoised
        def slip(self, decision: str, anchor: int) -> bool:
            return True

    assert Careless(ctx)._moves is None


def test_the_memo_goes_with_its_run():
    """A run's trials share a memo (their event loop's); nothing is kept for the next
    run, and nothing is memoised outside a running loop."""
    import gc

    task = tasks(0)[1]
    before = len(memo._MEMOS)

    async def main() -> int:
        await run_trial(task, CarefulAgent, 0)
        found = memo.loop_memo()
        assert found is not None and found is memo.loop_memo()
        return found.nodes

    assert asyncio.run(main()) > 0
    gc.collect()
    assert len(memo._MEMOS) == before
    assert memo.loop_memo() is None


def test_message_keys_tell_apart_what_the_agents_read():
    def key(value: object) -> object:
        return message_key(Message("assistant", "", tool_calls=[ToolCall("c", "f", {"a": value})]))

    assert len({key(1), key(1.0), key(True), key("1"), key(None), key(0.0), key(-0.0)}) == 7
    assert key([1]) is None and key({"b": 1}) is None  # not plain: not memoised
    assert message_key(Message("tool", "x", tool_call_id="c", error=True)) != message_key(
        Message("tool", "x", tool_call_id="c")
    )


def test_the_memo_starts_afresh_when_full(monkeypatch):
    monkeypatch.setattr(memo, "MAX_NODES", 25)

    async def main() -> None:
        for task in list(tasks(0))[:4]:
            first = await run_trial(task, CarefulAgent, 0)
            again = await run_trial(task, CarefulAgent, 1)
            assert dialogue([again]) == dialogue([first])
            found = memo.loop_memo()
            assert found is not None and 0 < found.nodes <= 25

    asyncio.run(main())
