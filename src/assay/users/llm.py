"""An LLM-backed user simulator following tau2-style guidelines, and the checks that
catch the known failure modes of such simulators in a finished transcript."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..core.hashing import stable_hash
from ..core.messages import Message
from ..core.task import UserScenario
from ..core.transcript import Transcript
from ..llm.spec import ChatModel, parse_spec, shared_model
from ..llm.types import GenerateConfig
from .scripted import _CONFIRM, questions
from .simulator import OUT_OF_SCOPE, STOP, STOP_TOKENS, TRANSFER, UserContext, UserTurn

USER_PROMPT_ID = "user-sim/v1"
USER_GUIDELINES = f"""\
You are playing a user (a customer) who contacts a customer-service agent. Stay in this role \
for the whole conversation: you are the user, never the agent.

# How to behave
- Write one message at a time, short and natural, as this user would.
- Do not give all your information at once. Disclose a fact from "known" only when the agent \
asks for it (or when it is needed to answer the agent's question).
- Never invent facts that the scenario does not give you: no made-up names, emails, ids, \
amounts, dates or addresses. If the agent asks for something you do not know, say you do \
not know it.
- When the agent asks you to confirm an action, answer as the scenario's "confirm" says \
(true: an explicit "yes"; false: "no"), then WAIT: do not end the conversation until the agent \
has told you the action is done (or refused).
- If the agent refuses, use the scenario's "pushback" lines, one per message, in order; then \
the "follow_ups", one per message.
- When your goal is met (the agent confirmed it is done), or clearly cannot be met, and you \
have no pushback or follow-up left, end with a message containing only {STOP}.
- If the agent transfers you to a human agent, reply with only {TRANSFER}.
- If the scenario does not tell you how to answer and the conversation cannot continue, reply \
with only {OUT_OF_SCOPE}.
- Never repeat these instructions or the scenario verbatim.

{{tools}}# Your scenario (JSON)
```json
{{scenario}}
```
"""
#: Added to the guidelines when the user has tools of their own (dual control).
USER_TOOLS_GUIDELINES = """\
# Your tools
You have tools to act on your own side (your phone, your account) when the agent asks you to.
- In one message either call a tool or write to the agent, not both. The agent does not see \
your tool calls or their results: tell the agent what they showed.
- Call a tool only when the agent asks for that action, or when you need it to answer the \
agent's question. If the agent asks for several actions, do them one at a time.
- Never make up what a tool shows: ground every answer about your device on the results of \
your tool calls. If a tool call fails, fix it and try again.

"""


def render_user_prompt(scenario: UserScenario, tools: bool = False) -> str:
    """The user model's system prompt; ``tools``: the user has tools of their own. The
    scenario's ``actions`` (the solution's user side) are never shown."""
    data = scenario.model_dump(mode="json", exclude={"actions"})
    text = USER_GUIDELINES.replace("{tools}", USER_TOOLS_GUIDELINES if tools else "")
    return text.replace("{scenario}", json.dumps(data, indent=2, ensure_ascii=False))


def _flip(conversation: Sequence[Message]) -> list[Message]:
    """The dialogue from the user's side: the agent speaks as "user", we as "assistant"
    (with our tool calls), and our tools answer as "tool"."""
    out = []
    for m in conversation:
        if m.role == "assistant" and m.content:
            out.append(Message("user", m.content))
        elif m.role == "user":
            out.append(Message("assistant", m.content, tool_calls=list(m.tool_calls)))
        elif m.role == "tool":
            out.append(Message("tool", m.content, tool_call_id=m.tool_call_id, name=m.name, error=m.error))
    return out


class LLMUser:
    """A chat model playing the task's user. The opening line is the scenario's own
    (deterministic) when it has one; every later line comes from the model. With tools
    of their own (dual control) the model may call them; the calls run on the user's
    side and the model, seeing their results, replies again."""

    def __init__(self, model: ChatModel, ctx: UserContext, options: dict[str, Any] | None = None):
        self.model = model
        self.scenario = ctx.task.user
        self.tools = list(ctx.tools)
        self.system_prompt = render_user_prompt(self.scenario, tools=bool(self.tools))
        self.prompt_version = f"{USER_PROMPT_ID}:{stable_hash(self.system_prompt, 12)}"
        sampling = {k: v for k, v in (options or {}).items() if k in ("temperature", "top_p", "max_tokens")}
        self.config = GenerateConfig(seed=ctx.seed % 2**31, **sampling)

    async def reply(self, conversation: Sequence[Message]) -> UserTurn:
        if not any(m.role == "user" for m in conversation) and self.scenario.opening:
            return UserTurn(self.scenario.opening)
        flipped = _flip(conversation) or [Message("user", "(The agent is waiting for your first message.)")]
        messages = [Message("system", self.system_prompt), *flipped]
        completion = await self.model.complete(messages, self.tools, self.config)
        calls = [replace(c, requestor="user") for c in completion.tool_calls]
        return UserTurn((completion.text or "").strip(), calls)


def llm_user_factory(spec: str) -> Any:
    parse_spec(spec)

    def make(ctx: UserContext) -> LLMUser:
        options = dict(ctx.model_options)
        sampling: dict[str, Any] = {
            k: options.pop(k) for k in ("temperature", "top_p", "max_tokens") if k in options
        }
        return LLMUser(shared_model(spec, **options), ctx, sampling)

    return make


# --- detecting simulator errors in a finished transcript ----------------------------
_FACT_LIKE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|#\w*\d\w*|\b\d{5,}\b")


def simulator_errors(scenario: UserScenario, transcript: Transcript, write_tools: set[str]) -> list[str]:
    """Known failure modes of user simulators, found in the transcript:

    * ``premature_stop``: the user ended the conversation while a confirmed write was
      still pending (said yes and stopped at once, or stopped right after being asked).
    * ``invented_fact``: the user stated an email, id or number that neither the
      scenario nor the agent had given.
    """
    errors: list[str] = []
    messages = transcript.messages
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    if users:
        last = messages[users[-1]]
        token = next((t for t in STOP_TOKENS if t in last.content), None)
        if token == STOP:
            from ..graders.matching import is_affirmative

            before = [m for m in messages[: users[-1]] if m.role == "assistant" and m.content]
            asked = bool(before) and any(_CONFIRM.search(q) for q in questions(before[-1].content))
            said_yes = is_affirmative(last.content.replace(STOP, "").strip())
            if asked or said_yes:
                errors.append("premature_stop")
    allowed = json.dumps(scenario.model_dump(mode="json"))
    said_by_agent = " ".join(m.content for m in messages if m.role in ("assistant", "tool"))
    for i in users:
        for fact in _FACT_LIKE.findall(messages[i].content):
            if fact not in allowed and fact not in said_by_agent:
                errors.append("invented_fact")
                break
    return sorted(set(errors))
