"""An LLM agent and an LLM user run an imported tau2 telecom task end to end behind the
loopback fake model server: the user calls its own phone tools (dual control), the
agent calls its tools, and the graders read the end state. The requests carry tau2's
exact tool schemas, in OpenAI's and in Anthropic's wire format."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from assay.domains.tau2 import tau2_domain
from assay.domains.tau2.importer import import_tau2
from assay.runner.api import run_async
from tests.support.fake_llm_replies import FakeToolCall, Reply, to_messages
from tests.support.fake_llm_server import FakeLLMServer

TASK = "[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]"
PHONE = "555-123-2002"
#: The agent's script: (what it says, the user tool it names), one per text turn.
AGENT_SAYS = [
    "What does your status bar show? Please use check_status_bar.",
    "Airplane mode is on. Please use toggle_airplane_mode.",
    "Now mobile data: please use toggle_data, then run_speed_test.",
    "Your mobile data works again.",
]


def _tools_of(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Tool name -> parameter schema, from either wire format."""
    out = {}
    for t in request.get("tools") or []:
        if "function" in t:
            out[t["function"]["name"]] = t["function"]["parameters"]
        else:
            out[t["name"]] = t["input_schema"]
    return out


def _system(request: dict[str, Any], messages: list[Any]) -> str:
    if messages and messages[0].role == "system":
        return str(messages[0].content)
    return ""


def brain(request: dict[str, Any]) -> Reply:
    messages = to_messages(request)
    system = _system(request, messages)
    rest = [m for m in messages if m.role != "system"]
    if "You are playing a user" in system:
        return _user(rest, _tools_of(request))
    return _agent(rest)


def _agent(conversation: list[Any]) -> Reply:
    """The agent: looks the customer up once, then walks the user through the fix."""
    called = [c.name for m in conversation if m.role == "assistant" for c in m.tool_calls]
    if "get_customer_by_phone" not in called:
        return Reply(tool_calls=[FakeToolCall("get_customer_by_phone", {"phone_number": PHONE})])
    said = [m for m in conversation if m.role == "assistant" and m.content]
    return Reply(text=AGENT_SAYS[min(len(said) - 1, len(AGENT_SAYS) - 1)])  # the greeting is said[0]


def _user(flipped: list[Any], tools: dict[str, Any]) -> Reply:
    """The user (the agent speaks as "user", we as "assistant"): calls each of its own
    tools the agent's last message names, then says what they showed."""
    last_agent = max((i for i, m in enumerate(flipped) if m.role == "user"), default=-1)
    if last_agent < 0:
        return Reply(text="Hi")
    agent_text = flipped[last_agent].content
    if "works again" in agent_text:
        return Reply(text="Great, thank you! ###STOP###")
    if not any(m.role == "assistant" for m in flipped):
        return Reply(text=f"My mobile data is not working. My number is {PHONE}.")
    done = [c.name for m in flipped[last_agent:] if m.role == "assistant" for c in m.tool_calls]
    named = [n for n in re.findall(r"\b[a-z_]+\b", agent_text) if n in tools]
    pending = [n for n in named if n not in done]
    if pending:
        return Reply(tool_calls=[FakeToolCall(pending[0], {})])
    results = [m.content for m in flipped[last_agent:] if m.role == "tool"]
    return Reply(text="I did it. " + " ".join(results))


@pytest.fixture(scope="module")
def telecom_suite(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tau2") / "telecom"
    import_tau2(data_dir, "telecom", out)
    return out


@pytest.mark.parametrize(("agent", "user"), [("openai", "anthropic"), ("anthropic", "openai")])
async def test_llm_agent_and_llm_user_with_phone_tools(
    telecom_suite: Path,
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    agent: str,
    user: str,
) -> None:
    with FakeLLMServer(brain) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        port = server.openai_base_url.split(":")[-1].split("/")[0]  # a model per server (clients are shared)
        run = await run_async(
            telecom_suite,
            agent=f"{agent}:agent-{port}",
            user=f"{user}:user-{port}",
            trials=1,
            task_ids=[TASK],
            store=str(tmp_path / "s.db"),
        )
        assert not server.errors
        requests = [body for _, body in server.requests] if server.requests else []
    [result] = run.results
    transcript = run.transcript(TASK, 0)
    assert transcript is not None
    user_calls = [c.name for c in transcript.user_tool_calls()]
    assert user_calls == ["check_status_bar", "toggle_airplane_mode", "toggle_data", "run_speed_test"]
    assert [c.name for c in transcript.tool_calls()] == ["get_customer_by_phone"]
    assert all(c.requestor == "user" for c in transcript.user_tool_calls())
    speed = next(m for m in transcript.messages if m.role == "tool" and "Speed" in m.content)
    assert "Excellent" in speed.content
    grades = {g.grader: g for g in result.grades}
    assert grades["env_assertions"].passed is True and grades["env_assertions"].gating
    assert result.reward == 1 and result.termination == "user_stop"
    assert result.metrics["user_tool_calls"] == 4.0 and result.metrics["tool_calls"] == 1.0
    # the wire carried tau2's exact schemas, each a valid JSON Schema
    domain = tau2_domain("telecom", data_dir)
    expected = {t.name: t.parameters for t in domain.toolkit}
    sent = [_tools_of(body) for body in requests if body.get("tools")]
    agent_side = next(t for t in sent if "get_customer_by_phone" in t)
    user_side = next(t for t in sent if "toggle_data" in t)
    assert set(agent_side) == {t.name for t in domain.toolkit if t.for_ == "agent"}
    assert set(user_side) == {t.name for t in domain.toolkit if t.for_ == "user"}
    for name, schema in {**agent_side, **user_side}.items():
        assert schema == expected[name]
        jsonschema.Draft202012Validator.check_schema(schema)


def test_airline_schemas_with_defs_are_valid_and_sent_verbatim(data_dir: Path) -> None:
    """tau2's schemas keep pydantic's titles and $defs (no additionalProperties): the
    OpenAI and Anthropic request bodies carry them unchanged."""
    from assay.core.messages import Message
    from assay.llm.spec import get_model
    from assay.llm.types import GenerateConfig

    domain = tau2_domain("airline", data_dir)
    specs = domain.toolkit.specs("agent")
    book = next(s for s in specs if s.name == "book_reservation")
    assert "$defs" in book.parameters and book.parameters["title"] == "parameters"
    assert "additionalProperties" not in book.parameters
    seen: list[dict[str, Any]] = []

    def handler(request: dict[str, Any]) -> Reply:
        seen.append(request)
        return Reply(text="ok")

    import asyncio

    async def call_both(server: FakeLLMServer) -> None:
        openai = get_model("openai:m", base_url=server.openai_base_url, api_key="k")
        anthropic = get_model("anthropic:m", base_url=server.anthropic_base_url, api_key="k")
        for model in (openai, anthropic):
            await model.complete([Message("user", "hi")], specs, GenerateConfig())

    with FakeLLMServer(handler) as server:
        asyncio.run(call_both(server))
    assert len(seen) == 2
    for request in seen:
        sent = _tools_of(request)
        assert sent["book_reservation"] == book.parameters
        for schema in sent.values():
            jsonschema.Draft202012Validator.check_schema(schema)
