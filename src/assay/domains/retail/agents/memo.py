"""Moves already made, by conversation: the reference agents that never slip at random
(careful, hasty) are pure functions of (conversation, now), so the k trials of a task,
which hold the same conversation up to each move, make each move once (a
:class:`~assay.users.memo.Memo` with a trie per agent kind and clock).

The memo lives as long as the event loop the trials run in: one per ``assay.run``, so
a run's trials share it and nothing is kept from one run to the next (trials played
outside a running loop are not memoised). A message is read by what the agents read of
it: role, text, tool calls with their arguments, the result's call id and error flag.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Hashable, Sequence
from datetime import datetime

from ....agents.base import AgentTurn
from ....core.messages import Message, ToolCall
from ....envs.tools import arguments_key, plain_arguments
from ....users.memo import Memo, Node, Walk

#: How many nodes (messages) a memo holds at most before it starts afresh.
MAX_NODES = 10_000

#: The memo of each running event loop (it goes with its loop).
_MEMOS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Memo[AgentTurn]] = weakref.WeakKeyDictionary()


def loop_memo() -> Memo[AgentTurn] | None:
    """The memo of the running event loop; None outside one."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    memo = _MEMOS.get(loop)
    if memo is None:
        memo = _MEMOS[loop] = Memo(MAX_NODES)
    return memo


def message_key(m: Message) -> Hashable | None:
    """What the agents read of ``m``, as a key; None when a tool-call argument is not a
    plain value (such a conversation is not memoised)."""
    if not m.tool_calls:
        return (m.role, m.content, m.tool_call_id, m.error)
    calls: list[Hashable] = []
    for c in m.tool_calls:
        args = arguments_key(c.arguments)
        if args is None:
            return None
        calls.append((c.id, c.name, args))
    return (m.role, m.content, m.tool_call_id, m.error, tuple(calls))


def copy_turn(turn: AgentTurn) -> AgentTurn:
    """An independent copy of a memoised move (its arguments are plain values)."""
    calls = [ToolCall(c.id, c.name, dict(c.arguments), c.requestor) for c in turn.tool_calls]
    return AgentTurn(turn.text, calls, dict(turn.invalid) if turn.invalid else {})


class Moves:
    """One agent's walk through the trie of its kind and clock, in the memo of the
    running loop."""

    __slots__ = ("_loop", "_node", "_root", "_walk")

    def __init__(self, kind: type, now: datetime):
        self._root = (kind, now)
        self._walk: Walk[AgentTurn] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop of _walk's memo
        self._node: Node[AgentTurn] | None = None

    def find(self, conversation: Sequence[Message]) -> AgentTurn | None:
        """A copy of the move memoised for ``conversation``, or None (then :meth:`keep`
        the move made)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._node = None
            return None
        walk = self._walk
        if loop is not self._loop or walk is None:
            memo = loop_memo()
            assert memo is not None
            self._loop, self._walk = loop, (walk := Walk(memo, self._root, message_key))
        node = self._node = walk.find(conversation)
        return copy_turn(node.reply) if node is not None and node.reply is not None else None

    def keep(self, move: AgentTurn) -> None:
        """Memoise ``move`` (a copy) for the conversation of the last :meth:`find`; not
        when an argument is not a plain value."""
        if self._node is not None and all(plain_arguments(c.arguments) for c in move.tool_calls):
            self._node.reply = copy_turn(move)
