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


@dataclass(slots=True)
class Transcript:
    """Messages in order (user, assistant, tool) and the span tree of the trial."""

    messages: list[Message] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    started_at: str = ""
    prompts: dict[str, Any] = field(default_factory=dict)
    """Prompt snapshots of the trial's model calls: ``system:HASH`` -> system prompt,
    ``tools:HASH`` -> tool definitions (llm spans carry the hashes)."""

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
