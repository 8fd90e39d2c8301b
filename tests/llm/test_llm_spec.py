"""Model specs, options and the optional litellm provider."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from assay.core.messages import Message
from assay.errors import AssayError, SpecError
from assay.llm import ChatModel, GenerateConfig, ModelUnavailable, Usage, get_model, parse_spec
from assay.llm.errors import AdapterError


def test_parse_spec() -> None:
    assert parse_spec("openai:gpt-4o") == ("openai", "gpt-4o")
    assert parse_spec("litellm:ollama/llama3:8b") == ("litellm", "ollama/llama3:8b")
    for bad in ("gpt-4o", "openai:", "cohere:command"):
        with pytest.raises(SpecError):
            parse_spec(bad)


def test_get_model_rejects_unknown_options() -> None:
    with pytest.raises(SpecError, match="unknown option 'temprature'"):
        get_model("openai:m", base_url="http://127.0.0.1:1/v1", temprature=0)


def test_get_model_is_a_chat_model_and_lazy() -> None:
    model = get_model("anthropic:claude-x")  # no key, no URL: nothing happens yet
    assert isinstance(model, ChatModel)
    assert model.spec == "anthropic:claude-x"


async def test_missing_openai_key_is_a_spec_error() -> None:
    model = get_model("openai:gpt-4o")
    with pytest.raises(SpecError, match="OPENAI_API_KEY"):
        await model.complete([Message("user", "x")], [], GenerateConfig())


def test_generate_config_validation() -> None:
    assert GenerateConfig(stop=["a"]).stop == ("a",)
    with pytest.raises(ValueError):
        GenerateConfig(tool_choice="sometimes")


def test_litellm_missing_is_a_clear_spec_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "litellm", None)  # import litellm → ImportError
    with pytest.raises(SpecError, match="needs the litellm package") as exc:
        get_model("litellm:anthropic/claude-3-5-haiku")
    assert isinstance(exc.value, AssayError)


class FakeLiteLLM(types.ModuleType):
    """Stands in for the litellm package: records calls, answers OpenAI-shaped dicts."""

    def __init__(self) -> None:
        super().__init__("litellm")
        self.calls: list[dict[str, Any]] = []
        self.fail_first: Exception | None = None

    async def acompletion(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        if self.fail_first is not None:
            exc, self.fail_first = self.fail_first, None
            raise exc
        usage = {"prompt_tokens": 12, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 4}}
        if kwargs.get("stream"):

            async def chunks():
                yield {"choices": [{"delta": {"content": "hel"}, "finish_reason": None}]}
                yield {"choices": [{"delta": {"content": "lo"}, "finish_reason": "stop"}]}
                yield {"choices": [], "usage": usage, "model": kwargs["model"]}

            return chunks()
        return {
            "model": kwargs["model"],
            "choices": [{"message": {"content": "hello"}, "finish_reason": "stop"}],
            "usage": usage,
        }


class RateLimited(Exception):
    status_code = 429


async def test_litellm_provider_with_a_stub_module(monkeypatch: pytest.MonkeyPatch, sleeps) -> None:
    fake = FakeLiteLLM()
    monkeypatch.setitem(sys.modules, "litellm", fake)
    model = get_model("litellm:ollama/llama3", base_url="http://127.0.0.1:11434", sleep=sleeps)
    fake.fail_first = RateLimited("slow down")
    c = await model.complete([Message("user", "hi")], [], GenerateConfig(seed=3, max_tokens=9))
    assert c.text == "hello" and c.usage == Usage(12, 3, cache_read_tokens=4)
    assert c.retries == 1 and len(sleeps.delays) == 1
    call = fake.calls[-1]
    assert call["model"] == "ollama/llama3" and call["api_base"] == "http://127.0.0.1:11434"
    assert call["num_retries"] == 0 and call["seed"] == 3 and call["max_tokens"] == 9
    s = await model.complete([Message("user", "hi")], [], GenerateConfig(stream=True))
    assert s.text == "hello" and s.ttft_s is not None and s.usage is not None

    fake.fail_first = ValueError("a bug, not an outage")
    calls = len(fake.calls)
    with pytest.raises(AdapterError) as exc:  # unknown errors: the harness's, not retried
        await model.complete([Message("user", "bug")], [], GenerateConfig())
    assert isinstance(exc.value.__cause__, ValueError) and "a bug, not an outage" in str(exc.value)
    assert not isinstance(exc.value, ModelUnavailable) and exc.value.root_cause == "HARNESS"
    assert len(fake.calls) == calls + 1
