"""Transcripts: everything said and done in a trial, as messages plus a tree of spans."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .messages import Message, ToolCall

SpanKind = Literal["trial", "turn", "agent", "llm", "tool", "user", "grader"]


@dataclass(slots=True)
class Span:
    """One step with its timing: seconds since the trial started (``start``, ``end``)."""

    id: int
    kind: SpanKind
    name: str
    start: float
    end: float | None = None
    parent: int | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def duration(self) -> float:
        return 0.0 if self.end is None else self.end - self.start


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One model call of a trial, as its ``llm`` span records it: who made it, to which
    model, where the answer came from, how long it took and when its first token came."""

    role: str
    model: str
    source: str
    """``network``, ``cache`` or ``cassette``."""
    latency_s: float
    ttft_s: float | None
    failed: bool


@dataclass(slots=True)
class Transcript:
    """Messages in order (user, assistant, tool) and the span tree of the trial."""

    messages: list[Message] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    started_at: str = ""
    prompts: dict[str, Any] = field(default_factory=dict)
    """Prompt snapshots of the trial's model calls: ``system:HASH`` -> system prompt,
    ``tools:HASH`` -> tool definitions (llm spans carry the hashes)."""

    def model_calls(self) -> list[ModelCall]:
        """Every model call of the trial (its ``llm`` spans), in order."""
        calls = []
        for span in self.spans:
            if span.kind != "llm":
                continue
            a = span.attributes
            latency = a.get("latency_s")
            calls.append(
                ModelCall(
                    role=str(a.get("role") or ""),
                    model=span.name,
                    source=str(a.get("source") or "network"),
                    latency_s=float(latency) if latency is not None else span.duration,
                    ttft_s=None if a.get("ttft_s") is None else float(a["ttft_s"]),
                    failed=span.error is not None,
                )
            )
        return calls

    def tool_calls(self) -> list[ToolCall]:
        """The agent's tool calls, in order."""
        return [c for m in self.messages if m.role == "assistant" for c in m.tool_calls]

    def all_tool_calls(self) -> list[ToolCall]:
        """Every tool call, the agent's and (dual control) the user's, in order."""
        return [c for m in self.messages if m.role in ("assistant", "user") for c in m.tool_calls]

    def user_tool_calls(self) -> list[ToolCall]:
        """The user's own tool calls (dual control), in order."""
        return [c for m in self.messages if m.role == "user" for c in m.tool_calls]

    def tool_results(self) -> dict[str, Message]:
        return {m.tool_call_id: m for m in self.messages if m.role == "tool" and m.tool_call_id}

    def agent_texts(self) -> list[str]:
        return [m.content for m in self.messages if m.role == "assistant" and m.content]

    def user_texts(self) -> list[str]:
        return [m.content for m in self.messages if m.role == "user"]
