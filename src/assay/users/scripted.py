"""A deterministic user simulator driven by the task's scenario.

It opens vaguely, states its goal when asked what it needs, discloses a known fact
only when a question asks for it, says "I don't know" for facts it lacks (never
inventing one), answers confirmation questions as the scenario says, pushes back
with the scenario's lines after the agent's answer (trap tasks), raises follow-ups,
and finally stops with ``###STOP###`` (or ``###TRANSFER###`` once transferred).
Dual control: it performs the scenario's ``actions`` (its own tools) in order, each when
the agent's last message names the action's tool, and then says what the tool showed.

Its replies are a pure function of (scenario, conversation), so the same dialogue always
gets the same reply: the k trials of a task, which hold the same conversation up to each
reply, compute each reply once (a :class:`~assay.users.memo.Memo` per scenario).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Hashable, Sequence
from functools import lru_cache

from ..core.messages import Message, ToolCall
from ..core.task import Action, UserScenario
from .memo import Memo, Walk
from .simulator import STOP, TRANSFER, UserContext, UserTurn

#: How questions ask for each common fact, and how the user phrases the answer.
FACT_PATTERNS: dict[str, str] = {
    "email": r"e-?mail",
    "name": r"\bname\b",
    "zip": r"\bzip\b|postal code|post ?code",
    "order_id": r"order (?:id|number)\b|order #(?!\w)",
    "item": r"which (?:one|order|item|product)|what item|which of (?:these|them|your orders)",
    "address": r"(?<!email )(?<!e-mail )\baddress\b",
}
FACT_PHRASES: dict[str, str] = {
    "email": "My email is {value}.",
    "name": "My name is {value}.",
    "zip": "My zip code is {value}.",
    "order_id": "The order id is {value}.",
    "item": "It's the one with the {value}.",
    "address": "The new address is: {value}.",
}
FACT_LABELS = {"order_id": "order id", "zip": "zip code", "item": "item"}

_CONFIRM = re.compile(
    r"\b(confirm|proceed|shall i|should i|do you want me to|would you like me to|go ahead"
    r"|yes or no|yes/no)\b",
    re.IGNORECASE,
)
_HELP = re.compile(
    r"how (?:can|may) i (?:help|assist)|what can i do for you|what would you like|how can i be of",
    re.IGNORECASE,
)
_TRANSFERRED = re.compile(
    r"\btransfer(?:ring|red)?\b.*\b(human|agent|representative|specialist)", re.IGNORECASE
)
_QUESTION_LEAD = re.compile(r"^(please|could you|can you|may i|would you|tell me|provide)", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.?!])\s+|\n+")


def questions(text: str) -> list[str]:
    """The sentences of ``text`` that ask the user for something."""
    return list(_questions(text))


@lru_cache(maxsize=4096)  # each turn reads the agent's last message several times
def _questions(text: str) -> tuple[str, ...]:
    return tuple(
        s for s in _SENTENCE.split(text) if s.strip().endswith("?") or _QUESTION_LEAD.match(s.strip())
    )


@lru_cache(maxsize=4096)
def _asks(sentence: str, vocabulary: tuple[str, ...]) -> tuple[bool, tuple[str, ...]]:
    """Whether ``sentence`` is a confirmation question, and the keys of ``vocabulary``
    whose pattern it matches (in vocabulary order): pure functions of the two."""
    matched = tuple(key for key in vocabulary if _compiled(key).search(sentence))
    return _CONFIRM.search(sentence) is not None, matched


def _pattern(key: str) -> str:
    return FACT_PATTERNS.get(key, r"\b" + re.escape(key.replace("_", " ")) + r"\b")


@lru_cache(maxsize=4096)
def _compiled(key: str) -> re.Pattern[str]:
    """The fact's pattern, compiled once (it is tried on every question of every turn)."""
    return re.compile(_pattern(key), re.IGNORECASE)


@lru_cache(maxsize=4096)
def _transferred(text: str) -> bool:
    """Whether the agent's message says it transfers the user to a person (and asks
    nothing)."""
    return _TRANSFERRED.search(text) is not None and not _questions(text)


#: How many messages the memo of replies holds at most before it starts afresh.
MAX_NODES = 10_000

_MEMO: Memo[str] = Memo(MAX_NODES)

#: The memo's root of each scenario, by scenario object (held weakly: a root goes
#: when its scenario does).
_ROOTS: dict[int, tuple[weakref.ref[UserScenario], object]] = {}


def _root(scenario: UserScenario) -> object:
    key = id(scenario)
    hit = _ROOTS.get(key)
    if hit is not None and hit[0]() is scenario:
        return hit[1]
    token = object()

    def forget(_: object) -> None:
        _ROOTS.pop(key, None)
        _MEMO.roots.pop(token, None)

    _ROOTS[key] = (weakref.ref(scenario, forget), token)
    return token


def _message_key(m: Message) -> Hashable:
    """What the scripted user reads of a message: role, text, and how many tool calls
    (its own, dual control) a user message carries."""
    return (m.role, m.content, len(m.tool_calls) if m.role == "user" else 0)


class ScriptedUser:
    """Deterministic user for a :class:`~assay.core.task.UserScenario`."""

    def __init__(self, ctx: UserContext | UserScenario):
        self.scenario = ctx if isinstance(ctx, UserScenario) else ctx.task.user
        # the scenario's own facts in the order it gives them (a set's order changed with
        # the process's hash seed, and so could which of two facts asked at once came first)
        self.vocabulary = list(dict.fromkeys([*FACT_PATTERNS, *self.scenario.known]))
        self._vocabulary = tuple(self.vocabulary)
        # replies said (not tool calls) are memoised per scenario; a subclass may
        # reply as it likes, so only this class's are
        self._walk: Walk[str] | None = None
        if type(self) is ScriptedUser:
            self._walk = Walk(_MEMO, _root(self.scenario), _message_key)

    async def reply(self, conversation: Sequence[Message]) -> UserTurn:
        walk = self._walk
        node = walk.find(conversation) if walk is not None else None
        if node is not None and node.reply is not None:
            return UserTurn(node.reply)
        turn = self._reply(conversation)
        if node is not None and not turn.tool_calls:
            node.reply = turn.text
        return turn

    def _reply(self, conversation: Sequence[Message]) -> UserTurn:
        action = self.next_action(conversation)
        if action is not None:
            done = sum(len(m.tool_calls) for m in conversation if m.role == "user")
            return UserTurn("", [ToolCall(f"user-{done + 1}", action.name, dict(action.args), "user")])
        return UserTurn(self.next_message(conversation))

    # the decision procedure --------------------------------------------------------
    def next_action(self, conversation: Sequence[Message]) -> Action | None:
        """The scenario's next action when the agent's last message names its tool."""
        done = sum(len(m.tool_calls) for m in conversation if m.role == "user")
        if done >= len(self.scenario.actions) or not conversation or conversation[-1].role != "assistant":
            return None
        action = self.scenario.actions[done]
        named = re.search(rf"\b{re.escape(action.name)}\b", conversation[-1].content)
        return action if named else None

    def next_message(self, conversation: Sequence[Message]) -> str:
        said = [m.content for m in conversation if m.role == "user" and m.content]
        agent = [m.content for m in conversation if m.role == "assistant" and m.content]
        if not said:
            return self.scenario.opening or self.scenario.goal or "Hi, I need some help."
        if conversation and conversation[-1].role == "tool":  # what my own tool showed
            return f"I did it. It shows: {conversation[-1].content}"
        last = agent[-1] if agent else ""
        if _transferred(last):
            return TRANSFER
        asked = self.asked_facts(last, said)
        if asked:
            return self.disclose(asked)
        if any(_asks(q, self._vocabulary)[0] for q in _questions(last)):
            return "Yes, please go ahead." if self.scenario.confirm else "No, please don't do that."
        goal = self.scenario.goal
        if goal and goal not in said and (_HELP.search(last) or not _questions(last)):
            return goal
        for line in [*self.scenario.pushback, *self.scenario.follow_ups]:
            if line not in said:
                return line
        return f"Thank you, that's all. {STOP}"

    def asked_facts(self, text: str, said: Sequence[str] = ()) -> list[str]:
        """Fact keys that the question sentences of ``text`` ask for, in text order.

        A confirmation question ("Shall I send it to the new address X?") mentions
        facts without asking for them: there, facts the user already gave are not
        asked again."""
        keys: list[str] = []
        for sentence in _questions(text):
            confirming, matched = _asks(sentence, self._vocabulary)
            for key in matched:
                if key in keys:
                    continue
                value = self.scenario.known.get(key)
                if confirming and value is not None and any(str(value) in s for s in said):
                    continue
                keys.append(key)
        # "your email, or your name and zip code": give one way of identifying.
        if "email" in keys and "name" in keys and re.search(r"\bor\b", text, re.IGNORECASE):
            keys = ["email"] if "email" in self.scenario.known else [k for k in keys if k != "email"]
        # "which order?" is answered with the item, else the order id.
        if "item" in keys and "item" not in self.scenario.known and "order_id" in self.scenario.known:
            keys = ["order_id" if k == "item" else k for k in keys]
        return list(dict.fromkeys(keys))

    def disclose(self, keys: list[str]) -> str:
        parts = []
        for key in keys:
            value = self.scenario.known.get(key)
            if value is None:
                parts.append(f"I don't know my {FACT_LABELS.get(key, key.replace('_', ' '))}.")
            else:
                phrase = FACT_PHRASES.get(key, f"My {key.replace('_', ' ')} is {{value}}.")
                parts.append(phrase.format(value=value))
        return " ".join(parts)
