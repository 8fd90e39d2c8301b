"""The retail tools. They enforce data integrity (the order exists, refunds only for
delivered orders, at most the order total, at most once, cancellation only while
pending); following the *policy* (identity checks, the 7-day window, confirmations)
is the agent's job. Every refusal says what is wrong and what would be right."""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from typing import Any

from ...envs.tools import ToolContext, ToolError, Toolkit, tool
from .data import money, next_refund_id, next_transfer_id

_ORDER_ID = re.compile(r"^#W\d{7}$")


def normalize_order_id(order_id: str) -> str:
    """``"w1234567"``, ``"W1234567"`` and ``" #W1234567 "`` all mean ``"#W1234567"``."""
    text = order_id.strip().upper()
    return text if text.startswith("#") else f"#{text}"


def _order(ctx: ToolContext, order_id: str) -> dict[str, Any]:
    key = normalize_order_id(order_id)
    if not _ORDER_ID.match(key):
        raise ToolError(f"{order_id!r} is not an order id; order ids look like '#W1234567'")
    order = ctx.db.get("orders", key)
    if order is None:
        raise ToolError(
            f"order {key} not found; check the id with the user or list the user's orders "
            "with get_user_details"
        )
    return order


# what the lookups below match on, indexed per state (Database.indexed): the matches
# they find are checked as before, so an index only saves reading the other records
def _email_of(user: dict[str, Any]) -> Any:
    return user["email"].lower()


def _name_zip_of(user: dict[str, Any]) -> Any:
    return (user["first_name"].lower(), user["last_name"].lower(), user["zip"])


def _owner_of(order: dict[str, Any]) -> Any:
    return order["user_id"]


@tool
def find_user_id_by_email(ctx: ToolContext, email: str) -> str:
    """Find a user's id by their email address.

    Args:
        email: The user's email address, such as 'emma.kim1234@example.com'.
    """
    wanted = email.strip().lower()
    found = ctx.db.indexed("users", _email_of, wanted)
    for user in ctx.db.rows("users") if found is None else found:
        if user["email"].lower() == wanted:
            return str(user["user_id"])
    raise ToolError(
        f"no user has the email {email!r}; check the spelling with the user, or find the "
        "user by first name, last name and zip code"
    )


@tool
def find_user_id_by_name_zip(ctx: ToolContext, first_name: str, last_name: str, zip: str) -> str:
    """Find a user's id by their first name, last name and zip code.

    Args:
        first_name: The user's first name, such as 'Emma'.
        last_name: The user's last name, such as 'Kim'.
        zip: The user's 5-digit zip code, such as '78704'.
    """
    first, last, code = first_name.strip().lower(), last_name.strip().lower(), zip.strip()
    found = ctx.db.indexed("users", _name_zip_of, (first, last, code))
    for user in ctx.db.rows("users") if found is None else found:
        if (user["first_name"].lower(), user["last_name"].lower(), user["zip"]) == (
            first,
            last,
            code,
        ):
            return str(user["user_id"])
    raise ToolError(
        f"no user named {first_name.strip()} {last_name.strip()} with zip code {code}; check "
        "the spelling with the user, or find the user by email"
    )


@tool
def get_user_details(ctx: ToolContext, user_id: str) -> dict[str, Any]:
    """Get a user's profile (name, email, zip, address) and the ids of their orders,
    oldest first.

    Args:
        user_id: The user's id, as returned by find_user_id_by_email or find_user_id_by_name_zip.
    """
    user = ctx.db.get("users", user_id.strip())
    if user is None:
        raise ToolError(
            f"no user with id {user_id!r}; get the id from find_user_id_by_email or find_user_id_by_name_zip"
        )
    found = ctx.db.indexed("orders", _owner_of, user["user_id"])
    orders = sorted(
        (o for o in (ctx.db.rows("orders") if found is None else found) if o["user_id"] == user["user_id"]),
        key=lambda o: (o["created_at"], o["order_id"]),
    )
    return {**user, "orders": [o["order_id"] for o in orders]}


@tool
def get_order_details(ctx: ToolContext, order_id: str) -> dict[str, Any]:
    """Get an order: owner's user id, items, total, status, dates (created_at,
    delivered_at), shipping address and refund id.

    Args:
        order_id: The order id, such as '#W1234567'.
    """
    return dict(_order(ctx, order_id))


@tool
def get_product_details(ctx: ToolContext, product_id: str) -> dict[str, Any]:
    """Get a product: name and current price.

    Args:
        product_id: The product id, such as 'P123456' (listed in an order's items).
    """
    product = ctx.db.get("products", product_id.strip().upper())
    if product is None:
        raise ToolError(
            f"product {product_id!r} not found; product ids look like 'P123456' and are "
            "listed in an order's items"
        )
    return dict(product)


@tool(write=True)
def cancel_pending_order(ctx: ToolContext, order_id: str) -> dict[str, Any]:
    """Cancel a pending order. The full amount goes back to the original payment method.

    Args:
        order_id: The order id, such as '#W1234567'.
    """
    order = _order(ctx, order_id)
    key, status = order["order_id"], order["status"]
    if status == "cancelled":
        raise ToolError(f"order {key} is already cancelled; nothing to do")
    if status != "pending":
        raise ToolError(f"order {key} is {status}, not pending; only pending orders can be cancelled")
    ctx.db.update("orders", key, status="cancelled")
    return {"order_id": key, "status": "cancelled", "amount_returned": order["total"]}


@tool(write=True)
def refund_delivered_order(ctx: ToolContext, order_id: str, amount: float) -> dict[str, Any]:
    """Refund a delivered order to the original payment method. An order is refunded
    at most once.

    Args:
        order_id: The order id, such as '#W1234567'.
        amount: The amount to refund in dollars, at most the order total.
    """
    order = _order(ctx, order_id)
    key, status, total = order["order_id"], order["status"], float(order["total"])
    if status == "refunded":
        raise ToolError(
            f"order {key} was already refunded (refund {order.get('refund_id')}); an order "
            "can be refunded only once"
        )
    if status != "delivered":
        raise ToolError(f"order {key} is {status}, not delivered; refunds apply to delivered orders")
    amount = money(amount)
    if amount <= 0:
        raise ToolError(f"amount must be positive; the total of order {key} is {total:.2f}")
    if amount > total:
        raise ToolError(
            f"amount {amount:.2f} exceeds the total of order {key}, {total:.2f}; a refund can "
            "be at most the order total"
        )
    refund_id = next_refund_id(ctx.db)
    ctx.db.insert(
        "refunds",
        {
            "refund_id": refund_id,
            "order_id": key,
            "amount": amount,
            "created_at": ctx.now.date().isoformat(),
        },
    )
    ctx.db.update("orders", key, status="refunded", refund_id=refund_id)
    return {"refund_id": refund_id, "order_id": key, "amount": amount, "status": "refunded"}


@tool(write=True)
def update_order_address(ctx: ToolContext, order_id: str, address: str) -> dict[str, Any]:
    """Change the shipping address of an order that has not shipped yet (pending or
    processing).

    Args:
        order_id: The order id, such as '#W1234567'.
        address: The full new address, such as '12 Oak Street, Austin, TX 78704'.
    """
    order = _order(ctx, order_id)
    key, status = order["order_id"], order["status"]
    if status not in ("pending", "processing"):
        raise ToolError(
            f"order {key} is {status}; the shipping address can only be changed while an "
            "order is pending or processing"
        )
    new = " ".join(address.split())
    if len(new) < 8 or not re.search(r"\d", new):
        raise ToolError(
            f"{address!r} is not a full address; give street and number, city, state and zip, "
            "such as '12 Oak Street, Austin, TX 78704'"
        )
    ctx.db.update("orders", key, shipping_address=new)
    return {"order_id": key, "status": status, "shipping_address": new}


@tool
def transfer_to_human_agent(ctx: ToolContext, summary: str) -> str:
    """Transfer the user to a human agent, with a short summary of their issue. Use it
    when the user asks for a human, or insists on something the policy does not allow.

    Args:
        summary: One or two sentences: who the user is and what they need.
    """
    if not summary.strip():
        raise ToolError("summary is empty; say in a sentence who the user is and what they need")
    transfer_id = next_transfer_id(ctx.db)
    ctx.db.insert(
        "transfers",
        {
            "transfer_id": transfer_id,
            "summary": summary.strip(),
            "created_at": ctx.now.isoformat(timespec="seconds"),
        },
    )
    return f"Transfer successful ({transfer_id}). A human agent will take over the conversation."


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_ALLOWED = "numbers, + - * / // % ** and parentheses"


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return float(_UNARY[type(node.op)](_evaluate(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ToolError("exponent too large; use exponents between -64 and 64")
        return float(_BINARY[type(node.op)](left, right))
    raise ToolError(f"unsupported expression element {type(node).__name__}; use only {_ALLOWED}")


@tool
def calculate(ctx: ToolContext, expression: str) -> str:
    """Evaluate an arithmetic expression, such as '129.99 * 2 - 10'.

    Args:
        expression: Numbers combined with + - * / // % ** and parentheses.
    """
    text = expression.replace("$", "").replace(",", "").strip()
    if not text or len(text) > 200:
        raise ToolError(f"give an expression of 1 to 200 characters using {_ALLOWED}")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise ToolError(f"cannot parse {expression!r}; use only {_ALLOWED}") from None
    try:
        value = _evaluate(tree)
    except ZeroDivisionError:
        raise ToolError(f"{expression!r} divides by zero") from None
    except OverflowError:
        raise ToolError(f"{expression!r} is too large to compute") from None
    value = round(value, 10)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


TOOLKIT = Toolkit(
    [
        find_user_id_by_email,
        find_user_id_by_name_zip,
        get_user_details,
        get_order_details,
        get_product_details,
        cancel_pending_order,
        refund_delivered_order,
        update_order_address,
        transfer_to_human_agent,
        calculate,
    ]
)
"""The retail domain's tools, as the agent sees them."""
