"""Replies already given, by conversation, for deterministic participants (the scripted
user, the retail reference agents): their reply is a pure function of the conversation
(and of what they are built from), so the k trials of a task, which hold the same
conversation up to each reply, compute each reply once.

A :class:`Memo` keeps tries over conversations, one per root key (what the replies
depend on besides the conversation: the scenario, the agent's kind and clock...). A
node is reached by the keys of the messages so far (``key(message)``: what the
participant reads of a message, or None when it cannot be keyed: such a conversation
is not memoised) and keeps the reply given there. A participant walks its trie with a
:class:`Walk` as its conversation grows (one step per new message) and computes a
reply only at a node without one. Bounded: past ``max_nodes`` messages in all, the
memo starts afresh (walks still on the old tries finish their trial there).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from operator import is_
from typing import Generic, TypeVar

from ..core.messages import Message

R = TypeVar("R")

MessageKey = Callable[[Message], Hashable | None]

__all__ = ["Memo", "MessageKey", "Node", "Walk"]


class Node(Generic[R]):
    """A conversation so far: the nodes after its possible next messages, and the reply
    given after it (None: not yet)."""

    __slots__ = ("next", "reply")

    def __init__(self) -> None:
        self.next: dict[Hashable, Node[R]] = {}
        self.reply: R | None = None


class Memo(Generic[R]):
    """Tries of replies by root key, holding at most ``max_nodes`` nodes in all."""

    def __init__(self, max_nodes: int):
        self.max_nodes = max_nodes
        self.roots: dict[Hashable, Node[R]] = {}
        self.nodes = 0

    def root(self, key: Hashable) -> Node[R]:
        found = self.roots.get(key)
        if found is None:
            found = self.roots[key] = Node()
        return found

    def grow(self) -> bool:
        """Count a new node; False (and start afresh) when the tries are full."""
        if self.nodes >= self.max_nodes:
            self.roots.clear()
            self.nodes = 0
            return False
        self.nodes += 1
        return True


class Walk(Generic[R]):
    """One participant's way through a :class:`Memo` (see the module docstring)."""

    __slots__ = ("_key", "_memo", "_messages", "_node", "_root", "_walked")

    def __init__(self, memo: Memo[R], root: Hashable, key: MessageKey):
        self._memo, self._root, self._key = memo, root, key
        self._messages: list[Message] = []
        self._node: Node[R] | None = None
        self._walked = False  # _node is where _messages led (None: off the memo)

    def find(self, conversation: Sequence[Message]) -> Node[R] | None:
        """The node of ``conversation`` (its ``reply`` None when none was kept yet), or
        None when the conversation is not memoised."""
        seen, node = self._messages, self._node
        done = len(seen)
        if self._walked and len(conversation) >= done and all(map(is_, conversation, seen)):
            if node is None:  # off the memo for good: only remember the conversation
                seen.extend(conversation[done:])
                return None
        else:
            node, seen, done = self._memo.root(self._root), [], 0
        key, memo = self._key, self._memo
        for m in conversation[done:]:
            seen.append(m)
            k = key(m)
            child = node.next.get(k) if k is not None else None
            if child is None:
                if k is None or not memo.grow():
                    seen.extend(conversation[len(seen) :])
                    node = None
                    break
                child = node.next[k] = Node()
            node = child
        self._messages, self._node, self._walked = seen, node, True
        return node
