"""Conversation records. Plain slotted dataclasses: they are built inside the trial loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


Requestor = Literal["agent", "user"]


@dataclass(slots=True)
class ToolCall:
    """A call the agent (or, dual control, the user: ``requestor="user"``) asked for."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    requestor: Requestor = "agent"


@dataclass(slots=True)
class Message:
    """One message. ``role='tool'`` messages carry a tool result for ``tool_call_id``;
    ``error`` marks a tool result that is an error message. A ``user`` message may carry
    tool calls too (dual control: the user acting on their own tools), answered by the
    ``tool`` messages that follow it."""

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    error: bool = False
    images: list[str] = field(default_factory=list)
    """Image parts (URLs or ``data:`` URIs) that accompany ``content``."""

    @property
    def text(self) -> str:
        return self.content


@dataclass(slots=True)
class ToolSpec:
    """A tool as the agent sees it: name, description and JSON schema of arguments."""

    name: str
    description: str
    parameters: dict[str, Any]
    write: bool = False

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }
