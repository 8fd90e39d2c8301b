"""The Agent protocol: the system under test."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..core.messages import Message, ToolCall, ToolSpec


@dataclass(slots=True)
class AgentTurn:
    """The agent's move: text for the user and/or tool calls for the environment."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    invalid: dict[str, str] = field(default_factory=dict)
    """Tool calls (by id) whose arguments the model garbled: the orchestrator answers
    them with an error instead of running them (the agent's failure, shown as such)."""


@runtime_checkable
class Agent(Protocol):
    """``respond`` sees the whole conversation (user, assistant and tool messages) and
    the tools it may call, and returns its next move."""

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn: ...


@dataclass
class AgentContext:
    """What an agent is built with for one trial. It holds nothing of the task's
    hidden side (user facts, graders, reference). ``params`` and ``flags`` are the
    configuration's parameters and feature flags (part of the config hash);
    ``model_options`` are run settings for model clients (cache, pricing file,
    endpoint) that do not change what is under test."""

    seed: int
    domain: str
    policy: str
    now: datetime
    timezone: str
    params: dict[str, Any] = field(default_factory=dict)
    flags: dict[str, Any] = field(default_factory=dict)
    model_options: dict[str, Any] = field(default_factory=dict)
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)


AgentFactory = Callable[[AgentContext], Agent]
