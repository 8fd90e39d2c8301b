"""What the fake LLM server answers (:class:`Reply`), how it reads requests back into
assay messages (:func:`to_messages`), and how replies become wire-format pieces."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class FakeUsage:
    """Tokens to report. ``input_tokens`` counts all prompt tokens, cached included
    (rendered as OpenAI ``prompt_tokens`` or as Anthropic uncached ``input_tokens`` +
    ``cache_read_input_tokens`` + ``cache_creation_input_tokens``)."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass
class FakeToolCall:
    """A tool call to answer with. ``arguments`` as a ``str`` is sent verbatim (use it for
    malformed JSON); a dict is JSON-encoded."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass
class Reply:
    """What the fake model answers. ``usage="auto"`` reports a deterministic estimate
    (about 4 characters a token); ``usage=None`` reports no usage at all.
    ``first_token_delay_s`` delays the first generated token (streaming) or the whole
    answer (non-streaming); ``chunk_delay_s`` separates later stream chunks."""

    text: str = ""
    tool_calls: list[FakeToolCall] = field(default_factory=list)
    usage: FakeUsage | str | None = "auto"
    finish_reason: str | None = None
    model: str | None = None
    first_token_delay_s: float = 0.0
    chunk_delay_s: float = 0.0
    chunks: int = 3
    """How many pieces the text (and each tool call's arguments) is streamed in."""


Handler = Callable[[dict[str, Any]], "Reply | str | dict[str, Any]"]


def echo(request: dict[str, Any]) -> Reply:
    """Default handler: repeats the last user text."""
    return Reply(text=f"echo: {last_user_text(request)}")


def sequence(*replies: Reply | str | dict[str, Any]) -> Handler:
    """A handler answering ``replies`` in order; raises when they run out."""
    queue = deque(replies)
    lock = threading.Lock()

    def handler(_request: dict[str, Any]) -> Reply | str | dict[str, Any]:
        with lock:
            if not queue:
                raise RuntimeError("sequence handler: no reply left")
            return queue.popleft()

    return handler


# -- reading requests -------------------------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def to_messages(request: dict[str, Any]) -> list[Any]:
    """The conversation of an OpenAI or Anthropic request as ``assay.core.Message`` list."""
    from assay.core.messages import Message, ToolCall

    out: list[Message] = []
    if "system" in request:  # Anthropic
        system = request["system"]
        out.append(Message("system", system if isinstance(system, str) else _text(system)))
    for m in request.get("messages", []):
        role, content = m.get("role"), m.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in content
        ):
            text = _text(content)
            if role == "assistant":
                calls = [
                    ToolCall(b["id"], b["name"], dict(b.get("input") or {}))
                    for b in content
                    if b.get("type") == "tool_use"
                ]
                out.append(Message("assistant", text, tool_calls=calls))
                continue
            for b in content:
                if b.get("type") == "tool_result":
                    out.append(
                        Message(
                            "tool",
                            _text(b.get("content")),
                            tool_call_id=b.get("tool_use_id"),
                            error=bool(b.get("is_error")),
                        )
                    )
            if text:
                out.append(Message("user", text))
            continue
        if role == "tool":
            out.append(Message("tool", _text(content), tool_call_id=m.get("tool_call_id")))
        elif role == "assistant":
            calls = []
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function", {})
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except json.JSONDecodeError:
                    args = {}
                calls.append(ToolCall(tc.get("id", ""), fn.get("name", ""), args))
            out.append(Message("assistant", _text(content), tool_calls=calls))
        else:
            out.append(Message(role, _text(content)))
    return out


def last_user_text(request: dict[str, Any]) -> str:
    for m in reversed(to_messages(request)):
        if m.role == "user":
            return str(m.content)
    return ""


# -- rendering replies --------------------------------------------------------------------


def pieces(text: str, n: int) -> list[str]:
    if not text:
        return []
    n = max(1, min(n, len(text)))
    size = -(-len(text) // n)
    return [text[i : i + size] for i in range(0, len(text), size)]


def args_text(call: FakeToolCall) -> str:
    return call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)


def auto_usage(request: dict[str, Any], reply: Reply) -> FakeUsage:
    prompt = len(json.dumps(request.get("messages", []))) + len(json.dumps(request.get("tools", [])))
    out = len(reply.text) + sum(len(args_text(c)) + len(c.name) for c in reply.tool_calls)
    return FakeUsage(input_tokens=prompt // 4 + 1, output_tokens=out // 4 + 1)


def usage_of(request: dict[str, Any], reply: Reply) -> FakeUsage | None:
    if reply.usage is None:
        return None
    if isinstance(reply.usage, str):
        return auto_usage(request, reply)
    u = reply.usage
    return FakeUsage(
        u.input_tokens,
        u.output_tokens,
        getattr(u, "cache_read_tokens", 0),
        getattr(u, "cache_write_tokens", 0),
        getattr(u, "reasoning_tokens", 0),
    )


def openai_usage(u: FakeUsage) -> dict[str, Any]:
    return {
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.input_tokens + u.output_tokens,
        "prompt_tokens_details": {
            "cached_tokens": u.cache_read_tokens,
            "cache_write_tokens": u.cache_write_tokens,
        },
        "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
    }


def anthropic_usage(u: FakeUsage) -> dict[str, Any]:
    return {
        "input_tokens": u.input_tokens - u.cache_read_tokens - u.cache_write_tokens,
        "output_tokens": u.output_tokens,
        "cache_read_input_tokens": u.cache_read_tokens,
        "cache_creation_input_tokens": u.cache_write_tokens,
        "output_tokens_details": {"thinking_tokens": u.reasoning_tokens},
    }


def coerce(result: Reply | str | dict[str, Any]) -> Reply:
    if isinstance(result, Reply):
        return result
    if isinstance(result, str):
        return Reply(text=result)
    if isinstance(result, dict):
        data = dict(result)
        data["tool_calls"] = [
            c if isinstance(c, FakeToolCall) else FakeToolCall(**c) for c in data.get("tool_calls", [])
        ]
        return Reply(**data)
    raise TypeError(f"handler returned {type(result).__name__}, expected Reply, str or dict")
