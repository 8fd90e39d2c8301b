"""The Agent protocol: the system under test."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any, Protocol, runtime_checkable

from ..core.messages import Message, ToolCall, ToolSpec
from ..core.task import Task


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
    hidden side (user facts, graders, reference) — except for an *oracle*: an agent
    that declares ``oracle = True`` (its class or factory), such as
    ``builtin:gold-replay``, which checks a domain and its graders rather than being
    under test, gets the whole ``task``. ``params`` and ``flags`` are the
    configuration's parameters and feature flags (part of the config hash);
    ``model_options`` are run settings for model clients (cache, pricing file,
    endpoint) that do not change what is under test; ``trial`` is the trial's index."""

    seed: int
    domain: str
    policy: str
    now: datetime
    timezone: str
    params: dict[str, Any] = field(default_factory=dict)
    flags: dict[str, Any] = field(default_factory=dict)
    model_options: dict[str, Any] = field(default_factory=dict)
    task: Task | None = None
    trial: int = 0

    @cached_property
    def rng(self) -> random.Random:
        """The trial's generator, seeded with :attr:`seed` (made on first use: most agents
        never draw from it)."""
        return random.Random(self.seed)


AgentFactory = Callable[[AgentContext], Agent]


def is_oracle(factory: AgentFactory) -> bool:
    """Whether an agent factory declared itself an oracle (``oracle = True``): it is
    given the task (see :class:`AgentContext`)."""
    return getattr(factory, "oracle", False) is True
