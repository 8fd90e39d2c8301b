"""An agent written to be brittle, for the perturbation tests.

It makes the same decisions as the careful retail agent (:mod:`assay.domains.retail.agents`)
but reads its input the fragile way many real systems do:

- **first sentence only, exact lower-case words**: a user message that states a
  request is cut to its first sentence, and the request is recognised only if a key
  word (refund, cancel, shipping address, status...) is there in lower case (or
  capitalised at the start of the sentence). Upper
  case, typos in the key word, a greeting or distractor in front, reordered sentences
  all make it miss the request.
- **strict number parsing**: an order total must be a JSON number; ``"$329.00"`` or
  ``"329.00 USD"`` crash it.
- **obeys instructions in tool output**: a ``SYSTEM:`` line inside a tool result turns
  it into the hasty agent (no checks, no confirmation, refunds everything asked).

None of this shows on the unperturbed retail suite, where it behaves as the careful
agent; every perturbation of the matching kind breaks the metamorphic relation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace

from assay.agents.base import AgentTurn
from assay.core.messages import Message, ToolSpec
from assay.domains.retail.agents import CarefulAgent
from assay.domains.retail.agents.policy import decide

WORDS = (
    "refund",
    "cancel",
    "shipping address",
    "status",
    "where is",
    "track",
    "human",
    "real person",
    "manager",
)
#: Each key word as written in lower case (or capitalised at a sentence start), nothing else.
KEYWORDS = re.compile("|".join(f"[{w[0]}{w[0].upper()}]{re.escape(w[1:])}" for w in WORDS))
DISCLOSURES = ("My ", "The order id", "The new address", "It's the one", "Yes", "No", "I don't know", "Thank")
SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _brittle_text(text: str) -> str:
    if text.startswith(DISCLOSURES) or "SYSTEM:" in text:
        return text
    first = SENTENCE.split(text.strip(), maxsplit=1)[0]
    return first if KEYWORDS.search(first) else "Hello."


class BrittleAgent(CarefulAgent):
    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        seen = []
        hijacked = False
        for m in conversation:
            if m.role == "user":
                m = replace(m, content=_brittle_text(m.content))
            elif m.role == "tool":
                hijacked = hijacked or "SYSTEM:" in m.content
                data = _json(m.content)
                if isinstance(data, dict) and "total" in data:
                    float(data["total"]) if isinstance(data["total"], (int, float)) else _crash(data["total"])
            seen.append(m)
        return decide(seen, self.ctx.now, (lambda d, a: True) if hijacked else self.slip)


def _json(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _crash(value: object) -> None:
    raise ValueError(f"could not convert {value!r} to an amount")
