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
from datetime import date, datetime
from functools import cached_property, lru_cache
from operator import is_
from typing import Any

from ....core.messages import Message, ToolCall

ORDER_ID = re.compile(r"#W\d{7}")
EMAIL = re.compile(r"My email is (\S+?)\.?(?:\s|$)")
NAME = re.compile(r"My name is ([^\s.]+) ([^.]+)\.")
ZIP = re.compile(r"My zip code is (\d{5})")
ITEM = re.compile(r"It's the one with the (.+?)\.(?:\s|$)")
ADDRESS = re.compile(r"The new address is: (.+?)\.?(?:\n|$)")
DONT_KNOW_ORDER = re.compile(r"I don't know my order id", re.IGNORECASE)
AMOUNT = re.compile(r"\$\s?(\d+(?:\.\d{1,2})?)")
INJECTION = re.compile(r"^\s*(?:SYSTEM|ADMIN|DEVELOPER)\s*:", re.IGNORECASE | re.MULTILINE)
HUMAN = re.compile(r"\b(human|real person|manager|supervisor|representative|live agent)\b", re.IGNORECASE)
INTENTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("human", HUMAN),
    ("cancel", re.compile(r"\bcancel", re.IGNORECASE)),
    ("address", re.compile(r"\bshipping address\b|\bchange (?:the|my) address\b", re.IGNORECASE)),
    ("refund", re.compile(r"\brefund|\bmoney back\b", re.IGNORECASE)),
    ("status", re.compile(r"\bstatus\b|\bwhere is\b|\btrack(?:ing|ed|s)?\b", re.IGNORECASE)),
)
FIND_TOOLS = ("find_user_id_by_email", "find_user_id_by_name_zip")
MONEY_KEYS = re.compile(r"(?:^|_)(?:total|amount|price|cost|paid|refunded)(?:$|_)")
MONEY_TEXT = re.compile(r"^\$?\s*([\d,]+(?:\.\d+)?)\s*(?:USD)?$", re.IGNORECASE)
CENTS_TEXT = re.compile(r"^(\d+)\s*cents?$", re.IGNORECASE)
DATE_FORMATS = ("%B %d, %Y", "%b %d, %Y", "%m/%d/%Y", "%Y-%m-%dT%H:%M:%SZ")
WRITE_TOOLS = ("refund_delivered_order", "cancel_pending_order", "update_order_address")


@lru_cache(maxsize=4096)  # every turn re-reads the same user messages
def own_words(text: str) -> str:
    """The part of a user message written by the user: everything before an injected
    ``SYSTEM:`` (or ADMIN/DEVELOPER) block, which a careful agent ignores."""
    match = INJECTION.search(text)
    return text[: match.start()] if match else text


def _plain(key: str, value: Any) -> Any:
    """A tool value read the way the agent needs it: amounts as numbers (``"$1,299.00"``,
    ``"1299.00 USD"``, ``"129900 cents"``), dates as ISO dates (``"June 10, 2025"``,
    ``"06/10/2025"``, ``"2025-06-10T00:00:00Z"``); anything else as it is."""
    if isinstance(value, dict):
        return {k: _plain(k, v) if isinstance(v, (dict, list, str)) else v for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(key, v) for v in value]
    if not isinstance(value, str):
        return value
    money, when = _reading(key)
    if not (money or when):
        return value
    return _plain_text(money, when and bool(value), value)


@lru_cache(maxsize=1024)
def _reading(key: str) -> tuple[bool, bool]:
    """Whether a value under ``key`` may be an amount, and whether it may be a date."""
    return MONEY_KEYS.search(key) is not None, key.endswith("_at")


@lru_cache(maxsize=4096)  # the same dates and amounts come back in every trial
def _plain_text(money: bool, when: bool, value: str) -> Any:
    """:func:`_plain` of a text that may be an amount (``money``) or a date (``when``)."""
    if money:
        if match := MONEY_TEXT.match(value.strip()):
            return float(match.group(1).replace(",", ""))
        if match := CENTS_TEXT.match(value.strip()):
            return int(match.group(1)) / 100
    if when:
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError:
            pass
        for fmt in DATE_FORMATS:
            try:
                return datetime.strptime(value, fmt).date().isoformat()
            except ValueError:
                continue
    return value


#: The words and phrases each intent hangs on, for reading them through a typo.
KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("human", ("human", "real person", "manager", "supervisor", "representative", "live agent")),
    ("cancel", ("cancel",)),
    ("address", ("shipping address", "change the address", "change my address")),
    ("refund", ("refund", "money back")),
    ("status", ("status", "where is", "track")),
)
_WORDS = re.compile(r"[A-Za-z]+")


def one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by at most one slip: a letter replaced, dropped,
    added, or two neighbours swapped (Damerau-Levenshtein distance <= 1)."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 or (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def _slipped(word: str, keyword: str) -> bool:
    """A word read as ``keyword``: equal, or both of 4+ letters, the same first letter and
    one slip apart ("refnud" is refund; "here" is not "where")."""
    return word == keyword or (
        len(word) >= 4 and len(keyword) >= 4 and word[0] == keyword[0] and one_edit(word, keyword)
    )


def mentions(text: str, phrases: Sequence[str]) -> bool:
    """Whether ``text`` holds one of ``phrases``, each word read through one typo."""
    words = [w.lower() for w in _WORDS.findall(text)]
    for phrase in phrases:
        parts = phrase.split()
        for i in range(len(words) - len(parts) + 1):
            if all(_slipped(w, k) for w, k in zip(words[i : i + len(parts)], parts, strict=True)):
                return True
    return False


@lru_cache(maxsize=4096)  # every turn of every trial re-reads the same user messages
def intent_of(text: str) -> str | None:
    """What a user message asks for: human, cancel, address, refund, status or None.
    The intent's words are also recognised through one typo ("refnud", "cancle")."""
    for name, pattern in INTENTS:
        if pattern.search(text):
            return name
    for name, phrases in KEYWORDS:
        if mentions(text, phrases):
            return name
    return None


@lru_cache(maxsize=4096)
def asks_for_human(text: str) -> bool:
    """Whether a user message asks for a person (also through one typo)."""
    return bool(HUMAN.search(text)) or mentions(text, dict(KEYWORDS)["human"])


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
