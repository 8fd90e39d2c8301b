"""Adapters that turn plain Python callables into Agents."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from typing import Any

from ..core.messages import Message, ToolCall, ToolSpec
from .base import AgentTurn


def to_turn(value: Any) -> AgentTurn:
    """Accept what a simple agent function may return: an AgentTurn, a string, or a
    dict ``{"text": ..., "tool_calls": [{"name": ..., "arguments": {...}}]}``."""
    if isinstance(value, AgentTurn):
        return value
    if isinstance(value, str):
        return AgentTurn(text=value)
    if isinstance(value, dict):
        calls = []
        for i, raw in enumerate(value.get("tool_calls") or []):
            if isinstance(raw, ToolCall):
                calls.append(raw)
                continue
            args = raw.get("arguments", raw.get("args", {}))
            if isinstance(args, str):
                args = json.loads(args)
            calls.append(ToolCall(id=str(raw.get("id") or f"call_{i}"), name=raw["name"], arguments=args))
        return AgentTurn(text=str(value.get("text") or ""), tool_calls=calls)
    raise TypeError(f"agent returned {type(value).__name__}; expected AgentTurn, str or dict")


class SyncAgent:
    """An agent object whose ``respond`` is a plain method (not ``async``): called
    directly; everything else of the object (``prompt_version``...) shows through."""

    def __init__(self, agent: Any):
        self.agent = agent

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        result = self.agent.respond(conversation, tools)
        if inspect.isawaitable(result):
            result = await result
        return to_turn(result)


class CallableAgent:
    """Wraps ``fn(conversation, tools)`` (sync or async) as an Agent."""

    def __init__(self, fn: Callable[..., Any], takes_tools: bool | None = None):
        self.fn = fn
        self._takes_tools = len(inspect.signature(fn).parameters) >= 2 if takes_tools is None else takes_tools

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        result = self.fn(conversation, tools) if self._takes_tools else self.fn(conversation)
        if inspect.isawaitable(result):
            result = await result
        return to_turn(result)
