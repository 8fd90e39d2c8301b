"""Oracle agents: they are given the task (``oracle = True``, see
:class:`~assay.agents.base.AgentContext`) because they check a domain and its graders
rather than being under test.

* ``builtin:gold-replay`` performs the task's reference actions in order: its own
  (``requestor: agent``) as tool calls, and for each of the user's (dual control) it asks
  the user to do it, naming the tool, as the scripted user expects. Then it says what the
  task's ``communicate`` graders require and ends. On a faithful port with consistent
  graders every task whose reference is complete scores 1.
* ``recorded:MODEL`` says a recorded conversation's agent messages in order (see
  :mod:`assay.users.recorded`; ``assay regrade`` uses it with the ``replay`` user);
  ``MODEL`` names the model that recorded it (the run's configuration shows it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..core.messages import Message, ToolCall, ToolSpec
from ..core.task import Action, Task
from ..users.recorded import calls_of, recorded_messages
from .base import AgentContext, AgentTurn

GREETING = "Hi! How can I help you today?"
DONE = "All done."


def required_facts(task: Task) -> list[str]:
    """What the task's ``communicate`` graders require the agent to say."""
    facts: list[str] = []
    for grader in task.graders:
        if grader.kind != "communicate":
            continue
        params: Any = grader.params
        required = params.get("required", []) if isinstance(params, dict) else params
        if isinstance(required, str):
            required = [required]
        facts.extend(str(r) for r in required or [])
    return facts


def ask_user(action: Action) -> str:
    """How gold-replay asks the user to do an action on their side."""
    args = f" with {json.dumps(action.args, ensure_ascii=False)}" if action.args else ""
    return f"Please use {action.name}{args} on your side, and tell me what you see."


class GoldReplayAgent:
    """Performs each task's reference actions (see the module docstring)."""

    oracle = True
    prompt_version = "gold-replay/1"

    def __init__(self, ctx: AgentContext):
        task = ctx.task
        self.actions: list[Action] = list(task.reference.actions) if task is not None else []
        self.facts = required_facts(task) if task is not None else []
        self.next = 0
        self.asked = False
        self.finished = False

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        if not any(m.role == "user" for m in conversation):
            return AgentTurn(GREETING)
        while self.next < len(self.actions):
            action = self.actions[self.next]
            if action.requestor == "agent":
                self.next += 1
                return AgentTurn(tool_calls=[ToolCall(f"gold-{self.next}", action.name, dict(action.args))])
            if not self.asked:
                self.asked = True
                return AgentTurn(ask_user(action))
            self.asked = False  # the user answered: on to the next action
            self.next += 1
        if not self.finished:
            self.finished = True
            return AgentTurn(" ".join([DONE, *(f"{fact}." for fact in self.facts)]))
        return AgentTurn("Is there anything else I can help you with?")


class RecordedAgent:
    """Says a recorded conversation's agent messages in order (then nothing)."""

    oracle = True
    prompt_version = "replay/1"

    def __init__(self, ctx: AgentContext):
        recorded = recorded_messages(ctx.task, ctx.trial) if ctx.task is not None else []
        self.queue = [m for m in recorded if m.role == "assistant"]

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        if not self.queue:
            return AgentTurn("")
        message = self.queue.pop(0)
        return AgentTurn(message.content, calls_of(message))


__all__ = ["DONE", "GREETING", "GoldReplayAgent", "RecordedAgent", "ask_user", "required_facts"]
