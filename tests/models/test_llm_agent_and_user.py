"""The LLM agent and user simulator in single trials: malformed output, prompts, and
the detection of simulator errors."""

from __future__ import annotations

from datetime import datetime

from tests.support.fake_llm_replies import FakeToolCall, Reply, sequence
from tests.support.fake_llm_server import FakeLLMServer

from assay.core import Config, InitialState, Limits, Message, Task, ToolCall, Trial, UserScenario
from assay.core.transcript import Transcript
from assay.runner import RunContext, TrialJob, run_trial
from assay.users.llm import render_user_prompt, simulator_errors


def toy_job(agent: str, base_url: str, **limits) -> TrialJob:
    task = Task(
        id="t",
        as_of=datetime(2025, 1, 1),
        user=UserScenario(opening="hi", goal="deposit 5"),
        initial_state=InitialState(seed=0),
        graders=[{"actions": {"required": ["get_balance"]}}],
    )
    context = RunContext(
        "r", Config(agent=agent), domain="toy", model_options={"base_url": base_url, "api_key": "x"}
    )
    return TrialJob(context, task, Trial("t", 0, 1), Limits(**limits))


async def test_malformed_tool_call_json_is_the_agents_failure() -> None:
    handler = sequence(
        Reply(tool_calls=[FakeToolCall("get_balance", '{"account_id": "A1"')]),  # broken JSON
        Reply(text="Sorry, something went wrong."),
        Reply(text="Sorry again."),
    )
    with FakeLLMServer(handler) as srv:
        result = await run_trial(toy_job("openai:m", srv.openai_base_url))
    tool_msg = next(m for m in result.transcript.messages if m.role == "tool")
    assert tool_msg.error and "not valid JSON" in tool_msg.content
    span = next(s for s in result.transcript.spans if s.kind == "tool")
    assert span.attributes["error"] == "invalid"
    assert result.metrics["invalid_calls"] == 1
    assert result.reward == 0 and result.root_cause == "AGENT" and result.termination == "user_stop"


async def test_tokens_budget_ends_the_trial() -> None:
    with FakeLLMServer(sequence(*[Reply(text="What is your email?")] * 10)) as srv:
        result = await run_trial(toy_job("openai:m", srv.openai_base_url, max_tokens=50))
    assert result.termination == "budget" and result.reward == 0
    assert result.input_tokens is not None and result.input_tokens + result.output_tokens > 50


async def test_missing_usage_is_recorded_as_missing_not_zero() -> None:
    with FakeLLMServer(sequence(*[Reply(text="Done.", usage=None)] * 2)) as srv:
        result = await run_trial(toy_job("openai:m", srv.openai_base_url))
    assert result.input_tokens is None and result.output_tokens is None and result.cost_usd is None
    assert result.usage["agent"]["missing_usage"] == 2


def test_user_prompt_fences_the_scenario_and_states_the_guidelines() -> None:
    prompt = render_user_prompt(UserScenario(goal="refund", known={"email": "a@b.co"}))
    assert "###STOP###" in prompt and "###TRANSFER###" in prompt and "###OUT-OF-SCOPE###" in prompt
    assert "Never invent facts" in prompt and "WAIT" in prompt
    assert '"email": "a@b.co"' in prompt


def test_simulator_errors_premature_stop_and_invented_facts() -> None:
    scenario = UserScenario(goal="Refund order #W1", known={"email": "a@b.co"})
    ok = Transcript(
        [
            Message("user", "Hi"),
            Message("assistant", "What is your email?"),
            Message("user", "My email is a@b.co."),
            Message("assistant", "Shall I refund #W1 for $10?"),
            Message("user", "Yes."),
            Message("assistant", "", tool_calls=[ToolCall("1", "refund", {})]),
            Message("tool", "ok", tool_call_id="1"),
            Message("assistant", "Done."),
            Message("user", "Thanks ###STOP###"),
        ]
    )
    assert simulator_errors(scenario, ok, {"refund"}) == []
    early = Transcript([*ok.messages[:4], Message("user", "Yes please. ###STOP###")])
    assert simulator_errors(scenario, early, {"refund"}) == ["premature_stop"]
    invented = Transcript([Message("user", "Hi, I'm z@q.org, order #W999")])
    assert simulator_errors(scenario, invented, {"refund"}) == ["invented_fact"]
