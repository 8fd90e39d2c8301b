"""Both wire formats through the real SDK clients against the fake server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.support.fake_llm_server import FakeLLMServer, FakeToolCall, FakeUsage, Reply, to_messages

from assay.core.messages import Message, ToolCall, ToolSpec
from assay.llm import GenerateConfig, Usage, get_model
from assay.llm.anthropic_provider import to_anthropic_messages
from assay.llm.openai_provider import to_openai_messages

TOOLS = [
    ToolSpec(
        "get_order",
        "Look an order up.",
        {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    )
]
PNG = "data:image/png;base64,iVBORw0KGgo="
CONVERSATION = [
    Message("system", "You are a support agent."),
    Message("user", "Where is my order?", images=[PNG]),
    Message("assistant", "Let me check.", tool_calls=[ToolCall("c1", "get_order", {"order_id": "A1"})]),
    Message("tool", "order A1: shipped", tool_call_id="c1"),
    Message("assistant", "", tool_calls=[ToolCall("c2", "get_order", {"order_id": "B2"})]),
    Message("tool", "no such order", tool_call_id="c2", error=True),
    Message("user", "Thanks."),
]
PROVIDERS = ["openai", "anthropic"]


def model_for(provider: str, server: FakeLLMServer, **options: Any):
    name = "gpt-4o-mini" if provider == "openai" else "claude-3-5-haiku"
    url = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    return get_model(f"{provider}:{name}", base_url=url, **options)


def test_openai_wire_format() -> None:
    wire = to_openai_messages(CONVERSATION)
    assert wire[0] == {"role": "system", "content": "You are a support agent."}
    assert wire[1]["content"] == [
        {"type": "text", "text": "Where is my order?"},
        {"type": "image_url", "image_url": {"url": PNG}},
    ]
    assert wire[2]["tool_calls"][0]["function"] == {"name": "get_order", "arguments": '{"order_id": "A1"}'}
    assert wire[3] == {"role": "tool", "tool_call_id": "c1", "content": "order A1: shipped"}
    assert wire[4]["content"] is None
    assert [m["role"] for m in wire] == ["system", "user", "assistant", "tool", "assistant", "tool", "user"]


def test_anthropic_wire_format() -> None:
    system, wire = to_anthropic_messages(CONVERSATION)
    assert system == "You are a support agent."
    assert [m["role"] for m in wire] == ["user", "assistant", "user", "assistant", "user"]
    assert wire[0]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    assert wire[1]["content"][1] == {
        "type": "tool_use",
        "id": "c1",
        "name": "get_order",
        "input": {"order_id": "A1"},
    }
    assert wire[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "order A1: shipped"}
    ]
    # the error tool result and the next user text merge into one user turn
    assert wire[4]["content"][0]["is_error"] is True
    assert wire[4]["content"][1] == {"type": "text", "text": "Thanks."}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("stream", [False, True])
async def test_round_trip_text_tools_usage(server: FakeLLMServer, provider: str, stream: bool) -> None:
    server.handler = lambda req: Reply(
        text="Your order shipped.",
        tool_calls=[FakeToolCall("get_order", {"order_id": "C3"})],
        usage=FakeUsage(1_200, 80, cache_read_tokens=1_000, cache_write_tokens=100, reasoning_tokens=20),
    )
    model = model_for(provider, server)
    config = GenerateConfig(temperature=0.2, max_tokens=300, seed=7, stop=["END"], stream=stream)
    c = await model.complete(CONVERSATION, TOOLS, config)
    assert c.text == "Your order shipped."
    assert [(t.name, t.arguments) for t in c.tool_calls] == [("get_order", {"order_id": "C3"})]
    assert c.tool_calls[0].id
    assert c.finish_reason == "tool_calls"
    assert c.usage == Usage(1_200, 80, 1_000, 100, 20)
    assert c.malformed == ()
    assert c.cost_usd is not None and c.cost_usd > 0
    assert c.latency_s > 0 and (c.ttft_s is not None) == stream
    msg = c.to_message()
    assert msg.role == "assistant" and msg.tool_calls[0].arguments == {"order_id": "C3"}

    # what went over the wire
    ((path, body),) = server.requests
    if provider == "openai":
        assert path == "/v1/chat/completions"
        assert body["seed"] == 7 and body["temperature"] == 0.2 and body["max_tokens"] == 300
        assert body["stop"] == ["END"]
        assert body["tools"] == [TOOLS[0].to_openai()]
        assert bool(body.get("stream")) == stream
        if stream:
            assert body["stream_options"] == {"include_usage": True}
    else:
        assert path == "/v1/messages"
        assert body["max_tokens"] == 300 and body["temperature"] == 0.2
        assert body["stop_sequences"] == ["END"]
        assert body["tools"][0]["input_schema"] == TOOLS[0].parameters
        assert body["system"] == "You are a support agent."
    # the fake server reads the conversation back the same for both formats
    back = to_messages(body)
    assert [m.role for m in back] == [m.role for m in CONVERSATION]
    assert back[2].tool_calls[0].arguments == {"order_id": "A1"}
    assert back[5].tool_call_id == "c2"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_streaming_measures_time_to_first_token(server: FakeLLMServer, provider: str) -> None:
    server.handler = lambda req: Reply(
        text="one two three four", first_token_delay_s=0.15, chunk_delay_s=0.05, chunks=4
    )
    model = model_for(provider, server)
    c = await model.complete([Message("user", "count")], [], GenerateConfig(stream=True))
    assert c.text == "one two three four"
    assert c.ttft_s is not None
    assert 0.15 <= c.ttft_s < c.latency_s
    assert c.latency_s >= c.ttft_s + 0.15 - 0.01  # three later chunks, 0.05 s apart
    plain = await model.complete([Message("user", "count")], [], GenerateConfig(stream=False))
    assert plain.ttft_s is None and plain.text == c.text


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("stream", [False, True])
async def test_malformed_tool_call_json_is_surfaced(
    server: FakeLLMServer, provider: str, stream: bool
) -> None:
    raw = '{"order_id": "A1",'
    server.handler = lambda req: Reply(
        tool_calls=[FakeToolCall("get_order", raw), FakeToolCall("get_order", {"order_id": "ok"})]
    )
    c = await model_for(provider, server).complete(
        [Message("user", "go")], TOOLS, GenerateConfig(stream=stream)
    )
    bad, good = c.tool_calls
    assert bad.arguments == {} and good.arguments == {"order_id": "ok"}
    assert len(c.malformed) == 1
    m = c.malformed[0]
    assert m.tool_call_id == bad.id and m.name == "get_order"
    assert m.raw_arguments == raw and "invalid JSON" in m.error
    assert c.is_malformed(bad.id) and not c.is_malformed(good.id)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_finish_reason_length_and_plain_text(server: FakeLLMServer, provider: str) -> None:
    server.handler = lambda req: Reply(
        text="trunc", finish_reason="length" if provider == "openai" else "max_tokens"
    )
    c = await model_for(provider, server).complete([Message("user", "x")], [], GenerateConfig())
    assert c.finish_reason == "length" and c.tool_calls == ()


async def test_openai_non_object_arguments_are_malformed(server: FakeLLMServer) -> None:
    server.handler = lambda req: Reply(tool_calls=[FakeToolCall("get_order", json.dumps(["A1"]))])
    c = await model_for("openai", server).complete([Message("user", "x")], TOOLS, GenerateConfig())
    assert c.malformed and "not an object" in c.malformed[0].error


async def test_openai_key_comes_from_env(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    model = get_model("openai:gpt-4o-mini")
    assert model.provider.endpoint == server.openai_base_url
    await model.complete([Message("user", "x")], [], GenerateConfig())
    assert server.requests[0][0] == "/v1/chat/completions"
    assert server.headers[0]["authorization"] == "Bearer sk-test-123"


async def test_anthropic_key_and_url_come_from_env(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    model = get_model("anthropic:claude-3-5-haiku")
    await model.complete([Message("user", "x")], [], GenerateConfig())
    sent = server.headers[0]
    assert "sk-ant-test" in (sent.get("x-api-key", ""), sent.get("authorization", "")[7:])
    assert server.requests[0][1]["max_tokens"] == 4096  # the API requires one


async def test_self_hosted_without_key_sends_a_placeholder(server: FakeLLMServer) -> None:
    model = get_model("openai:llama3", base_url=server.openai_base_url)
    await model.complete([Message("user", "x")], [], GenerateConfig(max_tokens=5))
    assert server.headers[0]["authorization"] == "Bearer not-needed"
    assert server.requests[0][1]["max_tokens"] == 5


async def test_clients_share_one_tls_context_and_keep_the_sdk_defaults(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every SDK client of the process uses one TLS context, built once (each built its
    own, 20-25 ms apiece); the SDKs' own timeouts and redirect rule are kept."""
    import anthropic
    import httpx
    import openai

    from assay.llm.provider import shared_ssl_context

    made: list[Any] = []
    real = httpx.create_ssl_context
    monkeypatch.setattr(httpx, "create_ssl_context", lambda *a, **k: made.append(1) or real(*a, **k))
    shared_ssl_context.cache_clear()
    try:
        clients = []
        for provider in (*PROVIDERS, *PROVIDERS):
            model = model_for(provider, server)
            await model.complete(CONVERSATION, TOOLS, GenerateConfig())
            clients.append(model.provider._clients.get())  # type: ignore[attr-defined]
        assert len(made) == 1
        assert len({id(c) for c in clients}) == len(clients)  # a client each, one context
        for client in clients:
            sdk = openai if isinstance(client, openai.AsyncOpenAI) else anthropic
            assert client.timeout == sdk.DEFAULT_TIMEOUT
            assert client._client.follow_redirects is True
            assert client._client.timeout == sdk.DEFAULT_TIMEOUT
    finally:
        shared_ssl_context.cache_clear()
