"""What the reference agents say. Every text is a pure function of its arguments, so an
agent can recognise its own earlier messages (a confirmation question it asked, a
refusal it gave) by regenerating them.

The phrasing matters to the scripted user: a sentence that ends with ``?`` (or starts
with "Could you", "Please", ...) is a question, and the facts it names (email, name,
zip, order id, "which one", address) are what the user discloses. Statements below
avoid those words where they are not meant as questions.
"""

from __future__ import annotations

from typing import Any

ANYTHING_ELSE = "Is there anything else I can help you with?"
GREETING = "Hi! How can I help you today?"
IDENTITY_QUESTION = (
    "I'd be glad to help with that. First, I need to verify your identity. "
    "Could you please provide your email, or your name and zip code?"
)
ASK_NAME_ZIP = (
    "I couldn't find an account with that email. Could you please provide your name and zip code instead?"
)
ASK_EMAIL = (
    "I couldn't find an account with that name and zip code. Could you please provide your email instead?"
)
ASK_ORDER_ID = "Could you please tell me the order id?"
ASK_ADDRESS = "What is the new shipping address?"
CONFIRM_MARK = "Would you like me to proceed (yes/no)?"
REFUSAL_MARK = "I can't"
TRANSFERRING = "I'm transferring you to a human agent. They will take it from here."
DECLINED = f"Understood, I won't make any changes. {ANYTHING_ELSE}"
UNSUPPORTED = (
    "I'm sorry, I can only help with refunds, cancellations, shipping address changes and "
    f"order status. {ANYTHING_ELSE}"
)
HOLD_GROUND = "I understand your frustration, but I can't make an exception to our policy."
GIVE_IN = "Alright, I'll make an exception this time."


def money(amount: float) -> str:
    return f"${amount:.2f}"


def items_of(order: dict[str, Any]) -> str:
    return ", ".join(
        i["name"] if int(i.get("quantity", 1)) == 1 else f"{i['quantity']} x {i['name']}"
        for i in order.get("items", [])
    )


def verified(first_name: str | None) -> str:
    return f"Thank you, {first_name}, your account is verified. " if first_name else ""


def order_line(order: dict[str, Any]) -> str:
    if order.get("delivered_at"):
        when = f"{order['status']}, delivered on {order['delivered_at']}"
        if order["status"] == "delivered":
            when = f"delivered on {order['delivered_at']}"
    else:
        when = f"{order['status']}, placed on {order['created_at']}"
    return f"{order['order_id']} ({items_of(order)}, {money(order['total'])}, {when})"


def list_orders(orders: list[dict[str, Any]]) -> str:
    lines = "; ".join(order_line(o) for o in orders)
    return f"I found these orders on your account: {lines}. Which one is it?"


# confirmations ---------------------------------------------------------------------------
def confirm_refund(order: dict[str, Any], amount: float, in_window: bool) -> str:
    window = ", which is within our 7-day refund window" if in_window else ""
    return (
        f"Order {order['order_id']} ({items_of(order)}) was delivered on {order['delivered_at']}"
        f"{window}. I can refund the full order amount of {money(amount)} to your original "
        f"payment method. {CONFIRM_MARK}"
        if amount == float(order["total"])
        else f"I can refund {money(amount)} for order {order['order_id']} to your original "
        f"payment method. {CONFIRM_MARK}"
    )


def confirm_cancel(order: dict[str, Any]) -> str:
    return (
        f"Order {order['order_id']} ({items_of(order)}, {money(order['total'])}) is still "
        f"{order['status']}. I can cancel it, and the full amount of {money(order['total'])} "
        f"will go back to your original payment method. {CONFIRM_MARK}"
    )


def confirm_address(order: dict[str, Any], address: str) -> str:
    return (
        f"Order {order['order_id']} is {order['status']}, so it has not shipped yet. I can "
        f"change its shipping address to: {address}. {CONFIRM_MARK}"
    )


# reports --------------------------------------------------------------------------------
def _done(name: str, result: dict[str, Any]) -> str:
    oid = result.get("order_id")
    if name == "refund_delivered_order":
        return (
            f"I've refunded {money(result['amount'])} for order {oid}; the refund id is "
            f"{result['refund_id']}. The money will be back on your original payment method "
            "within 3-5 business days."
        )
    if name == "cancel_pending_order":
        return (
            f"Order {oid} is now cancelled, and {money(result['amount_returned'])} will go "
            "back to your original payment method within 3-5 business days."
        )
    return f"Order {oid} will now ship to: {result['shipping_address']}."


def report(done: list[tuple[str, dict[str, Any]]]) -> str:
    """What the agent says after its writes (tool name, result) succeeded."""
    return "Done! " + " ".join(_done(name, result) for name, result in done) + f" {ANYTHING_ELSE}"


def status_report(order: dict[str, Any]) -> str:
    delivered = f" and delivered on {order['delivered_at']}" if order.get("delivered_at") else ""
    return (
        f"Order {order['order_id']} ({items_of(order)}) is {order['status']}. It was placed on "
        f"{order['created_at']}{delivered}, shipping to {order['shipping_address']}. "
        f"{ANYTHING_ELSE}"
    )


# refusals (each contains REFUSAL_MARK) ---------------------------------------------------
def refuse(reason: str) -> str:
    return f"I'm sorry, but {reason} {ANYTHING_ELSE}"


def window_reason(order: dict[str, Any], days: int) -> str:
    return (
        f"order {order['order_id']} was delivered on {order['delivered_at']}, {days} days ago. "
        "Refunds are only possible within 7 days of delivery, so I can't refund this order."
    )


def not_delivered_reason(order: dict[str, Any]) -> str:
    return (
        f"order {order['order_id']} is {order['status']}, not delivered. Refunds are only "
        "possible for delivered orders, so I can't refund it."
    )


def already_refunded_reason(order: dict[str, Any]) -> str:
    return (
        f"order {order['order_id']} was already refunded (refund id {order.get('refund_id')}). "
        "An order can only be refunded once, so I can't refund it again."
    )


def not_cancellable_reason(order: dict[str, Any]) -> str:
    return (
        f"order {order['order_id']} is {order['status']}. Only pending orders can be cancelled, "
        "so I can't cancel it."
    )


def address_locked_reason(order: dict[str, Any]) -> str:
    return (
        f"order {order['order_id']} is {order['status']}. The shipping address can only be "
        "changed while an order is pending or processing, so I can't change it."
    )


def not_yours_reason(order_id: str) -> str:
    return (
        f"order {order_id} is not associated with your account, so I can't share any "
        "information about it or make changes to it."
    )


UNVERIFIED_REASON = (
    "I couldn't verify your identity with the details you provided, so I can't access or change any account."
)


def failed_reason(error: str) -> str:
    return f"I can't complete that: {error.removeprefix('Error: ').rstrip('.')}."


def not_found_reason(order_id: str) -> str:
    return f"I can't find order {order_id} in our system."
