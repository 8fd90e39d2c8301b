"""OpenAI chat-completions wire format (OpenAI, vLLM, Ollama, llama.cpp, LM Studio, ...)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from typing import Any

from assay.core.messages import Media, Message, ToolSpec
from assay.errors import SpecError

from .errors import MalformedResponse
from .media import OPENAI_AUDIO_FORMATS, check_media_roles
from .provider import PerLoopClients, as_dict, read_stream, shared_ssl_context, split_known
from .types import GenerateConfig, RawResult, Usage, build_tool_calls, shape_checked

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Placeholder key for self-hosted servers that ignore it (vLLM, Ollama, llama.cpp).
NO_KEY = "not-needed"


def openai_media_part(media: Media) -> dict[str, Any]:
    """A content part of a user message: ``image_url`` with a ``data:`` URL for an image,
    ``input_audio`` (base64 data and ``wav``/``mp3`` format) for audio."""
    if media.kind == "image":
        return {"type": "image_url", "image_url": {"url": media.data_url()}}
    return {
        "type": "input_audio",
        "input_audio": {"data": media.base64(), "format": OPENAI_AUDIO_FORMATS[media.media_type]},
    }


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """assay messages → chat-completions ``messages``. Images and audio ride on user
    messages, as content parts after the text."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content})
            continue
        item: dict[str, Any] = {"role": m.role}
        if m.role == "assistant":
            item["content"] = m.content if (m.content or not m.tool_calls) else None
            if m.tool_calls:
                item["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "arguments": json.dumps(c.arguments, ensure_ascii=False),
                        },
                    }
                    for c in m.tool_calls
                ]
        elif m.role == "user" and (m.images or m.media):
            parts: list[dict[str, Any]] = []
            if m.content:
                parts.append({"type": "text", "text": m.content})
            parts += [{"type": "image_url", "image_url": {"url": url}} for url in m.images]
            parts += [openai_media_part(media) for media in m.media]
            item["content"] = parts
        else:
            item["content"] = m.content
        if m.name and m.role in ("user", "assistant"):
            item["name"] = m.name
        out.append(item)
    return out


def usage_from_openai(u: dict[str, Any] | None) -> Usage | None:
    if not u or u.get("prompt_tokens") is None:
        return None
    prompt = u.get("prompt_tokens_details") or {}
    completion = u.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=int(u["prompt_tokens"]),
        output_tokens=int(u.get("completion_tokens") or 0),
        cache_read_tokens=int(prompt.get("cached_tokens") or 0),
        cache_write_tokens=int(prompt.get("cache_write_tokens") or 0),
        reasoning_tokens=int(completion.get("reasoning_tokens") or 0),
    )


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(p.get("text") or "" for p in content if isinstance(p, dict))


@shape_checked
def parse_openai_response(d: dict[str, Any]) -> RawResult:
    choices = d.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedResponse(
            f"no choices in the answer (keys: {', '.join(sorted(map(str, d))) or 'none'})"
        )
    choice = choices[0]
    msg = choice.get("message")
    if not isinstance(msg, dict):
        raise MalformedResponse("choices[0] has no message")
    parts = []
    for i, tc in enumerate(msg.get("tool_calls") or []):
        fn = tc.get("function") or {}
        parts.append((tc.get("id") or f"call_{i}", fn.get("name") or "", fn.get("arguments")))
    calls, bad = build_tool_calls(parts)
    return RawResult(
        text=_text_of(msg.get("content")),
        tool_calls=calls,
        malformed=bad,
        finish_reason=choice.get("finish_reason"),
        usage=usage_from_openai(d.get("usage")),
        model=d.get("model") or "",
    )


class OpenAIStream:
    """Accumulates ``chat.completion.chunk`` dicts into one result."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self._slots: dict[int, int] = {}  # a delta's index -> its call's slot
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model = ""

    @shape_checked
    def add(self, chunk: dict[str, Any]) -> bool:
        """Add a chunk; True when it carried generated tokens."""
        got = False
        for ch in chunk.get("choices") or []:
            delta = ch.get("delta") or {}
            if delta.get("content"):
                self.text.append(delta["content"])
                got = True
            if delta.get("reasoning_content") or delta.get("reasoning"):
                got = True
            for tc in delta.get("tool_calls") or []:
                slot = self.calls.setdefault(self._index_of(tc), {"id": None, "name": "", "args": []})
                fn = tc.get("function") or {}
                if tc.get("id"):
                    slot["id"] = tc["id"]
                if fn.get("name") and not slot["name"]:
                    slot["name"] = fn["name"]
                if fn.get("arguments"):
                    slot["args"].append(fn["arguments"])
                got = True
            if ch.get("finish_reason"):
                self.finish_reason = ch["finish_reason"]
        if chunk.get("usage"):
            self.usage = usage_from_openai(chunk["usage"])
        if chunk.get("model"):
            self.model = chunk["model"]
        return got

    def _index_of(self, tc: dict[str, Any]) -> int:
        """The slot (in order of appearance) of a tool-call delta. A delta whose ``id``
        differs from the call already at its ``index`` starts a new call: some servers
        leave ``index`` out, and LiteLLM then fills in 0 for every call. Without an index,
        a delta with a new ``id`` starts a call and one without an id continues the last."""
        index = tc.get("index")
        call_id = tc.get("id")
        if isinstance(index, int):
            slot = self._slots.get(index)
            known = None if slot is None else self.calls[slot]["id"]
            if slot is None or (call_id and known and known != call_id):
                slot = self._slots[index] = len(self.calls)
            return slot
        for i, call in self.calls.items():
            if call_id and call["id"] == call_id:
                return i
        if call_id or not self.calls:
            return max(self.calls, default=-1) + 1
        return max(self.calls)

    @shape_checked
    def result(self, ttft_s: float | None) -> RawResult:
        if self.finish_reason is None and not self.text and not self.calls:
            raise MalformedResponse("the stream ended without an answer")
        parts = [
            (s["id"] or f"call_{i}", s["name"], "".join(s["args"])) for i, s in sorted(self.calls.items())
        ]
        calls, bad = build_tool_calls(parts)
        return RawResult("".join(self.text), calls, bad, self.finish_reason, self.usage, self.model, ttft_s)


class OpenAIProvider:
    """``openai:MODEL`` through the official SDK (``AsyncOpenAI``, SDK retries off).

    Base URL: option, else ``$OPENAI_BASE_URL``, else OpenAI's. Key: option, else
    ``$OPENAI_API_KEY``; with a custom base URL and no key a placeholder is sent (local
    servers ignore it). ``max_tokens`` goes out as ``max_completion_tokens`` to OpenAI
    itself and as ``max_tokens`` elsewhere (override with ``max_tokens_field``)."""

    name = "openai"
    #: What the wire format can carry (a given model may still refuse audio).
    modalities = frozenset({"text", "image", "audio"})

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens_field: str | None = None,
        stream_usage: bool = True,
    ):
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.endpoint = (self.base_url or OPENAI_DEFAULT_BASE_URL).rstrip("/")
        self._api_key = api_key
        self.max_tokens_field = max_tokens_field or (
            "max_completion_tokens" if "api.openai.com" in self.endpoint else "max_tokens"
        )
        self.stream_usage = stream_usage
        self._clients = PerLoopClients(self._make_client)

    def _key(self) -> str:
        key = self._api_key or os.environ.get("OPENAI_API_KEY")
        if key:
            return key
        if self.base_url is not None:
            return NO_KEY
        raise SpecError(
            f"openai:{self.model}: no API key: set OPENAI_API_KEY, or OPENAI_BASE_URL for a "
            "self-hosted OpenAI-compatible server"
        )

    def _make_client(self) -> Any:
        try:
            import openai
        except ImportError:  # pragma: no cover - the SDK is a dependency of the extra
            raise SpecError("openai:MODEL needs the openai package: pip install 'assay[openai]'") from None
        client = openai.AsyncOpenAI(
            api_key=self._key(),
            base_url=self.endpoint,
            max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(verify=shared_ssl_context()),  # the SDK's defaults
        )
        _ = client.chat.completions  # import the resource now, not inside a timed request
        return client

    def warm(self) -> None:
        """Build this loop's client (SDK imports included) before a request is timed."""
        self._clients.get()

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], config: GenerateConfig
    ) -> dict[str, Any]:
        check_media_roles(messages, self.name, self.model)
        body: dict[str, Any] = {"model": self.model, "messages": to_openai_messages(messages)}
        if tools:
            body["tools"] = [t.to_openai() for t in tools]
        if config.tool_choice is not None and tools:
            body["tool_choice"] = config.tool_choice
        for key, value in (
            ("temperature", config.temperature),
            ("top_p", config.top_p),
            ("seed", config.seed),
            (self.max_tokens_field, config.max_tokens),
            ("stop", list(config.stop) if config.stop else None),
        ):
            if value is not None:
                body[key] = value
        body.update(config.extra)
        return body

    async def _create(self, body: dict[str, Any], stream: bool, timeout: float | None) -> Any:
        create = self._clients.get().chat.completions.create
        known, extra = split_known(create, body)
        if stream:
            known["stream"] = True
            if self.stream_usage:
                known["stream_options"] = {"include_usage": True}
        return await create(**known, extra_body=extra or None, timeout=timeout)

    async def send(self, request: dict[str, Any], *, stream: bool, timeout: float | None) -> RawResult:
        self.warm()
        t0 = time.perf_counter()
        response = await self._create(request, stream, timeout)
        if not stream:
            result = parse_openai_response(as_dict(response))
            result.usage = self._reported_usage(result.usage)
            result.latency_s = time.perf_counter() - t0
            return result
        result = await read_stream(response, OpenAIStream(), t0)
        if not self._stream_reported_usage(response):
            result.usage = None
        result.latency_s = time.perf_counter() - t0
        return result

    def _reported_usage(self, usage: Usage | None) -> Usage | None:
        """The usage of a plain answer as the server reported it (a hook for LiteLLM)."""
        return usage

    def _stream_reported_usage(self, response: Any) -> bool:
        """False when the stream's usage did not come from the server (a hook for LiteLLM)."""
        return True

    async def aclose(self) -> None:
        await self._clients.aclose()
