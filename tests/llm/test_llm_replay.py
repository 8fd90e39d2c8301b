"""Response cache and record/replay cassettes."""

from __future__ import annotations

import json

import pytest
from tests.support.fake_llm_server import FakeLLMServer, FakeToolCall, FakeUsage, Reply

from assay.core.messages import Message, ToolSpec
from assay.llm import (
    Cassette,
    CassetteError,
    CassetteMiss,
    Completion,
    GenerateConfig,
    Meter,
    ModelRequestRejected,
    ResponseCache,
    get_model,
    use_cassette,
    use_meter,
)

TOOLS = [ToolSpec("lookup", "Look up.", {"type": "object", "properties": {"q": {"type": "string"}}})]


def counter_handler():
    state = {"n": 0}

    def handler(req):
        state["n"] += 1
        return Reply(
            text=f"answer {state['n']}",
            tool_calls=[FakeToolCall("lookup", {"q": str(state["n"])})],
            usage=FakeUsage(100 + state["n"], 10, cache_read_tokens=50),
        )

    return handler


async def test_cache_hit_makes_no_request(server: FakeLLMServer, tmp_path) -> None:
    server.handler = counter_handler()
    path = tmp_path / "llm.sqlite"
    model = get_model("openai:gpt-4o-mini", base_url=server.openai_base_url, cache=path)
    msgs = [Message("user", "hi")]
    config = GenerateConfig(temperature=1.0, seed=1)
    meter = Meter()
    with use_meter(meter):
        first = await model.complete(msgs, TOOLS, config)
        assert server.request_count == 1
        second = await model.complete(msgs, TOOLS, config)
    assert server.request_count == 1  # served from the cache
    assert second.cached and not first.cached
    assert (second.text, second.tool_calls, second.usage) == (first.text, first.tool_calls, first.usage)
    assert second.cost_usd == first.cost_usd and second.request_hash == first.request_hash
    assert [r.cached for r in meter.records] == [False, True]
    assert [r.source for r in meter.records] == ["network", "cache"]
    assert meter.totals().cached_calls == 1

    # a new model object (a rerun) on the same file: still no request
    rerun = get_model("openai:gpt-4o-mini", base_url=server.openai_base_url, cache=str(path))
    third = await rerun.complete(msgs, TOOLS, config)
    assert server.request_count == 1 and third.text == "answer 1"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_cache_key_includes_seed_and_sampling(server: FakeLLMServer, tmp_path, provider: str) -> None:
    server.handler = counter_handler()
    url = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    # the Anthropic API has no seed: the key must still tell seeds apart
    model = get_model(f"{provider}:m", base_url=url, cache=tmp_path / "c.sqlite")
    msgs = [Message("user", "hi")]
    a = await model.complete(msgs, TOOLS, GenerateConfig(seed=1))
    b = await model.complete(msgs, TOOLS, GenerateConfig(seed=2))  # k trials stay k samples
    assert server.request_count == 2 and a.text != b.text
    await model.complete(msgs, TOOLS, GenerateConfig(seed=1, temperature=0.5))
    await model.complete(msgs, [], GenerateConfig(seed=1))
    await model.complete([Message("user", "other")], TOOLS, GenerateConfig(seed=1))
    assert server.request_count == 5
    # streaming and timeouts do not change the answer: same key
    c = await model.complete(msgs, TOOLS, GenerateConfig(seed=1, stream=True, timeout_s=5))
    assert server.request_count == 5 and c.text == a.text


async def test_cache_key_includes_endpoint_and_model(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    with FakeLLMServer(counter_handler()) as s1, FakeLLMServer(counter_handler()) as s2:
        msgs = [Message("user", "hi")]
        await get_model("openai:m", base_url=s1.openai_base_url, cache=cache).complete(
            msgs, [], GenerateConfig()
        )
        await get_model("openai:m", base_url=s2.openai_base_url, cache=cache).complete(
            msgs, [], GenerateConfig()
        )
        await get_model("openai:n", base_url=s1.openai_base_url, cache=cache).complete(
            msgs, [], GenerateConfig()
        )
        assert (s1.request_count, s2.request_count) == (2, 1)
    assert len(cache) == 3


async def test_cache_off_by_default(server: FakeLLMServer) -> None:
    model = get_model("openai:m", base_url=server.openai_base_url)
    assert model.cache is None
    for _ in range(2):
        await model.complete([Message("user", "hi")], [], GenerateConfig(seed=1))
    assert server.request_count == 2


async def test_failed_calls_are_not_cached(server: FakeLLMServer, tmp_path, sleeps) -> None:
    server.schedule("400")
    model = get_model("openai:m", base_url=server.openai_base_url, cache=tmp_path / "c.sqlite", sleep=sleeps)
    with pytest.raises(ModelRequestRejected):
        await model.complete([Message("user", "hi")], [], GenerateConfig())
    c = await model.complete([Message("user", "hi")], [], GenerateConfig())
    assert not c.cached and server.request_count == 2


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_cassette_record_then_replay_is_identical(
    server: FakeLLMServer, tmp_path, provider: str
) -> None:
    server.handler = counter_handler()
    url = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    path = tmp_path / "run.cassette.jsonl"
    conversations = [
        [Message("user", "hi")],
        [Message("user", "hi")],  # identical request, different answer: occurrence counting
        [Message("system", "s"), Message("user", "other")],
    ]
    recording = Cassette(path, mode="record")
    model = get_model(f"{provider}:m", base_url=url)
    with use_cassette(recording):
        recorded = [
            await model.complete(m, TOOLS, GenerateConfig(stream=i == 2)) for i, m in enumerate(conversations)
        ]
    assert server.request_count == 3
    assert recorded[0].text != recorded[1].text
    lines = path.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[1])["occurrence"] == 1

    server.reset_counters()
    replay = Cassette(path, mode="replay")
    # replay needs no endpoint and no key: a different (dead) base URL is fine
    offline = get_model(f"{provider}:m", base_url="http://127.0.0.1:9/v1", cassette=replay)
    meter = Meter()
    with use_meter(meter):
        replayed = [
            await offline.complete(m, TOOLS, GenerateConfig(stream=i == 2))
            for i, m in enumerate(conversations)
        ]
    assert server.request_count == 0
    assert replayed == recorded
    assert [json.dumps(c.to_dict(), sort_keys=True) for c in replayed] == [
        json.dumps(c.to_dict(), sort_keys=True) for c in recorded
    ]
    assert [r.source for r in meter.records] == ["cassette"] * 3
    assert all(r.cached for r in meter.records)
    assert meter.totals().input_tokens == sum(c.usage.input_tokens for c in recorded if c.usage)

    with pytest.raises(CassetteMiss, match="asked for a time 3"):
        await offline.complete(conversations[0], TOOLS, GenerateConfig())
    with pytest.raises(CassetteMiss, match="not in the cassette"):
        await offline.complete([Message("user", "never recorded")], TOOLS, GenerateConfig())
    with pytest.raises(CassetteMiss):  # the seed is part of the request
        await offline.complete(conversations[2], TOOLS, GenerateConfig(seed=5))


def test_completion_dict_round_trip() -> None:
    from assay.core.messages import ToolCall
    from assay.llm import MalformedOutput, Usage

    c = Completion(
        text="t",
        tool_calls=(ToolCall("a", "f", {"x": [1, 2]}), ToolCall("b", "g", {})),
        finish_reason="tool_calls",
        usage=Usage(1, 2, 3, 4, 5),
        model="m",
        latency_s=0.1234567891234,
        ttft_s=0.01,
        cost_usd=1e-7,
        request_hash="h",
        cached=True,
        retries=2,
        malformed=(MalformedOutput("b", "g", "{", "invalid JSON"),),
    )
    assert Completion.from_dict(json.loads(json.dumps(c.to_dict()))) == c
    assert c.raw_request_hash == "h"


def test_cassette_errors(tmp_path) -> None:
    with pytest.raises(CassetteError, match="cannot read"):
        Cassette(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hash": "x", "completion": {}}\nnot json\n')
    with pytest.raises(CassetteError, match=r"bad\.jsonl:2"):
        Cassette(bad)
    with pytest.raises(ValueError):
        Cassette(bad, mode="rewind")  # type: ignore[arg-type]
