"""Agents for the code-domain tests: one that answers with hostile code (each attack
named by the task's opening, a JSON object), one that 'fixes' the example by breaking
something else, and one that gives up at once."""

from __future__ import annotations

import json
from collections.abc import Sequence

from assay.agents.base import AgentTurn
from assay.core.messages import Message, ToolCall, ToolSpec

OK = "\n\ndef ok():\n    return True\n"
ATTACKS = {
    "socket": "import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)" + OK,
    "internet": "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)" + OK,
    "write-outside": "open({outside!r}, 'w').write('pwned')" + OK,
    "read-secret": "print(open({secret!r}).read())" + OK,
    "fork-bomb": "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    + OK,
    "memory": "hog = bytearray(100 * 2**30)" + OK,
    "endless": "while True:\n    pass" + OK,
    "kill-everything": "import os, signal\nos.kill(-1, signal.SIGKILL)" + OK,
    "benign": OK,
}


def _opening(conversation: Sequence[Message]) -> str:
    return next((m.content for m in conversation if m.role == "user"), "")


class AttackAgent:
    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        spec = json.loads(_opening(conversation))
        return AgentTurn("```python\n" + ATTACKS[spec["attack"]].format(**spec) + "\n```")


class BreakingFixAgent:
    """Fixes median() but breaks mean(): FAIL_TO_PASS pass, PASS_TO_PASS break."""

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        results = [m for m in conversation if m.role == "tool"]
        if not results:
            return AgentTurn("", [ToolCall("c0", "read_file", {"path": "textstats/stats.py"})])
        if len(results) == 1:
            source = (
                results[0]
                .content.replace(
                    "return (ordered[middle] + ordered[middle + 1]) / 2",
                    "return (ordered[middle - 1] + ordered[middle]) / 2",
                )
                .replace("return sum(values) / len(values)", "return sum(values) // len(values)")
            )
            return AgentTurn(
                "", [ToolCall("c1", "write_file", {"path": "textstats/stats.py", "content": source})]
            )
        return AgentTurn("Done.")


class GiveUpAgent:
    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        return AgentTurn("Sorry, I cannot help with that.")
