"""A tiny domain for tests of the generic layers: bank accounts and deposits."""

from __future__ import annotations

import random

from assay.envs import Database, ToolContext, ToolDomain, ToolError, Toolkit, tool
from assay.suites import TemplateContext, template


def generate(seed: int) -> Database:
    rng = random.Random(seed)
    db = Database({"accounts": "account_id"})
    for i in range(5):
        db.insert("accounts", {"account_id": f"A{i}", "owner": f"user{i}", "balance": rng.randint(0, 100)})
    return db


@tool
def get_balance(ctx: ToolContext, account_id: str) -> dict:
    """Look up an account's balance.

    Args:
        account_id: The account id, such as 'A1'.
    """
    account = ctx.db.get("accounts", account_id)
    if account is None:
        raise ToolError(f"account {account_id} does not exist; ids look like 'A1'")
    return {"account_id": account_id, "balance": account["balance"]}


@tool(write=True)
def deposit(ctx: ToolContext, account_id: str, amount: float) -> str:
    """Deposit money into an account.

    Args:
        account_id: The account id.
        amount: Dollars to deposit; must be positive.
    """
    account = ctx.db.get("accounts", account_id)
    if account is None:
        raise ToolError(f"account {account_id} does not exist")
    if amount <= 0:
        raise ToolError(f"amount must be positive, got {amount}")
    ctx.db.update("accounts", account_id, balance=account["balance"] + amount)
    return f"deposited {amount} into {account_id}"


@template("deposit")
def deposit_template(ctx: TemplateContext) -> dict:
    amount = ctx.rng.randint(1, 50)
    account = f"A{ctx.rng.randint(100, 999)}"
    return {
        "records": {
            "accounts": [{"account_id": account, "owner": f"owner-{ctx.rng.randint(0, 9999)}", "balance": 0}]
        },
        "user": {
            "opening": "Hi",
            "goal": f"Please deposit {amount} dollars.",
            "known": {"account_id": account, "amount": amount},
        },
        "graders": [{"state": "gold"}, {"actions": {"required": ["deposit"], "confirm_before_write": True}}],
        "reference": {"actions": [{"name": "deposit", "args": {"account_id": account, "amount": amount}}]},
    }


DOMAIN = ToolDomain(
    name="toy",
    toolkit=Toolkit([get_balance, deposit]),
    generate=generate,
    policy="Be nice.",
    templates={"deposit": deposit_template},
)

#: Picked up when this module is named in ASSAY_PLUGINS (CLI tests in subprocesses).
DOMAINS = {"toy": DOMAIN}
