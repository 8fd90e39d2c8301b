"""Replaying a recorded conversation: the user's side (:class:`RecordedUser`, user spec
``replay``); the agent's side is ``builtin:replay`` (:mod:`assay.agents.oracle`).

A task to replay carries its recordings in ``metadata["recordings"]``: one list of
messages per trial (:class:`~assay.core.task.HistoryMessage` as JSON), what the
participants said after the task's history and greeting, in order. Each side says its
recorded messages, one per turn, with their tool calls (ids kept); the orchestrator runs
the calls on a fresh environment, so the transcript holds the environment's own outputs
and the graders grade what the recording did (``assay regrade``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.messages import Message, ToolCall
from ..core.task import HistoryMessage, Task
from .simulator import STOP, UserContext, UserTurn

#: Key of ``Task.metadata`` holding a task's recorded conversations (one per trial).
RECORDINGS_KEY = "recordings"


def recorded_messages(task: Task, trial: int) -> list[HistoryMessage]:
    """The recorded conversation of trial ``trial`` of ``task`` (empty when none)."""
    recordings = task.metadata.get(RECORDINGS_KEY) or []
    if trial >= len(recordings):
        return []
    return [HistoryMessage.model_validate(m) for m in recordings[trial]]


def calls_of(message: HistoryMessage) -> list[ToolCall]:
    return [ToolCall(c.id, c.name, dict(c.args), c.requestor) for c in message.tool_calls]


class RecordedUser:
    """Says the recorded user messages in order (with their tool calls); once they run
    out, stops."""

    def __init__(self, ctx: UserContext):
        self.queue = [m for m in recorded_messages(ctx.task, ctx.trial) if m.role == "user"]

    async def reply(self, conversation: Sequence[Message]) -> UserTurn:
        if not self.queue:
            return UserTurn(STOP)
        message = self.queue.pop(0)
        return UserTurn(message.content, calls_of(message))


__all__ = ["RECORDINGS_KEY", "RecordedUser", "calls_of", "recorded_messages"]
