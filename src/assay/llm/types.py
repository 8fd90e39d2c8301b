"""Provider-neutral values of the chat layer: usage, sampling config, completions."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from assay.core.messages import Message, ToolCall

from .errors import MalformedResponse


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one call. ``input_tokens`` counts ALL prompt tokens, cached ones included;
    ``cache_read_tokens`` and ``cache_write_tokens`` are the parts of it read from / written
    to the provider's prompt cache. ``reasoning_tokens`` are part of ``output_tokens``."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def uncached_input_tokens(self) -> int:
        return max(0, self.input_tokens - self.cache_read_tokens - self.cache_write_tokens)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )


@dataclass(frozen=True, slots=True)
class GenerateConfig:
    """Sampling and transport settings of one call.

    Every field except ``stream`` and ``timeout_s`` is part of the cache / cassette key,
    ``seed`` included, so k trials with k seeds stay k independent samples. ``extra`` is
    passed through to the provider's request body (e.g. ``{"top_k": 20}`` for vLLM).
    """

    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] | None = None
    tool_choice: str | None = None
    """``auto`` | ``required`` | ``none`` (provider default when None)."""
    stream: bool = False
    timeout_s: float | None = 120.0
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.stop is not None and not isinstance(self.stop, tuple):
            object.__setattr__(self, "stop", tuple(self.stop))
        if self.tool_choice not in (None, "auto", "required", "none"):
            raise ValueError(f"tool_choice must be auto, required or none, not {self.tool_choice!r}")

    def sampling(self) -> dict[str, Any]:
        """The fields that change what the model may answer (the key part of the config)."""
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "top_p": self.top_p,
            "seed": self.seed,
            "stop": list(self.stop) if self.stop is not None else None,
            "tool_choice": self.tool_choice,
            "extra": dict(self.extra),
        }


@dataclass(frozen=True, slots=True)
class MalformedOutput:
    """A tool call whose arguments the model wrote as invalid JSON (or not a JSON object).

    The call still appears in ``Completion.tool_calls`` with ``arguments={}``; this record
    keeps what the model actually wrote. It is the agent's failure, not the harness's."""

    tool_call_id: str
    name: str
    raw_arguments: str
    error: str


def parse_tool_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """Arguments as a dict, and an error message when ``raw`` is not a JSON object.

    An empty string or None means "no arguments" (``{}``), which is not an error."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    if not isinstance(raw, str):
        return {}, f"arguments are a {type(raw).__name__}, not a JSON object"
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"invalid JSON: {exc.msg} at position {exc.pos}"
    if not isinstance(value, dict):
        return {}, f"arguments are JSON {type(value).__name__}, not an object"
    return value, None


@dataclass(frozen=True, slots=True)
class Completion:
    """One model answer.

    ``usage`` is None when the provider returned none (missing, never zero), and then
    ``cost_usd`` is None too; ``cost_usd`` is also None for a model without a price.
    ``latency_s`` is the duration of the successful request (backoff excluded);
    ``ttft_s`` the time to the first generated token, streaming only. Completions served
    from the cache or a cassette keep the usage, cost and latencies recorded originally.
    ``request_hash`` identifies the request (model, messages, tools, sampling incl. seed)
    independently of the endpoint.
    """

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    usage: Usage | None = None
    model: str = ""
    latency_s: float = 0.0
    ttft_s: float | None = None
    cost_usd: float | None = None
    request_hash: str = ""
    cached: bool = False
    retries: int = 0
    malformed: tuple[MalformedOutput, ...] = ()

    @property
    def raw_request_hash(self) -> str:
        """Alias of ``request_hash``."""
        return self.request_hash

    def is_malformed(self, tool_call_id: str) -> bool:
        return any(m.tool_call_id == tool_call_id for m in self.malformed)

    def to_message(self) -> Message:
        """The assistant message this completion adds to the conversation."""
        return Message(
            role="assistant",
            content=self.text,
            tool_calls=[ToolCall(c.id, c.name, dict(c.arguments)) for c in self.tool_calls],
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; ``Completion.from_dict(c.to_dict()) == c``."""
        data = asdict(self)
        data["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Completion:
        usage = data.get("usage")
        return cls(
            text=data["text"],
            tool_calls=tuple(ToolCall(c["id"], c["name"], dict(c["arguments"])) for c in data["tool_calls"]),
            finish_reason=data.get("finish_reason"),
            usage=Usage(**usage) if usage is not None else None,
            model=data.get("model", ""),
            latency_s=data.get("latency_s", 0.0),
            ttft_s=data.get("ttft_s"),
            cost_usd=data.get("cost_usd"),
            request_hash=data.get("request_hash", ""),
            cached=data.get("cached", False),
            retries=data.get("retries", 0),
            malformed=tuple(MalformedOutput(**m) for m in data.get("malformed", ())),
        )


def build_tool_calls(
    parts: list[tuple[str, str, Any]],
) -> tuple[tuple[ToolCall, ...], tuple[MalformedOutput, ...]]:
    """``(id, name, raw arguments)`` triples → tool calls and the malformed ones among them."""
    calls: list[ToolCall] = []
    bad: list[MalformedOutput] = []
    for call_id, name, raw in parts:
        args, error = parse_tool_arguments(raw)
        calls.append(ToolCall(call_id, name, args))
        if error is not None:
            text = raw if isinstance(raw, str) else json.dumps(raw, default=str)
            bad.append(MalformedOutput(call_id, name, text, error))
    return tuple(calls), tuple(bad)


@dataclass(slots=True)
class RawResult:
    """What a provider adapter returns for one successful request (before pricing)."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    malformed: tuple[MalformedOutput, ...]
    finish_reason: str | None
    usage: Usage | None
    model: str
    ttft_s: float | None = None
    latency_s: float | None = None
    """Request sent → answer complete, measured by the adapter (client set-up excluded)."""


_R = TypeVar("_R")


def shape_checked(parse: Callable[..., _R]) -> Callable[..., _R]:
    """Wrap a parser of an endpoint's answer: an answer of an unexpected shape (a
    TypeError, KeyError... in the parser) raises :class:`MalformedResponse`, the
    endpoint's fault, retried like a transient failure."""

    @functools.wraps(parse)
    def checked(*args: Any, **kwargs: Any) -> _R:
        try:
            return parse(*args, **kwargs)
        except MalformedResponse:
            raise
        except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
            raise MalformedResponse(f"unexpected shape ({type(exc).__name__}: {exc})") from None

    return checked
