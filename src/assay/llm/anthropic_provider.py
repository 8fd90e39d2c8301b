"""Anthropic Messages API wire format."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from assay.core.messages import Media, Message, ToolSpec
from assay.errors import SpecError

from .errors import MalformedResponse, UnsupportedInput
from .media import check_media_roles
from .provider import PerLoopClients, as_dict, read_stream, shared_ssl_context, split_known
from .types import GenerateConfig, RawResult, Usage, build_tool_calls, shape_checked

ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com"
NO_KEY = "not-needed"
DEFAULT_MAX_TOKENS = 4096

#: Anthropic stop reasons → assay's (OpenAI's) finish reasons; others pass through.
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
_TOOL_CHOICE = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}
#: Image types the Messages API takes; it takes no audio.
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def _image_block(url: str) -> dict[str, Any]:
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": head, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def anthropic_media_block(media: Media, model: str = "") -> dict[str, Any]:
    """An ``image`` block with a ``base64`` source; :class:`UnsupportedInput` for audio
    (the Messages API has no audio input)."""
    if media.kind != "image" or media.media_type not in IMAGE_TYPES:
        raise UnsupportedInput(
            f"anthropic:{model}: the Messages API takes no {media.media_type} input "
            f"({media.name or 'a ' + media.kind + ' part'}); it takes text and "
            f"{', '.join(IMAGE_TYPES)} images",
            model=f"anthropic:{model}",
            modality=media.kind,
        )
    source = {"type": "base64", "media_type": media.media_type, "data": media.base64()}
    return {"type": "image", "source": source}


def to_anthropic_messages(
    messages: Sequence[Message], model: str = ""
) -> tuple[str | None, list[dict[str, Any]]]:
    """assay messages → (system, messages). System messages are joined into ``system``;
    tool results become ``tool_result`` blocks of a user turn; consecutive turns of one
    role are merged; an assistant message with neither text nor tool calls is dropped.
    Images of user messages become ``image`` blocks after the text."""
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def push(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for m in messages:
        if m.role == "system":
            system.append(m.content)
        elif m.role == "tool":
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": m.tool_call_id or "",
                "content": m.content,
            }
            if m.error:
                block["is_error"] = True
            push("user", [block])
        elif m.role == "assistant":
            blocks: list[dict[str, Any]] = []
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls
            ]
            if blocks:
                push("assistant", blocks)
        else:
            media = m.images or m.media
            blocks = [{"type": "text", "text": m.content}] if m.content or not media else []
            blocks += [_image_block(url) for url in m.images]
            blocks += [anthropic_media_block(part, model) for part in m.media]
            push("user", blocks)
    return ("\n\n".join(system) if system else None), out


def usage_from_anthropic(u: dict[str, Any] | None) -> Usage | None:
    if not u or u.get("input_tokens") is None:
        return None
    read = int(u.get("cache_read_input_tokens") or 0)
    write = int(u.get("cache_creation_input_tokens") or 0)
    details = u.get("output_tokens_details") or {}
    return Usage(
        input_tokens=int(u["input_tokens"]) + read + write,
        output_tokens=int(u.get("output_tokens") or 0),
        cache_read_tokens=read,
        cache_write_tokens=write,
        reasoning_tokens=int(details.get("thinking_tokens") or 0),
    )


def _finish(reason: str | None) -> str | None:
    return None if reason is None else FINISH_REASONS.get(reason, reason)


@shape_checked
def parse_anthropic_response(d: dict[str, Any]) -> RawResult:
    texts: list[str] = []
    parts: list[tuple[str, str, Any]] = []
    if not isinstance(d.get("content"), list):
        raise MalformedResponse(
            f"no content in the answer (keys: {', '.join(sorted(map(str, d))) or 'none'})"
        )
    for block in d["content"]:
        if block.get("type") == "text":
            texts.append(block.get("text") or "")
        elif block.get("type") == "tool_use":
            parts.append((block.get("id") or "", block.get("name") or "", block.get("input")))
    calls, bad = build_tool_calls(parts)
    return RawResult(
        "".join(texts),
        calls,
        bad,
        _finish(d.get("stop_reason")),
        usage_from_anthropic(d.get("usage")),
        d.get("model") or "",
    )


class AnthropicStream:
    """Accumulates Messages-API stream events (as dicts) into one result."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.usage: dict[str, Any] | None = None
        self.stop_reason: str | None = None
        self.model = ""

    @shape_checked
    def add(self, ev: dict[str, Any]) -> bool:
        """Add an event; True when it carried generated tokens."""
        kind = ev.get("type")
        if kind == "message_start":
            msg = ev.get("message") or {}
            self.model = msg.get("model") or self.model
            if msg.get("usage"):
                self.usage = dict(msg["usage"])
        elif kind == "content_block_start":
            block = ev.get("content_block") or {}
            self.blocks[ev.get("index", len(self.blocks))] = {
                "type": block.get("type"),
                "text": [block.get("text") or ""],
                "id": block.get("id"),
                "name": block.get("name"),
                "input": block.get("input"),
                "json": [],
            }
            return block.get("type") == "tool_use"
        elif kind == "content_block_delta":
            slot = self.blocks.setdefault(
                ev.get("index", 0), {"type": "text", "text": [], "json": [], "input": None}
            )
            delta = ev.get("delta") or {}
            if delta.get("type") == "text_delta":
                slot["text"].append(delta.get("text") or "")
            elif delta.get("type") == "input_json_delta":
                slot["json"].append(delta.get("partial_json") or "")
            return True
        elif kind == "message_delta":
            delta = ev.get("delta") or {}
            self.stop_reason = delta.get("stop_reason") or self.stop_reason
            if ev.get("usage"):
                merged = dict(self.usage or {})
                merged.update({k: v for k, v in ev["usage"].items() if v is not None})
                self.usage = merged
        return False

    @shape_checked
    def result(self, ttft_s: float | None) -> RawResult:
        if self.stop_reason is None and not self.blocks:
            raise MalformedResponse("the stream ended without an answer")
        texts: list[str] = []
        parts: list[tuple[str, str, Any]] = []
        for _, b in sorted(self.blocks.items()):
            if b["type"] == "text":
                texts.append("".join(b["text"]))
            elif b["type"] == "tool_use":
                raw = "".join(b["json"])
                parts.append((b["id"] or "", b["name"] or "", raw if raw else b["input"]))
        calls, bad = build_tool_calls(parts)
        usage = usage_from_anthropic(self.usage)
        return RawResult("".join(texts), calls, bad, _finish(self.stop_reason), usage, self.model, ttft_s)


class AnthropicProvider:
    """``anthropic:MODEL`` through the official SDK (``AsyncAnthropic``, SDK retries off).

    Base URL: option, else ``$ANTHROPIC_BASE_URL``, else Anthropic's. Key: option, else
    ``$ANTHROPIC_API_KEY``. ``max_tokens`` is required by the API: ``default_max_tokens``
    when the config has none. The API has no seed: it still keys the cache."""

    name = "anthropic"
    #: What the wire format can carry: no audio.
    modalities = frozenset({"text", "image"})

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
    ):
        self.model = model
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self.endpoint = (self.base_url or ANTHROPIC_DEFAULT_BASE_URL).rstrip("/")
        self._api_key = api_key
        self.default_max_tokens = default_max_tokens
        self._clients = PerLoopClients(self._make_client)

    def _key(self) -> str:
        key = self._api_key or os.environ.get("ANTHROPIC_API_KEY")
        if key:
            return key
        if self.base_url is not None:
            return NO_KEY
        raise SpecError(f"anthropic:{self.model}: no API key: set ANTHROPIC_API_KEY")

    def _make_client(self) -> Any:
        try:
            import anthropic
        except ImportError:  # pragma: no cover - the SDK is a dependency of the extra
            raise SpecError(
                "anthropic:MODEL needs the anthropic package: pip install 'assay[anthropic]'"
            ) from None
        # An explicit key stops the SDK's credential auto-discovery (profiles, federation).
        client = anthropic.AsyncAnthropic(
            api_key=self._key(),
            base_url=self.endpoint,
            max_retries=0,
            http_client=anthropic.DefaultAsyncHttpxClient(verify=shared_ssl_context()),  # the SDK's defaults
        )
        _ = client.messages  # import the resource now, not inside a timed request
        return client

    def warm(self) -> None:
        """Build this loop's client (SDK imports included) before a request is timed."""
        self._clients.get()

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], config: GenerateConfig
    ) -> dict[str, Any]:
        check_media_roles(messages, self.name, self.model)
        system, msgs = to_anthropic_messages(messages, self.model)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": config.max_tokens or self.default_max_tokens,
            "messages": msgs,
        }
        if system is not None:
            body["system"] = system
        if tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
            ]
            if config.tool_choice is not None:
                body["tool_choice"] = _TOOL_CHOICE[config.tool_choice]
        if config.stop:
            body["stop_sequences"] = list(config.stop)
        if config.temperature is not None:
            body["temperature"] = config.temperature
        if config.top_p is not None:
            body["top_p"] = config.top_p
        body.update(config.extra)
        return body

    async def send(self, request: dict[str, Any], *, stream: bool, timeout: float | None) -> RawResult:
        create = self._clients.get().messages.create
        known, extra = split_known(create, request)
        t0 = time.perf_counter()
        if not stream:
            response = await create(**known, extra_body=extra or None, timeout=timeout)
            result = parse_anthropic_response(as_dict(response))
            result.latency_s = time.perf_counter() - t0
            return result
        events = await create(**known, stream=True, extra_body=extra or None, timeout=timeout)
        result = await read_stream(events, AnthropicStream(), t0)
        result.latency_s = time.perf_counter() - t0
        return result

    async def aclose(self) -> None:
        await self._clients.aclose()
