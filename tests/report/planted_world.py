"""A small suite with its own world whose trials carry secrets and personal data in
every place a trial keeps text: the user's messages, tool arguments, tool outputs, tool
errors, the agent's answers, an agent error, a state diff and a grader's reason. Used
to check that ``assay report --redact`` and ``assay export --redact`` leave none of it.

``write_suite(root)`` writes the suite; :class:`PlantedAgent` (agent spec
``python:tests.report.planted_world:PlantedAgent``) plays it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from assay.agents import AgentContext, AgentTurn
from assay.core import Message, ToolCall, ToolSpec

AGENT = "python:tests.report.planted_world:PlantedAgent"

KEY = "sk-test-Zq81vLm2Xw93Kd04Pn5Rt6Yb"
EMAIL = "ann.lee@example.org"
WRONG_EMAIL = "ann.lee@example.com"
PHONE = "(415) 555-0134"
NEW_PHONE = "+44 20 7946 0958"
WRONG_PHONE = "+44 20 7946 0959"
CARD = "4111 1111 1111 1111"  # a Visa test number: passes the Luhn check
#: Every planted value, by the kind the redactor gives it.
PLANTED = {
    "OPENAI_KEY": [KEY],
    "EMAIL": [EMAIL, WRONG_EMAIL],
    "PHONE": [PHONE, NEW_PHONE, WRONG_PHONE],
    "CARD": [CARD],
}

TOOLS = '''
from assay.envs import ToolContext, ToolError, tool

POLICY = "Help customers with their account."


@tool
def find_customer(ctx: ToolContext, email: str) -> dict:
    """Find a customer by email.

    Args:
        email: The customer's email address.
    """
    for customer in ctx.db.rows("customers"):
        if customer["email"] == email:
            return customer
    raise ToolError(f"no customer with email {email}; check the address")


@tool(write=True)
def update_phone(ctx: ToolContext, customer_id: str, phone: str) -> str:
    """Change a customer's phone number.

    Args:
        customer_id: The customer id, such as 'c1'.
        phone: The new phone number.
    """
    if ctx.db.get("customers", customer_id) is None:
        raise ToolError(f"no customer {customer_id}")
    ctx.db.update("customers", customer_id, phone=phone)
    return f"phone of {customer_id} is now {phone}"
'''

SUITE = f"""
name: planted
domain:
  module: tools.py
  data: [data]
tasks:
  - id: change-phone
    user:
      opening: "Hi, I'm {EMAIL}. Please change my phone to {NEW_PHONE}."
    graders:
      - state: gold
    reference:
      actions:
        - {{name: find_customer, args: {{email: {EMAIL}}}}}
        - {{name: update_phone, args: {{customer_id: c1, phone: "{NEW_PHONE}"}}}}
  - id: charge-card
    user:
      opening: "Charge my card {CARD}, my email is {EMAIL}."
    graders:
      - state: gold
"""

CUSTOMER = {
    "id": "c1",
    "email": EMAIL,
    "phone": PHONE,
    "card": CARD,
    "note": f"rotated the integration key {KEY} last week",
}


def write_suite(root: Path) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "tools.py").write_text(TOOLS)
    (root / "suite.yaml").write_text(SUITE)
    (root / "data" / "customers.jsonl").write_text(json.dumps(CUSTOMER) + "\n")
    return root


class PlantedAgent:
    """Looks the customer up (first with a mistyped email: a tool error), changes the
    phone to a wrong number (a state diff and a failed state grader), then repeats the
    card and key from the tool output; on the card task it fails with an error that
    quotes the key, the email and the card."""

    def __init__(self, ctx: AgentContext):
        self.ctx = ctx

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        opening = next(m.content for m in conversation if m.role == "user")
        if opening.startswith("Charge"):
            raise RuntimeError(f"payment gateway refused key {KEY} for {EMAIL} (card {CARD})")
        results = [m for m in conversation if m.role == "tool"]
        if conversation[-1].role != "tool" and results:
            return AgentTurn("Is there anything else?")
        if not results:
            return AgentTurn(tool_calls=[ToolCall("c1", "find_customer", {"email": WRONG_EMAIL})])
        if len(results) == 1:
            return AgentTurn(tool_calls=[ToolCall("c2", "find_customer", {"email": EMAIL})])
        if len(results) == 2:
            call = ToolCall("c3", "update_phone", {"customer_id": "c1", "phone": WRONG_PHONE})
            return AgentTurn(tool_calls=[call])
        return AgentTurn(
            f"Done: your phone is now {WRONG_PHONE}. Card {CARD} stays on file for {EMAIL}; "
            f"the note says the key {KEY} was rotated."
        )
