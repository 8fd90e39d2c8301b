"""The request bodies the provider SDKs actually send, checked byte for byte against
recorded fixtures (``tests/llm/fixtures/wire/``), captured by the loopback fake server.

Text-only requests were recorded before messages could carry images and audio: they
prove the text paths did not change by a byte. Multimodal requests are also checked
against each provider's documented shape, written out here by hand from the API
references (OpenAI chat completions ``image_url`` / ``input_audio`` content parts,
Anthropic Messages ``image`` blocks with a ``base64`` source).

Re-record (after an SDK upgrade changes its JSON encoding) with
``ASSAY_RECORD_WIRE=1 pytest tests/llm/test_wire_fixtures.py``; review the diff.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.support.fake_llm_server import FakeLLMServer

from assay.core.messages import Media, Message, ToolCall, ToolSpec
from assay.llm import GenerateConfig, get_model, request_hash
from assay.llm.errors import UnsupportedInput
from assay.llm.media import keyed_request, media_ref

FIXTURES = Path(__file__).parent / "fixtures" / "wire"
RECORD = os.environ.get("ASSAY_RECORD_WIRE") == "1"

TOOLS = [
    ToolSpec(
        "get_order",
        "Look an order up.",
        {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    )
]
TEXT_CONVERSATION = [
    Message("system", "You are a support agent."),
    Message("user", 'Where is my order? Ünïcödé and "quotes".'),
    Message("assistant", "Let me check.", tool_calls=[ToolCall("c1", "get_order", {"order_id": "A1"})]),
    Message("tool", "order A1: shipped", tool_call_id="c1"),
    Message("assistant", "", tool_calls=[ToolCall("c2", "get_order", {"order_id": "B2"})]),
    Message("tool", "no such order", tool_call_id="c2", error=True),
    Message("user", "Thanks."),
]
CONFIG = GenerateConfig(temperature=0.0, max_tokens=64, seed=7, tool_choice="auto")


def model_for(provider: str, server: FakeLLMServer) -> Any:
    name = "gpt-4o-mini" if provider == "openai" else "claude-3-5-haiku"
    url = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    return get_model(f"{provider}:{name}", base_url=url, api_key="test-key", max_retries=0)


async def sent_body(
    provider: str, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig
) -> bytes:
    """The raw body the provider's SDK sends for one call."""
    with FakeLLMServer(handler=lambda req: "ok") as server:
        model = model_for(provider, server)
        try:
            await model.complete(messages, tools, config)
        finally:
            await model.aclose()
        assert len(server.bodies) == 1
        return server.bodies[0]


def check_fixture(name: str, body: bytes) -> None:
    path = FIXTURES / name
    if RECORD:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    assert path.exists(), f"{path} is missing: record it with ASSAY_RECORD_WIRE=1"
    assert body == path.read_bytes(), f"the request body differs from {path}"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_text_only_requests_are_byte_identical(provider: str) -> None:
    body = await sent_body(provider, TEXT_CONVERSATION, TOOLS, CONFIG)
    check_fixture(f"{provider}_text.json", body)
    assert json.loads(body)["messages"]  # a real request, not an empty fixture


MEDIA_DIR = Path(__file__).parent / "fixtures" / "media"
PNG = Media("image/png", (MEDIA_DIR / "square.png").read_bytes(), "square.png")
WAV = Media("audio/wav", (MEDIA_DIR / "beep.wav").read_bytes(), "beep.wav")
PNG_B64 = base64.b64encode(PNG.data).decode()
WAV_B64 = base64.b64encode(WAV.data).decode()
QUESTION = "Does the screenshot overflow? Is the recording clear?"


def judge_like(*media: Media) -> list[Message]:
    return [Message("system", "You grade UIs."), Message("user", QUESTION, media=list(media))]


async def test_openai_image_and_audio_request() -> None:
    body = await sent_body("openai", judge_like(PNG, WAV), [], CONFIG)
    check_fixture("openai_image_audio.json", body)
    # OpenAI chat completions: a user message's content is a list of parts; an image is
    # {"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}, audio is
    # {"type": "input_audio", "input_audio": {"data": "<base64>", "format": "wav" | "mp3"}}.
    assert json.loads(body)["messages"] == [
        {"role": "system", "content": "You grade UIs."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": QUESTION},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG_B64}},
                {"type": "input_audio", "input_audio": {"data": WAV_B64, "format": "wav"}},
            ],
        },
    ]


async def test_anthropic_image_request() -> None:
    body = await sent_body("anthropic", judge_like(PNG), [], CONFIG)
    check_fixture("anthropic_image.json", body)
    # Anthropic Messages: {"type": "image", "source": {"type": "base64", "media_type":
    # "image/png", "data": "<base64>"}} blocks in a user turn's content list.
    sent = json.loads(body)
    assert sent["system"] == "You grade UIs."
    assert sent["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": QUESTION},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
            ],
        }
    ]


async def test_anthropic_refuses_audio_before_sending() -> None:
    with FakeLLMServer(handler=lambda req: "ok") as server:
        model = model_for("anthropic", server)
        assert model.modalities == {"text", "image"}
        with pytest.raises(UnsupportedInput, match="takes no audio/wav input") as exc:
            await model.complete(judge_like(PNG, WAV), [], CONFIG)
        assert exc.value.modality == "audio"
        assert server.request_count == 0


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_media_only_on_user_messages(provider: str) -> None:
    with FakeLLMServer(handler=lambda req: "ok") as server:
        model = model_for(provider, server)
        with pytest.raises(UnsupportedInput, match="user messages only"):
            await model.complete([Message("system", "x", media=[PNG]), Message("user", "y")], [], CONFIG)
        assert server.request_count == 0


async def test_litellm_sends_the_openai_shape() -> None:
    pytest.importorskip("litellm")
    with FakeLLMServer(handler=lambda req: "ok") as server:
        model = get_model("litellm:openai/gpt-4o-mini", base_url=server.openai_base_url, api_key="sk-test")
        assert "audio" in model.modalities
        await model.complete(judge_like(PNG, WAV), [], CONFIG)
        assert json.loads(server.bodies[0])["messages"][1]["content"] == [
            {"type": "text", "text": QUESTION},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG_B64}},
            {"type": "input_audio", "input_audio": {"data": WAV_B64, "format": "wav"}},
        ]


def test_text_only_request_hashes_did_not_change() -> None:
    """Hashes computed before media existed: old cassettes and cache entries still match."""
    expected = {"openai": "4a63d346000e58bfb5800f411289cac3", "anthropic": "85e6ff37ef7add2692f5f28cc4ac34b4"}
    for provider, name in (("openai", "gpt-4o-mini"), ("anthropic", "claude-3-5-haiku")):
        model = get_model(f"{provider}:{name}", base_url="http://127.0.0.1:9", api_key="k")
        request = model.provider.build_request(TEXT_CONVERSATION, TOOLS, CONFIG)
        assert keyed_request(request, TEXT_CONVERSATION) is request
        assert request_hash(provider, name, request, CONFIG) == expected[provider]


def test_keyed_request_names_media_by_content_hash() -> None:
    model = get_model("openai:gpt-4o-mini", base_url="http://127.0.0.1:9", api_key="k")
    messages = judge_like(PNG, WAV)
    request = model.provider.build_request(messages, [], CONFIG)
    keyed = keyed_request(request, messages)
    text = json.dumps(keyed)
    assert PNG_B64 not in text and WAV_B64 not in text
    assert keyed["messages"][1]["content"][1] == {"type": "image_url", "image_url": {"url": media_ref(PNG)}}
    assert media_ref(PNG) == f"<media image/png sha256={hashlib.sha256(PNG.data).hexdigest()} bytes=95>"
    # the original request still carries the bytes (it is what is sent)
    assert request["messages"][1]["content"][2]["input_audio"]["data"] == WAV_B64
    other = Media("image/png", PNG.data + b"\0", "square.png")
    other_messages = judge_like(other, WAV)
    changed = keyed_request(model.provider.build_request(other_messages, [], CONFIG), other_messages)
    assert request_hash("openai", "m", changed, CONFIG) != request_hash("openai", "m", keyed, CONFIG)
