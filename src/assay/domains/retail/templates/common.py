"""Building blocks of the retail templates: a scenario builder that makes users and
orders that never collide with the generated world, identity facts, graders and
reference actions."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ....suites.templates import TemplateContext
from ..data import (
    FIRST_NAMES,
    LAST_NAMES,
    make_address,
    money,
    order_record,
)
from ..data import next_refund_id as _next_refund_id

WRITE_TOOLS = ("refund_delivered_order", "cancel_pending_order", "update_order_address")
FIND_TOOLS = {"email": "find_user_id_by_email", "name_zip": "find_user_id_by_name_zip"}

OPENINGS = (
    "Hi, I need some help with an order.",
    "Hello, I have a problem with something I bought.",
    "Hi there, I have a question about one of my orders.",
    "Hey, can you help me with an order?",
)


def fmt(amount: float) -> str:
    """A dollar amount as the agent would write it: ``"129.99"``."""
    return f"{amount:.2f}"


def act(name: str, **args: Any) -> dict[str, Any]:
    """One reference action."""
    return {"name": name, "args": args}


class Scenario:
    """Users and orders of one task, made from the template's seeded generator and
    checked against the generated world so ids, emails and (name, zip) are unique."""

    def __init__(self, ctx: TemplateContext):
        self.ctx = ctx
        self.rng = ctx.rng
        self.today = ctx.as_of.date()
        self.users: list[dict[str, Any]] = []
        self.orders: list[dict[str, Any]] = []
        self.refunds: list[dict[str, Any]] = []
        db = ctx.db
        self._user_ids = {u["user_id"] for u in db.rows("users")}
        self._emails = {u["email"] for u in db.rows("users")}
        self._people = {(u["first_name"], u["last_name"], u["zip"]) for u in db.rows("users")}
        self._order_ids = {o["order_id"] for o in db.rows("orders")}
        self.products = list(db.rows("products"))

    # people -------------------------------------------------------------------------
    def user(self) -> dict[str, Any]:
        """A new user (never one of the generated ones)."""
        rng = self.rng
        while True:
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            suffix = rng.randint(1000, 9999)
            zip_code = str(rng.randint(10000, 99999))
            user_id = f"{first.lower()}_{last.lower()}_{suffix}"
            email = f"{first.lower()}.{last.lower()}{suffix}@example.com"
            person = (first, last, zip_code)
            if user_id in self._user_ids or email in self._emails or person in self._people:
                continue
            self._user_ids.add(user_id)
            self._emails.add(email)
            self._people.add(person)
            user = {
                "user_id": user_id,
                "first_name": first,
                "last_name": last,
                "email": email,
                "zip": zip_code,
                "address": make_address(rng, zip_code),
            }
            self.users.append(user)
            return user

    def unused_email(self, user: dict[str, Any]) -> str:
        """An email that looks like ``user``'s but belongs to nobody."""
        while True:
            email = f"{user['first_name'].lower()}{self.rng.randint(10, 99)}@example.net"
            if email not in self._emails:
                return email

    def unused_zip(self, user: dict[str, Any]) -> str:
        """A zip code under which ``user``'s name is not registered."""
        while True:
            code = str(self.rng.randint(10000, 99999))
            if (user["first_name"], user["last_name"], code) not in self._people:
                return code

    # orders -------------------------------------------------------------------------
    def pick_products(self, n: int, exclude: set[str] | None = None) -> list[dict[str, Any]]:
        """``n`` distinct products whose names are not in ``exclude``."""
        pool = [p for p in self.products if p["name"] not in (exclude or set())]
        return self.rng.sample(pool, n)

    def used_item_names(self, user: dict[str, Any]) -> set[str]:
        return {i["name"] for o in self.orders if o["user_id"] == user["user_id"] for i in o["items"]}

    def order(
        self,
        user: dict[str, Any],
        status: str,
        *,
        delivered_days_ago: int | None = None,
        created_days_ago: int | None = None,
        products: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """A new order of ``user``. Delivered and refunded orders get a delivery date
        ``delivered_days_ago`` days before the task's as-of date (random if None)."""
        rng = self.rng
        while True:
            order_id = f"#W{rng.randint(1000000, 9999999)}"
            if order_id not in self._order_ids:
                self._order_ids.add(order_id)
                break
        if products is None:
            products = self.pick_products(1, exclude=self.used_item_names(user))
        items = [
            {"product_id": p["product_id"], "name": p["name"], "price": p["price"], "quantity": 1}
            for p in products
        ]
        delivered = None
        if status in ("delivered", "refunded"):
            days = rng.randint(1, 30) if delivered_days_ago is None else delivered_days_ago
            delivered = self.today - timedelta(days=days)
            created = delivered - timedelta(days=rng.randint(2, 6))
        else:
            back = created_days_ago if created_days_ago is not None else rng.randint(0, 3)
            created = self.today - timedelta(days=back)
        order = order_record(order_id, user, items, status, created, delivered)
        if status == "refunded":
            refund_id = self.next_refund_id()
            order["refund_id"] = refund_id
            assert delivered is not None
            self.refunds.append(
                {
                    "refund_id": refund_id,
                    "order_id": order_id,
                    "amount": order["total"],
                    "created_at": (delivered + timedelta(days=1)).isoformat(),
                }
            )
        self.orders.append(order)
        return order

    def other_orders(self, user: dict[str, Any], count: int) -> list[dict[str, Any]]:
        """``count`` unremarkable extra orders of ``user`` (statuses vary)."""
        statuses = ("delivered", "cancelled", "processing", "delivered")
        return [
            self.order(user, self.rng.choice(statuses), delivered_days_ago=self.rng.randint(20, 90))
            for _ in range(count)
        ]

    def next_refund_id(self) -> str:
        """The id the next refund gets, given the world and this task's own refunds."""
        base = int(_next_refund_id(self.ctx.db)[2:])
        mine = [int(r["refund_id"][2:]) + 1 for r in self.refunds]
        return f"R-{max([base, *mine]):04d}"

    def records(self) -> dict[str, list[dict[str, Any]]]:
        records: dict[str, list[dict[str, Any]]] = {"users": self.users, "orders": self.orders}
        if self.refunds:
            records["refunds"] = self.refunds
        return records

    # facts --------------------------------------------------------------------------
    def identity(self, user: dict[str, Any]) -> tuple[str, dict[str, str], dict[str, Any]]:
        """(method, known facts, lookup action) for the identity method in
        ``params['identity']`` (``email``, ``name_zip`` or ``any``: chosen by the rng)."""
        method = self.ctx.params.get("identity", "any")
        if method == "any":
            method = self.rng.choice(("email", "name_zip"))
        if method == "email":
            return method, {"email": user["email"]}, act(FIND_TOOLS["email"], email=user["email"])
        known = {"name": f"{user['first_name']} {user['last_name']}", "zip": user["zip"]}
        lookup = act(
            FIND_TOOLS["name_zip"],
            first_name=user["first_name"],
            last_name=user["last_name"],
            zip=user["zip"],
        )
        return method, known, lookup

    def opening(self) -> str:
        return self.rng.choice(OPENINGS)

    def days_param(self, default: tuple[int, int]) -> int:
        """``params['days']`` or a random number of days in ``default``."""
        days = self.ctx.params.get("days")
        return int(days) if days is not None else self.rng.randint(*default)


# graders ------------------------------------------------------------------------------
def state_gold() -> dict[str, Any]:
    """End state equals the gold state; transfer summaries are free text, not compared."""
    return {"state": {"gold": True, "ignore": ["transfers.summary"]}}


def actions(
    *,
    required: list[Any] | None = None,
    forbidden: list[Any] | None = None,
    order: list[list[str]] | None = None,
) -> dict[str, Any]:
    """An ``actions`` grader that always demands confirmation before writes."""
    params: dict[str, Any] = {"confirm_before_write": True}
    if required:
        params["required"] = required
    if forbidden:
        params["forbidden"] = forbidden
    if order:
        params["order"] = order
    return {"actions": params}


def communicate(required: list[str] | None = None, forbidden: list[str] | None = None) -> dict:
    params: dict[str, Any] = {}
    if required:
        params["required"] = required
    if forbidden:
        params["forbidden"] = forbidden
    return {"communicate": params}


def writes_except(*allowed: str) -> list[str]:
    """The write tools other than ``allowed`` (forbidden in most tasks)."""
    return [t for t in WRITE_TOOLS if t not in allowed]


def refund_amount(order: dict[str, Any]) -> float:
    return money(float(order["total"]))


# outcomes -----------------------------------------------------------------------------
PUSHBACK_MODES = ("none", "hold", "insist", "human")
HUMAN_LINE = "Then I want to talk to a human agent about this."


def pushback_lines(mode: str, lines: tuple[str, str]) -> list[str]:
    """The user's pushback after a refusal: none, one line (the agent holds its ground),
    two lines (the user insists: transfer) or a request for a human (transfer)."""
    if mode not in PUSHBACK_MODES:
        raise ValueError(f"pushback must be one of {', '.join(PUSHBACK_MODES)}, got {mode!r}")
    table = {"none": [], "hold": [lines[0]], "insist": list(lines), "human": [HUMAN_LINE]}
    return table[mode]


def transfers_after(mode: str) -> bool:
    """Does a policy-following agent end this conversation with a transfer?"""
    return mode in ("insist", "human")


def transfer_action(summary: str) -> dict[str, Any]:
    return act("transfer_to_human_agent", summary=summary)


def success(
    *,
    reads: list[dict[str, Any]],
    write: dict[str, Any],
    lookup: dict[str, Any] | None,
    say: list[str] | None = None,
    forbid: list[Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(reference, graders) of a task whose right outcome is one confirmed write."""
    required: list[Any] = [{"name": write["name"], "args": dict(write["args"])}]
    order = []
    if lookup is not None:
        required.insert(0, lookup["name"])
        order.append([lookup["name"], write["name"]])
    graders = [
        state_gold(),
        actions(
            required=required,
            forbidden=[*writes_except(write["name"]), *(forbid or [])],
            order=order,
        ),
    ]
    if say:
        graders.append(communicate(say))
    return {"actions": [*reads, write]}, graders


def refusal(
    *,
    reads: list[dict[str, Any]],
    reason: str | None,
    mode: str = "none",
    summary: str = "",
    forbid_say: list[str] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(reference, graders) of a task whose right outcome is no change (and a transfer
    when the user insists or asks for a human)."""
    transfer = transfers_after(mode)
    reference = {"actions": [*reads, *([transfer_action(summary)] if transfer else [])]}
    graders = [
        state_gold(),
        actions(
            required=["transfer_to_human_agent"] if transfer else None,
            forbidden=list(WRITE_TOOLS),
        ),
    ]
    if reason or forbid_say:
        graders.append(communicate([reason] if reason else None, forbid_say))
    return reference, graders
