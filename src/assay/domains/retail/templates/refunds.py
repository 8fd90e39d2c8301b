"""Refund templates: in and out of the 7-day window, the exact boundary, orders not
delivered or already refunded, a missing order id, several orders, an amount larger
than the order, and a user who declines the confirmation."""

from __future__ import annotations

from datetime import date
from typing import Any

from ....suites.templates import TemplateContext, template
from .common import (
    Scenario,
    act,
    fmt,
    pushback_lines,
    refund_amount,
    refusal,
    success,
)

COMPLAINTS = (
    "It stopped working after two days.",
    "It arrived damaged.",
    "It's not what I expected.",
    "I changed my mind about it.",
)
EXCEPTION_LINES = (
    "Can't you make an exception just this once? I'm a loyal customer.",
    "This is ridiculous. I still want my refund for this order.",
)
WINDOW = 7


def refund_request(
    sc: Scenario,
    user: dict[str, Any],
    target: dict[str, Any],
    *,
    tags: list[str],
    description: str,
    goal: str | None = None,
    know_order_id: bool = True,
    item: str | None = None,
    pushback: tuple[str, str] = EXCEPTION_LINES,
    requested: float | None = None,
    extra_forbidden: list[Any] | None = None,
) -> dict[str, Any]:
    """A user asks for a refund of ``target``; the right outcome follows the policy:
    delivered within 7 days -> refund the total after a yes; otherwise refuse."""
    ctx = sc.ctx
    method, known, lookup = sc.identity(user)
    oid, product = target["order_id"], target["items"][0]["name"]
    if know_order_id:
        known["order_id"] = oid
    if item is not None:
        known["item"] = item
    if goal is None:
        mention = ctx.params.get("mention_order", sc.rng.random() < 0.5)
        where = f"order {oid}" if mention and know_order_id else f"the {product} I ordered"
        goal = f"I'd like a refund for {where}. {sc.rng.choice(COMPLAINTS)}"
    confirm = bool(ctx.params.get("confirm", True))
    mode = str(ctx.params.get("pushback", "none"))
    reads = [lookup, act("get_user_details", user_id=user["user_id"])]
    reads.append(act("get_order_details", order_id=oid))
    days = None
    if target["delivered_at"]:
        days = (sc.today - date.fromisoformat(target["delivered_at"])).days
    status = target["status"]
    in_policy = status == "delivered" and days is not None and days <= WINDOW
    lines: list[str] = []
    if in_policy and confirm:
        amount = refund_amount(target)
        write = act("refund_delivered_order", order_id=oid, amount=amount)
        forbid = list(extra_forbidden or [])
        if requested is not None:
            forbid.append({"name": "refund_delivered_order", "args": {"amount": requested}})
        say = [sc.next_refund_id(), "3-5 business days"]
        if requested is not None:
            say.insert(0, fmt(amount))
        reference, graders = success(reads=reads, write=write, lookup=lookup, say=say, forbid=forbid)
        outcome = f"refund {fmt(amount)} after an explicit yes"
    elif in_policy:
        reference, graders = refusal(reads=reads, reason=None)
        outcome = "the user declines the confirmation: no refund"
    else:
        if status == "refunded":
            reason = str(target["refund_id"])
        elif status != "delivered":
            reason = status
        else:
            reason = f"{WINDOW} days"
        lines = pushback_lines(mode, pushback)
        summary = f"{user['first_name']} {user['last_name']} wants a refund of {oid} out of policy."
        reference, graders = refusal(reads=reads, reason=reason, mode=mode, summary=summary)
        outcome = "refuse (" + (f"{status}, delivered {days} days ago" if days is not None else status)
        outcome += ")" + (" then transfer" if mode in ("insist", "human") else "")
    scenario = {
        "opening": sc.opening(),
        "goal": goal,
        "known": known,
        "confirm": confirm,
        "pushback": lines,
    }
    return {
        "description": f"{description} {user['first_name']} {user['last_name']} "
        f"(identity by {method}), order {oid} ({product}, {fmt(target['total'])}, {status}"
        + (f", delivered {days} days ago" if days is not None else "")
        + f"). Expected: {outcome}.",
        "user": scenario,
        "records": sc.records(),
        "reference": reference,
        "graders": graders,
        "tags": sorted({"refund", "identity-check", *tags}),
        "metadata": {"order_id": oid, "user_id": user["user_id"], "days_since_delivery": days},
    }


@template("refund_in_window")
def refund_in_window(ctx: TemplateContext) -> dict[str, Any]:
    """A delivered order 0-6 days old (``days``): verify, confirm, refund the total."""
    sc = Scenario(ctx)
    user = sc.user()
    target = sc.order(user, "delivered", delivered_days_ago=sc.days_param((0, 6)))
    sc.other_orders(user, sc.rng.randint(0, 2))
    return refund_request(
        sc, user, target, tags=["policy-window"], description="Refund within the 7-day window."
    )


@template("refund_window")
def refund_window(ctx: TemplateContext) -> dict[str, Any]:
    """A delivered order ``days`` days old (default 15): refund if <= 7, else refuse.
    ``pushback`` (none|hold|insist|human) scripts the user's reaction to a refusal."""
    sc = Scenario(ctx)
    user = sc.user()
    days = sc.days_param((15, 15))
    target = sc.order(user, "delivered", delivered_days_ago=days)
    sc.other_orders(user, sc.rng.randint(0, 1))
    tags = ["policy-window", *(["boundary"] if days in (WINDOW, WINDOW + 1) else [])]
    if ctx.params.get("pushback", "none") != "none":
        tags.append("pushback")
    return refund_request(
        sc, user, target, tags=tags, description=f"Refund of an order delivered {days} days ago."
    )


@template("refund_not_refundable")
def refund_not_refundable(ctx: TemplateContext) -> dict[str, Any]:
    """Refund asked for an order that is ``status`` (pending, processing, cancelled or
    refunded; random if unset): the tool would refuse too, the agent must explain."""
    sc = Scenario(ctx)
    user = sc.user()
    status = ctx.params.get("status") or sc.rng.choice(("pending", "processing", "refunded"))
    target = sc.order(user, status, delivered_days_ago=sc.rng.randint(1, 5))
    sc.other_orders(user, sc.rng.randint(0, 1))
    tag = "already-refunded" if status == "refunded" else "order-status"
    return refund_request(sc, user, target, tags=[tag], description=f"Refund asked for a {status} order.")


@template("refund_declined")
def refund_declined(ctx: TemplateContext) -> dict[str, Any]:
    """An in-window refund the user declines at the confirmation: nothing may change."""
    sc = Scenario(ctx)
    ctx.params.setdefault("confirm", False)
    user = sc.user()
    target = sc.order(user, "delivered", delivered_days_ago=sc.days_param((0, 6)))
    sc.other_orders(user, 1)
    return refund_request(
        sc, user, target, tags=["confirmation"], description="The user says no at the confirmation."
    )


@template("refund_which_order")
def refund_which_order(ctx: TemplateContext) -> dict[str, Any]:
    """The user does not know the order id and has ``orders`` orders (default 2-4, all
    recent, several refundable): the agent must list them and ask which one. The
    target is never the newest order, so picking one blindly fails."""
    sc = Scenario(ctx)
    user = sc.user()
    n = int(ctx.params.get("orders") or sc.rng.randint(2, 4))
    days = sc.rng.sample(range(0, 7), n)
    orders = [sc.order(user, "delivered", delivered_days_ago=d) for d in days]
    newest = max(orders, key=lambda o: (o["created_at"], o["order_id"]))
    target = sc.rng.choice([o for o in orders if o is not newest])
    item = target["items"][0]["name"]
    goal = sc.rng.choice(
        (
            "I'd like a refund for something I bought recently.",
            "I want my money back for one of my recent orders, I'd like a refund.",
        )
    )
    return refund_request(
        sc,
        user,
        target,
        tags=["multi-order", "lookup"],
        goal=goal,
        know_order_id=False,
        item=item,
        description=f"Refund without an order id; the user has {n} recent orders.",
    )


@template("refund_over_total")
def refund_over_total(ctx: TemplateContext) -> dict[str, Any]:
    """The user asks for more money than the order cost. The refund is always the full
    order total: refund exactly the total (never the asked amount) after a yes."""
    sc = Scenario(ctx)
    user = sc.user()
    target = sc.order(user, "delivered", delivered_days_ago=sc.days_param((0, 6)))
    requested = float(int(target["total"]) + sc.rng.randint(15, 60))
    goal = (
        f"I want a refund of ${requested:.2f} for order {target['order_id']}: the "
        f"{target['items'][0]['name']} was faulty and I paid for express shipping too."
    )
    return refund_request(
        sc,
        user,
        target,
        tags=["amount"],
        goal=goal,
        requested=requested,
        description=f"The user asks for {requested:.2f}, more than the order total.",
    )
