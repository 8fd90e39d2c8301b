"""The orchestrator's conversation features: user tool calls (dual control) recorded and
shown as the user's, who speaks first, a prior conversation, the scripted user's
actions, oracle agents, and the user prompt with tools."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import pytest
from rich.console import Console
from tests.toyphone import DOMAIN

from assay.agents import AgentTurn
from assay.core import Config, Limits, Message, Task, ToolCall, ToolSpec, Trial, UserScenario
from assay.envs import DOMAINS
from assay.report.console import render_transcript
from assay.report.transcript_view import transcript_view
from assay.runner import RunContext, TrialJob, run_trial
from assay.users import UserContext, UserTurn
from assay.users.llm import USER_TOOLS_GUIDELINES, render_user_prompt

NOW = datetime(2025, 1, 1)
DOMAINS.register("toyphone", DOMAIN)


def job(
    task: Task, agent: str = "python:tests.runner.test_dual_control:Helper", user: str = "scripted", **limits
) -> TrialJob:  # type: ignore[no-untyped-def]
    return TrialJob(
        RunContext("r", Config(agent=agent, user=user), domain="toyphone"),
        task,
        Trial(task.id, 0, 1),
        Limits(**limits),
    )


class Helper:
    """Looks at the line, asks the user to toggle airplane mode, then activates the line."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        self.seen.append([m.role for m in conversation])
        calls = [c.name for m in conversation if m.role == "assistant" for c in m.tool_calls]
        if not any(m.role == "user" for m in conversation):
            return AgentTurn("Hello, I am the helper.")
        if "get_line" not in calls:
            return AgentTurn(tool_calls=[ToolCall("a1", "get_line", {"line_id": "L1"})])
        if not any("toggle_airplane" in m.content for m in conversation if m.role == "assistant"):
            return AgentTurn("Please use toggle_airplane on your phone.")
        if "activate_line" not in calls:
            return AgentTurn(tool_calls=[ToolCall("a2", "activate_line", {"line_id": "L1"})])
        return AgentTurn("Your line is active.")


TASK = Task(
    id="online",
    as_of=NOW,
    user=UserScenario(
        opening="My phone has no signal.", actions=[{"name": "toggle_airplane", "requestor": "user"}]
    ),
    graders=[
        {
            "env_assert": [
                {"name": "line_active", "args": {"line_id": "L1"}},
                {"name": "phone_online", "requestor": "user"},
            ]
        },
        {
            "actions": {
                "required": [{"name": "toggle_airplane", "requestor": "user"}],
                "confirm_before_write": False,
            }
        },
    ],
)


async def test_scripted_user_acts_on_its_phone_when_asked() -> None:
    result = await run_trial(job(TASK))
    messages = result.transcript.messages
    user_call = next(m for m in messages if m.role == "user" and m.tool_calls)
    assert user_call.content == "" and user_call.tool_calls[0].requestor == "user"
    answer = messages[messages.index(user_call) + 1]
    assert answer.role == "tool" and answer.content == "signal ok"
    assert messages[messages.index(user_call) + 2].content == "I did it. It shows: signal ok"
    assert result.reward == 1, [(g.grader, g.reason) for g in result.grades]
    assert result.metrics["user_tool_calls"] == 1 and result.metrics["tool_calls"] == 2
    spans = [s for s in result.transcript.spans if s.kind == "tool"]
    assert [(s.name, s.attributes["caller"]) for s in spans] == [
        ("get_line", "agent"),
        ("toggle_airplane", "user"),
        ("activate_line", "agent"),
    ]
    view = transcript_view(result, result.transcript)
    tool_steps = [(s.tool, s.caller, s.result) for s in view.steps if s.role == "tool"]
    assert ("toggle_airplane", "user", "signal ok") in tool_steps and (
        "get_line",
        "agent",
        tool_steps[0][2],
    ) in tool_steps
    from assay.report.templates_env import environment

    html = str(environment().get_template("_transcript.html").module.transcript(view))  # type: ignore[attr-defined]
    assert html.count("user's tool call") == 1 and 'data-caller="user"' in html
    console = Console(record=True, width=200)
    render_transcript(result, result.transcript, console)
    text = console.export_text()
    assert "⇒ user tool toggle_airplane({})" in text and "⇐ signal ok" in text


async def test_without_the_request_the_scripted_user_does_nothing() -> None:
    data = TASK.model_dump()
    data["user"]["actions"] = [{"name": "check_phone", "requestor": "user"}]
    task = Task.model_validate(data)
    result = await run_trial(job(task))
    assert result.transcript.user_tool_calls() == []  # the helper never names check_phone
    assert result.reward == 0


class Pushy:
    """A user who calls its tools for ever: the tool-call limit ends the trial."""

    def __init__(self, ctx: UserContext) -> None:
        self.tools = [t.name for t in ctx.tools]

    async def reply(self, conversation: Sequence[Message]) -> UserTurn:
        own = [m for m in conversation if m.role == "tool"]
        assert all(m.tool_call_id.startswith("p") for m in own)  # never the agent's results
        return UserTurn("", [ToolCall(f"p{len(own)}", "check_phone", {})])


async def test_user_tool_calls_count_toward_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.users import USERS

    USERS.register("pushy", Pushy)
    result = await run_trial(job(TASK, user="pushy", max_tool_calls=5))
    assert result.termination == "max_tool_calls" and len(result.transcript.user_tool_calls()) == 5


class Mistaken:
    """A user who calls the agent's tool: refused, as the user has no such tool."""

    async def reply(self, conversation: Sequence[Message]) -> UserTurn:
        if any(m.role == "tool" for m in conversation):
            return UserTurn("ok ###STOP###")
        return UserTurn("", [ToolCall("m1", "activate_line", {"line_id": "L1"})])


async def test_a_user_cannot_call_the_agents_tools() -> None:
    from assay.users import USERS

    USERS.register("mistaken", lambda ctx: Mistaken())
    result = await run_trial(job(TASK, user="mistaken"))
    tool = next(m for m in result.transcript.messages if m.role == "tool")
    assert tool.error and "unknown tool 'activate_line'" in tool.content
    assert result.outcome.diff == []


async def test_the_agent_speaks_first_with_a_greeting_or_its_own_words() -> None:
    greeted = await run_trial(
        job(TASK.model_copy(update={"first_speaker": "agent", "greeting": "Hi! How can I help?"}))
    )
    first = greeted.transcript.messages[:2]
    assert [(m.role, m.content) for m in first] == [
        ("assistant", "Hi! How can I help?"),
        ("user", "My phone has no signal."),
    ]
    own = await run_trial(job(TASK.model_copy(update={"first_speaker": "agent"})))
    assert own.transcript.messages[0].content == "Hello, I am the helper."  # the agent was called first
    assert own.transcript.messages[1].role == "user"


async def test_a_prior_conversation_opens_the_transcript_and_sets_the_state() -> None:
    history = [
        {"role": "user", "content": "Activate my line please."},
        {
            "role": "assistant",
            "tool_calls": [{"id": "h1", "name": "activate_line", "args": {"line_id": "L1"}}],
        },
        {"role": "tool", "tool_call_id": "h1", "content": "L1 active"},
        {"role": "assistant", "content": "Done. Anything else?"},
    ]
    task = Task.model_validate({**TASK.model_dump(), "initial_state": {"history": history}})
    result = await run_trial(job(task))
    messages = result.transcript.messages
    assert [m.role for m in messages[:4]] == ["user", "assistant", "tool", "assistant"]
    assert messages[4].role == "user"  # the assistant spoke last: the user's turn
    env = DOMAIN.environment(task, NOW)
    env.reset(0)
    assert env.snapshot()["lines"]["L1"]["active"] is True  # the history's write was replayed
    initial_data = Task(
        id="d",
        initial_state={
            "data": {"lines": {"L1": {"plan": {"gb": 9}}}},
            "actions": [{"name": "toggle_airplane", "requestor": "user"}],
        },
    )
    env = DOMAIN.environment(initial_data, NOW)
    env.reset(0)
    state = env.snapshot()
    assert (
        state["lines"]["L1"]["plan"] == {"name": "basic", "gb": 9}
        and state["phone"]["phone"]["airplane"] is False
    )


def test_user_tools_of_a_task_limit_what_the_user_gets() -> None:
    env = DOMAIN.environment(Task(id="t", user_tools=["check_phone"]), NOW)
    env.reset(0)
    assert [t.name for t in env.tools("user")] == ["check_phone"]
    from assay.envs import InvalidToolCall

    with pytest.raises(InvalidToolCall, match="available tools: check_phone"):
        env.call("toggle_airplane", {}, for_="user")


def test_the_llm_user_prompt_hides_the_actions_and_explains_tools() -> None:
    scenario = UserScenario(goal="get online", actions=[{"name": "toggle_airplane", "requestor": "user"}])
    plain, tooled = render_user_prompt(scenario), render_user_prompt(scenario, tools=True)
    assert "toggle_airplane" not in plain and "toggle_airplane" not in tooled
    assert USER_TOOLS_GUIDELINES not in plain and USER_TOOLS_GUIDELINES in tooled
    assert '"actions"' not in tooled


class Peeker:
    oracle = True

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        self.task = ctx.task

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        return AgentTurn(f"I know task {self.task.id if self.task else None}.")


class Honest(Peeker):
    oracle = False


async def test_only_oracle_agents_see_the_task() -> None:
    oracle = await run_trial(job(TASK, agent="python:tests.runner.test_dual_control:Peeker"))
    assert "I know task online." in oracle.transcript.agent_texts()
    honest = await run_trial(job(TASK, agent="python:tests.runner.test_dual_control:Honest"))
    assert "I know task None." in honest.transcript.agent_texts()
