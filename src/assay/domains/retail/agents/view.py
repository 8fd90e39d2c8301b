"""What a retail reference agent knows, derived from the conversation alone.

The reference agents decide from the messages alone: every call builds a
:class:`View` of them (what the user said, which tools ran and what they returned,
what the agent already asked) and decides from it. Within a trial the conversation
only grows, so a View extends the previous one (the same message objects, then new
ones) rather than reading every message again: the same facts either way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from operator import is_
from typing import Any

from ....core.messages import Message, ToolCall
from .reading import INJECTION, _plain, asks_for_human, intent_of, own_words

ORDER_ID = re.compile(r"#W\d{7}")
EMAIL = re.compile(r"My email is (\S+?)\.?(?:\s|$)")
NAME = re.compile(r"My name is ([^\s.]+) ([^.]+)\.")
ZIP = re.compile(r"My zip code is (\d{5})")
ITEM = re.compile(r"It's the one with the (.+?)\.(?:\s|$)")
ADDRESS = re.compile(r"The new address is: (.+?)\.?(?:\n|$)")
DONT_KNOW_ORDER = re.compile(r"I don't know my order id", re.IGNORECASE)
AMOUNT = re.compile(r"\$\s?(\d+(?:\.\d{1,2})?)")
FIND_TOOLS = ("find_user_id_by_email", "find_user_id_by_name_zip")
WRITE_TOOLS = ("refund_delivered_order", "cancel_pending_order", "update_order_address")


@dataclass(frozen=True)
class ToolEvent:
    """A tool call and its result; ``index`` is the position of the result message."""

    index: int
    name: str
    args: dict[str, Any]
    ok: bool
    content: str

    @cached_property
    def data(self) -> Any:
        """The result, with amounts and dates read whatever their format (:func:`_plain`).
        Read once per event (callers copy what they change)."""
        try:
            return _plain("", json.loads(self.content))
        except (ValueError, TypeError):
            return self.content


class View:
    """Facts derived from a conversation (user, assistant and tool messages).

    The facts the policy asks for every turn (the goal, the order named last, the
    verified user, the writes...) are kept as the messages are read: a fact found in
    the first messages stays found, and a View that extends the previous one takes
    over what it found and reads on from there (the same facts as a whole reading)."""

    def __init__(self, conversation: Sequence[Message], previous: View | None = None):
        """The facts of ``conversation``. When it extends the conversation of
        ``previous`` (the same message objects, then new ones), ``previous``'s facts are
        taken over and only the new messages read; ``previous`` is then emptied."""
        self.messages: list[Message] = list(conversation)
        if previous is not None and _extends(self.messages, previous.messages):
            start = len(previous.messages)
            new = self.messages[start:]
            calls, orphans = previous._calls, previous._orphans
            # a call id seen before (or a result that came before its call) would pair
            # differently when read whole: read it whole then
            if not any(
                c.id in calls or c.id in orphans for m in new if m.role == "assistant" for c in m.tool_calls
            ):
                # taken over, not copied: ``previous`` is not to be used afterwards
                messages = self.messages
                self.__dict__.update(previous.__dict__)
                self.messages = messages
                previous._clear()
                previous.messages = []
                for m in new:
                    if m.role == "assistant":
                        calls.update((c.id, c) for c in m.tool_calls)
                self._read(start)
                return
        self._clear()
        self._calls.update((c.id, c) for m in self.messages if m.role == "assistant" for c in m.tool_calls)
        self._read(0)

    def _clear(self) -> None:
        """No facts yet."""
        self.user: list[tuple[int, str]] = []
        self.agent: list[tuple[int, str]] = []
        self.events: list[ToolEvent] = []
        self._calls: dict[str, ToolCall] = {}
        self._orphans: set[str | None] = set()
        self._by_name: dict[str, list[ToolEvent]] = {}
        self._writes: list[ToolEvent] = []
        self._verified: ToolEvent | None = None
        self._transferred = False
        # fact -> [user messages read, what was found]: facts of the user's messages,
        # read on from where the last question about them stopped
        self._found: dict[object, list[Any]] = {}

    def _read(self, start: int) -> None:
        """Take in the messages from ``start`` on (their calls are in ``_calls``: a
        result pairs with the last call of its id)."""
        messages = self.messages
        for i in range(start, len(messages)):
            m = messages[i]
            role = m.role
            if role == "user":
                self.user.append((i, m.content))
            elif role == "assistant":
                if m.content:
                    self.agent.append((i, m.content))
            elif role == "tool":
                call = self._calls.get(m.tool_call_id) if m.tool_call_id is not None else None
                if call is None:
                    self._orphans.add(m.tool_call_id)
                    continue
                # the error flag may not survive a round trip through a chat API: the
                # orchestrator's "Error: ..." prefix marks a refused call as well
                ok = not m.error and not m.content.startswith("Error:")
                event = ToolEvent(i, call.name, dict(call.arguments), ok, m.content)
                self.events.append(event)
                same = self._by_name.get(event.name)
                if same is None:
                    self._by_name[event.name] = [event]
                else:
                    same.append(event)
                if event.name in WRITE_TOOLS:
                    self._writes.append(event)
                elif ok:
                    if self._verified is None and event.name in FIND_TOOLS:
                        self._verified = event
                    elif event.name == "transfer_to_human_agent":
                        self._transferred = True

    # what the user said ----------------------------------------------------------------
    def _scan(self, fact: object, read: Callable[[int, str], Any], last: bool = False) -> Any:
        """What ``read(index, text)`` finds in the user's messages: in the first message
        where it finds something (``last``: the last such message); None if nowhere."""
        state = self._found.get(fact)
        if state is None:
            state = self._found[fact] = [0, None]
        done, found = state
        user = self.user
        if done < len(user) and (last or found is None):
            for i, text in user[done:]:
                done += 1
                value = read(i, text)
                if value is not None:
                    found = value
                    if not last:
                        break
            state[0], state[1] = done, found
        return found

    def _first(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        match: re.Match[str] | None = self._scan(pattern, lambda _, text: pattern.search(own_words(text)))
        return match

    @property
    def goal(self) -> tuple[int, str] | None:
        """(message index, intent) of the first user message that asks for something."""
        goal: tuple[int, str] | None = self._scan("goal", _goal_of)
        return goal

    @property
    def intent(self) -> str | None:
        goal = self.goal
        return goal[1] if goal else None

    @property
    def goal_index(self) -> int:
        goal = self.goal
        return goal[0] if goal else 0

    def asks_for_human(self) -> bool:
        return bool(self.user) and asks_for_human(own_words(self.user[-1][1]))

    @property
    def injection_index(self) -> int | None:
        """Index of the first user message carrying injected instructions."""
        index: int | None = self._scan("injection", _injected)
        return index

    @property
    def email(self) -> str | None:
        match = self._first(EMAIL)
        return match.group(1) if match else None

    @property
    def name(self) -> tuple[str, str] | None:
        match = self._first(NAME)
        return (match.group(1), match.group(2).strip()) if match else None

    @property
    def zip(self) -> str | None:
        match = self._first(ZIP)
        return match.group(1) if match else None

    @property
    def item(self) -> str | None:
        """The item named in the last user message that names one."""
        item: str | None = self._scan("item", _item_of, last=True)
        return item

    @property
    def new_address(self) -> str | None:
        match = self._first(ADDRESS)
        return match.group(1).strip() if match else None

    @property
    def requested_amount(self) -> float | None:
        match = self._first(AMOUNT)
        return float(match.group(1)) if match else None

    @property
    def mentioned_order(self) -> tuple[int, str] | None:
        """(message index, id) of the order the user named last."""
        found: tuple[int, str] | None = self._scan("order", _order_named, last=True)
        return found

    @property
    def dont_know_order_index(self) -> int | None:
        index: int | None = self._scan("dont_know", _dont_know)
        return index

    # what the agent said ---------------------------------------------------------------
    def said(self, text: str) -> bool:
        """Did the agent say ``text`` (possibly within a longer message)?"""
        return any(text in t for _, t in self.agent)

    def said_index(self, text: str) -> int | None:
        """Index of the last agent message that contains ``text``."""
        for i, t in reversed(self.agent):
            if text in t:
                return i
        return None

    def first_agent_index(self, marker: str) -> int | None:
        return next((i for i, t in self.agent if marker in t), None)

    def user_after(self, index: int) -> list[tuple[int, str]]:
        return [(i, t) for i, t in self.user if i > index]

    @property
    def last_agent_text(self) -> str:
        return self.agent[-1][1] if self.agent else ""

    # what the tools returned -----------------------------------------------------------
    def calls(self, name: str) -> list[ToolEvent]:
        return list(self._by_name.get(name, ()))

    @property
    def verified_user(self) -> str | None:
        return str(self._verified.data) if self._verified is not None else None

    def looked_up(self, name: str, args: dict[str, Any]) -> bool:
        return any(e.args == args for e in self._by_name.get(name, ()))

    def user_details(self, user_id: str) -> dict[str, Any] | None:
        for e in self._by_name.get("get_user_details", ()):
            if e.ok and e.args.get("user_id") == user_id and isinstance(e.data, dict):
                return dict(e.data)
        return None

    def order(self, order_id: str) -> tuple[int, dict[str, Any]] | None:
        """(index of the result, order) of the latest successful lookup of ``order_id``."""
        for e in reversed(self._by_name.get("get_order_details", ())):
            if e.ok and e.args.get("order_id") == order_id and isinstance(e.data, dict):
                return (e.index, dict(e.data))
        return None

    def order_missing(self, order_id: str) -> str | None:
        """The error of a failed lookup of ``order_id``, if that is all there is."""
        for e in self._by_name.get("get_order_details", ()):
            if e.args.get("order_id") == order_id and not e.ok:
                return e.content
        return None

    @property
    def writes(self) -> list[ToolEvent]:
        return list(self._writes)

    def write_result(self, name: str, args: dict[str, Any]) -> ToolEvent | None:
        return next((e for e in self._writes if e.name == name and e.args == args), None)

    @property
    def transferred(self) -> bool:
        return self._transferred


def _goal_of(index: int, text: str) -> tuple[int, str] | None:
    intent = intent_of(own_words(text))
    return (index, intent) if intent else None


def _injected(index: int, text: str) -> int | None:
    return index if INJECTION.search(text) else None


def _item_of(index: int, text: str) -> str | None:
    match = ITEM.search(text)
    return match.group(1) if match else None


def _order_named(index: int, text: str) -> tuple[int, str] | None:
    ids = ORDER_ID.findall(own_words(text))
    return (index, ids[-1]) if ids else None


def _dont_know(index: int, text: str) -> int | None:
    return index if DONT_KNOW_ORDER.search(text) else None


def _extends(messages: list[Message], before: list[Message]) -> bool:
    """Whether ``messages`` begins with the very message objects of ``before``."""
    return len(messages) >= len(before) and all(map(is_, messages, before))
