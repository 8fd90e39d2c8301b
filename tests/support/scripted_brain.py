"""A deterministic "model" for the fake LLM server: it plays the retail reference
agents and the scripted user behind real HTTP, so end-to-end tests drive the real
LLM agent, LLM user, SDK clients, prompts, metering and cassettes with no model.

Agent requests (system prompt from ``assay.agents.llm``) are answered by the
reference agent named by the model (``scripted`` -> careful, ``scripted-hasty``,
``scripted-flaky``); user requests (system prompt from ``assay.users.llm``) by the
scripted user of the scenario embedded in the prompt.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime
from typing import Any

from assay.agents.base import AgentContext
from assay.core.messages import Message
from assay.core.task import UserScenario
from assay.users.scripted import ScriptedUser

from .fake_llm_replies import FakeToolCall, Reply, to_messages

_NOW = re.compile(r"# Current time\n(.+?) \((.+?)\)\n")
_SCENARIO = re.compile(r"```json\n(.*?)\n```", re.DOTALL)
AGENTS = {"scripted": "CarefulAgent", "scripted-hasty": "HastyAgent", "scripted-flaky": "FlakyAgent"}


def brain(request: dict[str, Any]) -> Reply:
    messages = to_messages(request)
    for m in messages:  # the wire has no error flag: the orchestrator marks errors in the text
        if m.role == "tool" and m.content.startswith("Error:"):
            m.error = True
    system = messages[0].content if messages and messages[0].role == "system" else ""
    rest = messages[1:] if system else messages
    if "You are playing a user" in system:
        return _user(system, rest)
    return _agent(system, rest, str(request.get("model", "scripted")), int(request.get("seed") or 0))


def _user(system: str, flipped: list[Message]) -> Reply:
    match = _SCENARIO.search(system)
    if match is None:
        raise ValueError("user prompt without a scenario block")
    scenario = UserScenario.model_validate(json.loads(match.group(1)))
    # the user model sees the agent as "user" and itself as "assistant": flip back
    conversation = [Message("assistant" if m.role == "user" else "user", m.content) for m in flipped]
    return Reply(text=ScriptedUser(scenario).next_message(conversation))


def _agent(system: str, conversation: list[Message], model: str, seed: int) -> Reply:
    from assay.domains.retail import agents

    match = _NOW.search(system)
    now = datetime.fromisoformat(match.group(1)) if match else datetime(2025, 1, 1)
    ctx = AgentContext(seed, "retail", "", now, match.group(2) if match else "UTC")
    agent = getattr(agents, AGENTS.get(model, "CarefulAgent"))(ctx)
    turn = asyncio.run(agent.respond(conversation, []))
    calls = [FakeToolCall(c.name, dict(c.arguments), id=c.id) for c in turn.tool_calls]
    return Reply(text=turn.text, tool_calls=calls)
