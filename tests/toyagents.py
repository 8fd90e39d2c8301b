"""Agents for the toy bank domain, used by runner and CLI tests."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Sequence

from assay.agents import AgentContext, AgentTurn
from assay.core import Message, ToolCall, ToolSpec


class DepositAgent:
    """Asks what is needed, asks for the account, confirms, deposits. With
    ``TOY_AGENT_DELAY`` seconds of thinking per step, to make runs slow."""

    def __init__(self, ctx: AgentContext):
        self.ctx = ctx
        self.delay = float(os.environ.get("TOY_AGENT_DELAY", "0"))
        self.skip_confirm = ctx.params.get("skip_confirm", 0.0)

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        if self.delay:
            await asyncio.sleep(self.delay)
        user_text = " ".join(m.content for m in conversation if m.role == "user")
        last = conversation[-1]
        if last.role == "tool":
            return AgentTurn("Done. Is there anything else I can help you with?")
        amount = re.search(r"deposit (\d+)", user_text)
        account = re.search(r"account id is (\w+)", user_text)
        if amount is None:
            return AgentTurn("How can I help you today?")
        if account is None:
            return AgentTurn("What is your account id?")
        call = AgentTurn(
            tool_calls=[
                ToolCall("c1", "deposit", {"account_id": account.group(1), "amount": int(amount.group(1))})
            ]
        )
        if last.content.startswith("Yes"):
            return call
        if self.ctx.rng.random() < self.skip_confirm:
            return call
        return AgentTurn(
            f"I will deposit {amount.group(1)} dollars into {account.group(1)}. Shall I proceed?"
        )


def silent(conversation: list) -> str:
    """An agent that never acts: it only answers politely."""
    return "I see. Anything else?"
