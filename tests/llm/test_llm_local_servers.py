"""Providers proven end to end: LiteLLM through its own routing to the loopback fake server,
and OpenAI-compatible local servers (vLLM, Ollama, llama.cpp) as they stream usage and tool
calls. Acceptance (issue 17): LiteLLM and a local-server style endpoint (usage only in the
last chunk) produce the same usage and cost figures as the OpenAI provider."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.fake_llm_server import FakeLLMServer, FakeToolCall, FakeUsage, Reply

from assay.core.messages import Message, ToolSpec
from assay.llm import Completion, GenerateConfig, Pricing, get_model

TOOLS = [
    ToolSpec(
        "get_order",
        "Look up an order by id",
        {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    )
]
PRICE = Pricing(input_per_mtok=2.5, output_per_mtok=10.0, cache_read_per_mtok=1.25)
USAGE = FakeUsage(input_tokens=1200, output_tokens=40, cache_read_tokens=1000, reasoning_tokens=8)


def answer(_request: dict[str, Any]) -> Reply:
    return Reply(
        text="Let me look that up.",
        tool_calls=[
            FakeToolCall("get_order", {"order_id": "A-17"}),
            FakeToolCall("get_order", {"order_id": "B-3"}),
        ],
        usage=USAGE,
        chunks=3,
    )


async def exchange(spec: str, server: FakeLLMServer, *, stream: bool, **options: Any) -> Completion:
    model = get_model(spec, base_url=server.openai_base_url, pricing=PRICE, max_retries=0, **options)
    try:
        return await model.complete(
            [Message("system", "You are a support agent."), Message("user", "Where are A-17 and B-3?")],
            TOOLS,
            GenerateConfig(stream=stream, max_tokens=200, temperature=0),
        )
    finally:
        await model.aclose()


def figures(c: Completion) -> tuple[Any, ...]:
    calls = [(t.name, t.arguments) for t in c.tool_calls]
    return (c.text, calls, c.finish_reason, c.usage, c.cost_usd, c.malformed)


def litellm_specs() -> list[Any]:
    """LiteLLM's routes to an OpenAI-compatible server: its OpenAI client and vLLM's."""
    mark = pytest.mark.skipif(not _has_litellm(), reason="litellm is not installed (the litellm extra)")
    return [
        pytest.param("litellm:openai/gpt-4o", {"api_key": "sk-test"}, marks=mark, id="litellm-openai"),
        pytest.param("litellm:hosted_vllm/gpt-4o", {}, marks=mark, id="litellm-hosted-vllm"),
    ]


def _has_litellm() -> bool:
    import importlib.util

    return importlib.util.find_spec("litellm") is not None


@pytest.fixture(scope="module")
def reference() -> dict[bool, tuple[Any, ...]]:
    """The OpenAI provider against an OpenAI-style server (usage when asked for)."""
    import asyncio

    async def both() -> dict[bool, tuple[Any, ...]]:
        with FakeLLMServer(answer) as server:
            return {s: figures(await exchange("openai:gpt-4o", server, stream=s)) for s in (False, True)}

    return asyncio.run(both())


def test_reference_figures_are_the_servers(reference: dict[bool, tuple[Any, ...]]) -> None:
    text, calls, finish, usage, cost, malformed = reference[True]
    assert reference[False] == reference[True]
    assert text == "Let me look that up." and finish == "tool_calls" and not malformed
    assert calls == [("get_order", {"order_id": "A-17"}), ("get_order", {"order_id": "B-3"})]
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.reasoning_tokens) == (
        1200,
        40,
        1000,
        8,
    )
    # 200 uncached at $2.50, 1000 cached at $1.25, 40 out at $10 per million tokens.
    assert cost == pytest.approx((200 * 2.5 + 1000 * 1.25 + 40 * 10.0) / 1e6)


@pytest.mark.parametrize("style", ["requested", "last_chunk", "finish_chunk"])
@pytest.mark.parametrize("stream", [False, True])
async def test_local_server_usage_styles_match_openai(
    reference: dict[bool, tuple[Any, ...]], style: str, stream: bool
) -> None:
    """vLLM / Ollama (a last chunk with the usage, when asked), servers that always send
    that chunk, and llama.cpp's server (usage on the chunk with finish_reason)."""
    with FakeLLMServer(answer, stream_usage=style) as server:
        got = figures(await exchange("openai:gpt-4o", server, stream=stream))
    assert got == reference[stream]


@pytest.mark.parametrize(("spec", "options"), litellm_specs())
@pytest.mark.parametrize("style", ["requested", "last_chunk", "finish_chunk"])
@pytest.mark.parametrize("stream", [False, True])
async def test_litellm_matches_openai(
    reference: dict[bool, tuple[Any, ...]], spec: str, options: dict[str, Any], style: str, stream: bool
) -> None:
    with FakeLLMServer(answer, stream_usage=style) as server:
        got = figures(await exchange(spec, server, stream=stream, **options))
        path, body = server.requests[-1]
    assert path == "/v1/chat/completions" and body["model"] == "gpt-4o"  # LiteLLM's route, our server
    assert got == reference[stream]


@pytest.mark.parametrize(
    ("spec", "options"),
    [pytest.param("openai:gpt-4o", {}, id="openai"), *litellm_specs()],
)
@pytest.mark.parametrize("stream", [False, True])
async def test_a_server_without_usage_leaves_it_missing(
    spec: str, options: dict[str, Any], stream: bool
) -> None:
    """Missing, never zero and never an estimate (LiteLLM fills in zeros, or its own
    token count when streaming: assay drops those)."""
    with FakeLLMServer(answer, stream_usage="never") as server:
        c = await exchange(spec, server, stream=stream, **options)
    assert c.usage is None and c.cost_usd is None
    assert [t.arguments for t in c.tool_calls] == [{"order_id": "A-17"}, {"order_id": "B-3"}]


@pytest.mark.parametrize(
    ("spec", "options"),
    [pytest.param("openai:gpt-4o", {}, id="openai"), *litellm_specs()],
)
@pytest.mark.parametrize(
    "server_options",
    [
        pytest.param({"tool_call_style": "whole"}, id="ollama-whole-calls"),
        pytest.param({"tool_call_index": False}, id="no-index"),
        pytest.param({"tool_call_style": "whole", "tool_call_index": False}, id="whole-no-index"),
    ],
)
async def test_streamed_tool_calls_as_local_servers_send_them(
    reference: dict[bool, tuple[Any, ...]], spec: str, options: dict[str, Any], server_options: dict[str, Any]
) -> None:
    with FakeLLMServer(answer, **server_options) as server:
        got = figures(await exchange(spec, server, stream=True, **options))
    assert got == reference[True]


async def test_stream_usage_off_for_servers_that_reject_stream_options() -> None:
    with FakeLLMServer(answer) as server:
        c = await exchange("openai:gpt-4o", server, stream=True, stream_usage=False)
        assert "stream_options" not in server.requests[-1][1]
    assert c.usage is None and c.cost_usd is None
    with FakeLLMServer(answer, stream_usage="finish_chunk") as server:  # llama.cpp sends it anyway
        c = await exchange("openai:gpt-4o", server, stream=True, stream_usage=False)
    assert c.usage is not None and c.usage.input_tokens == 1200


def test_litellm_import_stays_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """LiteLLM fetches a model-cost map from the internet at import unless told not to."""
    pytest.importorskip("litellm")
    import os

    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    get_model("litellm:openai/gpt-4o")
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


def test_running_usage_totals_keep_the_last() -> None:
    """vLLM with ``continuous_usage_stats`` sends running totals on every chunk."""
    from assay.llm.openai_provider import OpenAIStream

    acc = OpenAIStream()
    for i, piece in enumerate(["Hel", "lo", "!"], start=1):
        acc.add(
            {
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                "usage": {"prompt_tokens": 12, "completion_tokens": i, "total_tokens": 12 + i},
            }
        )
    acc.add({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": None})
    result = acc.result(None)
    assert result.text == "Hello!" and result.finish_reason == "stop"
    assert result.usage is not None and (result.usage.input_tokens, result.usage.output_tokens) == (12, 3)
