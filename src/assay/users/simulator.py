"""The UserSimulator protocol and how a user is chosen for a trial."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..core.messages import Message, ToolCall, ToolSpec
from ..core.registry import Registry
from ..core.task import Task

STOP = "###STOP###"
TRANSFER = "###TRANSFER###"
OUT_OF_SCOPE = "###OUT-OF-SCOPE###"
STOP_TOKENS = {STOP: "user_stop", TRANSFER: "transfer", OUT_OF_SCOPE: "user_stop"}


@dataclass(slots=True)
class UserTurn:
    """What the user says (and, dual control, the tools the user calls)."""

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)

    @property
    def stop_token(self) -> str | None:
        for token in STOP_TOKENS:
            if token in self.text:
                return token
        return None


@runtime_checkable
class UserSimulator(Protocol):
    """Plays the user of a task. ``conversation`` is the dialogue so far as the user
    sees it: user and assistant messages, and the results of the user's own tool calls
    (dual control; the agent's tool traffic is the agent's business). A reply with
    tool calls has them run on the user's side; the user then replies again."""

    async def reply(self, conversation: Sequence[Message]) -> UserTurn: ...


@dataclass
class UserContext:
    """What a user simulator is built from: its task, seed and (dual control) tools."""

    task: Task
    seed: int
    tools: list[ToolSpec] = field(default_factory=list)
    policy: str = ""
    model_options: dict[str, Any] = field(default_factory=dict)
    trial: int = 0

    @property
    def rng(self) -> random.Random:
        return random.Random(self.seed)


UserFactory = Callable[[UserContext], UserSimulator]

USERS: Registry[UserFactory] = Registry(
    "user simulator",
    "USERS",
    {"scripted": "assay.users.replay:scripted_user", "replay": "assay.users.recorded:RecordedUser"},
)
