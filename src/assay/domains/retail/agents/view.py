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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import cached_property, lru_cache
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
        return {k: _plain(k, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(key, v) for v in value]
    if not isinstance(value, str):
        return value
    if MONEY_KEYS.search(key):
        if match := MONEY_TEXT.match(value.strip()):
            return float(match.group(1).replace(",", ""))
        if match := CENTS_TEXT.match(value.strip()):
            return int(match.group(1)) / 100
    if key.endswith("_at") and value:
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
    """Facts derived from a conversation (user, assistant and tool messages)."""

    def __init__(self, conversation: Sequence[Message], previous: View | None = None):
        """The facts of ``conversation``. When it extends the conversation of
        ``previous`` (the same message objects, then new ones), ``previous``'s facts are
        taken over and only the new messages read; ``previous`` is then emptied."""
        self.messages: list[Message] = list(conversation)
        self.user: list[tuple[int, str]] = []
        self.agent: list[tuple[int, str]] = []
        self.events: list[ToolEvent] = []
        self._calls: dict[str, ToolCall] = {}
        self._orphans: set[str | None] = set()
        if previous is not None and _extends(self.messages, previous.messages):
            start = len(previous.messages)
            new = self.messages[start:]
            ids = [c.id for m in new if m.role == "assistant" for c in m.tool_calls]
            # a call id seen before (or a result that came before its call) would pair
            # differently when read whole: read it whole then
            if not any(i in previous._calls or i in previous._orphans for i in ids):
                # taken over, not copied: ``previous`` is not to be used afterwards
                self.user, self.agent, self.events = previous.user, previous.agent, previous.events
                self._calls, self._orphans = previous._calls, previous._orphans
                previous.user, previous.agent, previous.events = [], [], []
                previous._calls, previous._orphans = {}, set()
                previous.messages = []
                for m in new:
                    if m.role == "assistant":
                        self._calls.update((c.id, c) for c in m.tool_calls)
                self._read(start)
                return
        self._calls = {c.id: c for m in self.messages if m.role == "assistant" for c in m.tool_calls}
        self._read(0)

    def _read(self, start: int) -> None:
        """Take in the messages from ``start`` on (their calls are in ``_calls``: a
        result pairs with the last call of its id)."""
        for i in range(start, len(self.messages)):
            m = self.messages[i]
            if m.role == "user":
                self.user.append((i, m.content))
            elif m.role == "assistant":
                if m.content:
                    self.agent.append((i, m.content))
            elif m.role == "tool":
                call = self._calls.get(m.tool_call_id) if m.tool_call_id is not None else None
                if call is None:
                    self._orphans.add(m.tool_call_id)
                    continue
                # the error flag may not survive a round trip through a chat API: the
                # orchestrator's "Error: ..." prefix marks a refused call as well
                ok = not m.error and not m.content.startswith("Error:")
                self.events.append(ToolEvent(i, call.name, dict(call.arguments), ok, m.content))

    # what the user said ----------------------------------------------------------------
    def _first(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        for _, text in self.user:
            match = pattern.search(own_words(text))
            if match:
                return match
        return None

    @cached_property
    def goal(self) -> tuple[int, str] | None:
        """(message index, intent) of the first user message that asks for something."""
        for i, text in self.user:
            intent = intent_of(own_words(text))
            if intent:
                return i, intent
        return None

    @property
    def intent(self) -> str | None:
        return self.goal[1] if self.goal else None

    @property
    def goal_index(self) -> int:
        return self.goal[0] if self.goal else 0

    def asks_for_human(self) -> bool:
        return bool(self.user) and asks_for_human(own_words(self.user[-1][1]))

    @cached_property
    def injection_index(self) -> int | None:
        """Index of the first user message carrying injected instructions."""
        return next((i for i, text in self.user if INJECTION.search(text)), None)

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
        for _, text in reversed(self.user):
            match = ITEM.search(text)
            if match:
                return match.group(1)
        return None

    @property
    def new_address(self) -> str | None:
        match = self._first(ADDRESS)
        return match.group(1).strip() if match else None

    @property
    def requested_amount(self) -> float | None:
        match = self._first(AMOUNT)
        return float(match.group(1)) if match else None

    @cached_property
    def mentioned_order(self) -> tuple[int, str] | None:
        """(message index, id) of the order the user named last."""
        found = None
        for i, text in self.user:
            ids = ORDER_ID.findall(own_words(text))
            if ids:
                found = (i, ids[-1])
        return found

    @property
    def dont_know_order_index(self) -> int | None:
        return next((i for i, text in self.user if DONT_KNOW_ORDER.search(text)), None)

    # what the agent said ---------------------------------------------------------------
    def said(self, text: str) -> bool:
        """Did the agent say ``text`` (possibly within a longer message)?"""
        return any(text in t for _, t in self.agent)

    def said_index(self, text: str) -> int | None:
        """Index of the last agent message that contains ``text``."""
        found = [i for i, t in self.agent if text in t]
        return found[-1] if found else None

    def first_agent_index(self, marker: str) -> int | None:
        return next((i for i, t in self.agent if marker in t), None)

    def user_after(self, index: int) -> list[tuple[int, str]]:
        return [(i, t) for i, t in self.user if i > index]

    @property
    def last_agent_text(self) -> str:
        return self.agent[-1][1] if self.agent else ""

    # what the tools returned -----------------------------------------------------------
    def calls(self, name: str) -> list[ToolEvent]:
        return [e for e in self.events if e.name == name]

    @property
    def verified_user(self) -> str | None:
        for e in self.events:
            if e.name in FIND_TOOLS and e.ok:
                return str(e.data)
        return None

    def looked_up(self, name: str, args: dict[str, Any]) -> bool:
        return any(e.args == args for e in self.calls(name))

    def user_details(self, user_id: str) -> dict[str, Any] | None:
        for e in self.calls("get_user_details"):
            if e.ok and e.args.get("user_id") == user_id and isinstance(e.data, dict):
                return dict(e.data)
        return None

    def order(self, order_id: str) -> tuple[int, dict[str, Any]] | None:
        """(index of the result, order) of the latest successful lookup of ``order_id``."""
        found = None
        for e in self.calls("get_order_details"):
            if e.ok and e.args.get("order_id") == order_id and isinstance(e.data, dict):
                found = (e.index, dict(e.data))
        return found

    def order_missing(self, order_id: str) -> str | None:
        """The error of a failed lookup of ``order_id``, if that is all there is."""
        for e in self.calls("get_order_details"):
            if e.args.get("order_id") == order_id and not e.ok:
                return e.content
        return None

    @property
    def writes(self) -> list[ToolEvent]:
        return [e for e in self.events if e.name in WRITE_TOOLS]

    def write_result(self, name: str, args: dict[str, Any]) -> ToolEvent | None:
        return next((e for e in self.writes if e.name == name and e.args == args), None)

    @property
    def transferred(self) -> bool:
        return any(e.ok for e in self.calls("transfer_to_human_agent"))


def _extends(messages: list[Message], before: list[Message]) -> bool:
    """Whether ``messages`` begins with the very message objects of ``before``."""
    return len(messages) >= len(before) and all(a is b for a, b in zip(messages, before, strict=False))
