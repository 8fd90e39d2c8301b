"""Order templates: cancellations, shipping address changes, order status, and a user
who asks for a human agent."""

from __future__ import annotations

from typing import Any

from ....suites.templates import TemplateContext, template
from ..data import make_address
from .common import (
    WRITE_TOOLS,
    Scenario,
    act,
    actions,
    communicate,
    fmt,
    refusal,
    state_gold,
    success,
    transfer_action,
)

CANCEL_REASONS = ("I ordered the wrong size.", "I found it cheaper elsewhere.", "I don't need it anymore.")


def _describe(user: dict[str, Any], method: str, order: dict[str, Any], expected: str) -> str:
    return (
        f"{user['first_name']} {user['last_name']} (identity by {method}), order "
        f"{order['order_id']} ({order['items'][0]['name']}, {fmt(order['total'])}, "
        f"{order['status']}). Expected: {expected}."
    )


def _task(
    sc: Scenario,
    description: str,
    scenario: dict[str, Any],
    reference: dict[str, Any],
    graders: list[dict[str, Any]],
    tags: list[str],
    order: dict[str, Any],
) -> dict[str, Any]:
    return {
        "description": description,
        "user": {"opening": sc.opening(), **scenario},
        "records": sc.records(),
        "reference": reference,
        "graders": graders,
        "tags": sorted(set(tags)),
        "metadata": {"order_id": order["order_id"], "user_id": order["user_id"]},
    }


@template("cancel_order")
def cancel_order(ctx: TemplateContext) -> dict[str, Any]:
    """The user cancels an order that is ``status`` (default pending): cancel after a yes;
    any other status must be refused with the reason."""
    sc = Scenario(ctx)
    status = ctx.params.get("status", "pending")
    user = sc.user()
    target = sc.order(user, status, delivered_days_ago=sc.rng.randint(1, 10))
    sc.other_orders(user, sc.rng.randint(0, 2))
    method, known, lookup = sc.identity(user)
    oid = target["order_id"]
    known["order_id"] = oid
    goal = f"I'd like to cancel order {oid}. {sc.rng.choice(CANCEL_REASONS)}"
    reads = [lookup, act("get_user_details", user_id=user["user_id"]), act("get_order_details", order_id=oid)]
    if status == "pending":
        reference, graders = success(
            reads=reads, write=act("cancel_pending_order", order_id=oid), lookup=lookup
        )
        expected = "cancel after an explicit yes"
    else:
        reference, graders = refusal(reads=reads, reason=status)
        expected = f"refuse: only pending orders can be cancelled, this one is {status}"
    return _task(
        sc,
        _describe(user, method, target, expected),
        {"goal": goal, "known": known},
        reference,
        graders,
        ["cancel", "identity-check"],
        target,
    )


@template("change_address")
def change_address(ctx: TemplateContext) -> dict[str, Any]:
    """The user moves and wants an order shipped to a new address. Pending or
    processing (``status``, random if unset): update after a yes; delivered: refuse."""
    sc = Scenario(ctx)
    status = ctx.params.get("status") or sc.rng.choice(("pending", "processing"))
    user = sc.user()
    target = sc.order(user, status, delivered_days_ago=sc.rng.randint(1, 10))
    sc.other_orders(user, sc.rng.randint(0, 1))
    method, known, lookup = sc.identity(user)
    oid = target["order_id"]
    new_address = make_address(sc.rng, str(sc.rng.randint(10000, 99999)))
    known.update(order_id=oid, address=new_address)
    goal = f"I'm moving, so I need to change the shipping address of order {oid}."
    reads = [lookup, act("get_user_details", user_id=user["user_id"]), act("get_order_details", order_id=oid)]
    if status in ("pending", "processing"):
        write = act("update_order_address", order_id=oid, address=new_address)
        reference, graders = success(reads=reads, write=write, lookup=lookup)
        expected = f"ship to {new_address} after an explicit yes"
    else:
        reference, graders = refusal(reads=reads, reason=status)
        expected = f"refuse: the order is {status}"
    return _task(
        sc,
        _describe(user, method, target, expected),
        {"goal": goal, "known": known},
        reference,
        graders,
        ["address", "identity-check"],
        target,
    )


@template("order_status")
def order_status(ctx: TemplateContext) -> dict[str, Any]:
    """The user asks where an order is: verify, look it up, tell the status. No writes."""
    sc = Scenario(ctx)
    status = ctx.params.get("status") or sc.rng.choice(("pending", "processing", "delivered"))
    user = sc.user()
    target = sc.order(user, status, delivered_days_ago=sc.rng.randint(1, 12))
    sc.other_orders(user, sc.rng.randint(0, 2))
    method, known, lookup = sc.identity(user)
    oid = target["order_id"]
    known["order_id"] = oid
    goal = sc.rng.choice(
        (
            f"What's the status of my order {oid}?",
            f"Where is my order {oid}? I'd like to know its status.",
        )
    )
    reads = [lookup, act("get_user_details", user_id=user["user_id"]), act("get_order_details", order_id=oid)]
    graders = [
        state_gold(),
        actions(
            required=[lookup["name"], {"name": "get_order_details", "args": {"order_id": oid}}],
            forbidden=list(WRITE_TOOLS),
            order=[[lookup["name"], "get_order_details"]],
        ),
        communicate([status]),
    ]
    return _task(
        sc,
        _describe(user, method, target, f"tell the user the order is {status}"),
        {"goal": goal, "known": known},
        {"actions": reads},
        graders,
        ["order-status", "identity-check"],
        target,
    )


@template("human_request")
def human_request(ctx: TemplateContext) -> dict[str, Any]:
    """The user asks for a human right away: transfer, change nothing else."""
    sc = Scenario(ctx)
    user = sc.user()
    target = sc.order(user, "delivered", delivered_days_ago=sc.rng.randint(1, 30))
    _, known, _ = sc.identity(user)
    known["order_id"] = target["order_id"]
    goal = sc.rng.choice(
        (
            "I'd like to talk to a human agent, please.",
            "Can I speak to a real person? I'd rather not deal with a bot.",
        )
    )
    summary = f"{user['first_name']} {user['last_name']} asked for a human agent."
    graders = [
        state_gold(),
        actions(required=["transfer_to_human_agent"], forbidden=list(WRITE_TOOLS)),
    ]
    return _task(
        sc,
        f"{user['first_name']} {user['last_name']} asks for a human agent. Expected: transfer right away.",
        {"goal": goal, "known": known},
        {"actions": [transfer_action(summary)]},
        graders,
        ["transfer"],
        target,
    )
