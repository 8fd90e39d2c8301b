"""The scripted user of a recorded conversation: it says the recorded user lines in
order, whatever the agent says, then stops (``###STOP###``)."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.messages import Message
from .scripted import ScriptedUser
from .simulator import STOP, UserContext, UserSimulator, UserTurn


class ReplayedUser:
    """Says ``lines[i]`` at its i-th turn; ``###STOP###`` once they are said."""

    def __init__(self, lines: Sequence[str]):
        self.lines = list(lines)

    async def reply(self, conversation: Sequence[Message]) -> UserTurn:
        said = sum(1 for m in conversation if m.role == "user")
        return UserTurn(self.lines[said] if said < len(self.lines) else STOP)


def scripted_user(ctx: UserContext) -> UserSimulator:
    """The ``scripted`` user: the recorded lines of a task imported from traces, else the
    scenario-driven :class:`~assay.users.scripted.ScriptedUser`."""
    replay = ctx.task.replay
    if replay is not None and replay.user_turns:
        return ReplayedUser(replay.user_turns)
    return ScriptedUser(ctx)
