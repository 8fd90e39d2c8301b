"""tau2's banking_knowledge domain: the agent's discoverable tools that issue debit cards
(order, the three activations, the recurring-payment block). Port of tau2-bench
(Sierra Research, MIT)."""

from __future__ import annotations

from typing import Any

from .banking import KNOWLEDGE
from .banking_models import (
    deterministic_id,
    generate_debit_card_id,
    generate_debit_card_order_id,
    get_today_str,
)
from .banking_query import add_to_db, exists, record
from .toolkit import Tau2Context

_DELIVERY_TIMES = {
    "STANDARD": "7-10 business days",
    "EXPEDITED": "3-5 business days",
    "RUSH": "1-2 business days",
}


@KNOWLEDGE.discoverable_tool(write=True)
def set_debit_card_recurring_block_7382(ctx: Tau2Context, card_id: str, block_recurring: bool) -> str:
    """Block or unblock all recurring payments on a debit card. When blocked, all recurring/subscription charges will be declined. One-time purchases are not affected.

    Args:
        card_id (string): The debit card ID to update
        block_recurring (boolean): True to block all recurring payments, False to unblock/allow recurring payments

    Returns:
        Debit card recurring payment settings updated successfully.
    """
    if not card_id:
        return "Error: Missing required parameter: card_id"
    debit_card = ctx.get("debit_cards", card_id)
    if not debit_card:
        return f"Error: Debit card '{card_id}' not found."
    card_status = debit_card.get("status", "").upper()
    if card_status != "ACTIVE":
        return f"Error: Cannot update recurring block settings for a card with status '{card_status}'. Card must be ACTIVE."
    debit_card["recurring_blocked"] = block_recurring
    if block_recurring:
        return (
            f"Recurring payments BLOCKED for debit card {card_id}.\n"
            f"All recurring/subscription charges will be declined.\n"
            f"One-time purchases are not affected.\n"
            f"This change takes effect within 24 hours."
        )
    return (
        f"Recurring payments UNBLOCKED for debit card {card_id}.\n"
        f"Recurring/subscription charges will now be allowed.\n"
        f"This change takes effect within 24 hours."
    )


def _order_fees(delivery_fee: float, design_fee: float, excess: float, sep: str) -> list[str]:
    parts = []
    if delivery_fee > 0:
        parts.append(f"Delivery{sep} ${delivery_fee}")
    if design_fee > 0:
        parts.append(f"Design{sep} ${design_fee}")
    if excess > 0:
        parts.append(f"Excess Replacement{sep} ${excess:.0f}")
    return parts


def _issue_reason(ctx: Tau2Context, account_id: str) -> str:
    """Why a new card is issued: after a closed card lost, stolen or to fraud, that
    reason; for an account with cards, first_card; else new_account."""
    existing_cards = [c for _, c in ctx.items("debit_cards") if c.get("account_id") == account_id]
    closed_card = next((c for c in existing_cards if c.get("status") == "CLOSED"), None)
    if closed_card:
        closure_reason = closed_card.get("closure_reason", "first_card")
        if closure_reason in ["lost", "stolen", "fraud", "fraud_suspected"]:
            return closure_reason if closure_reason != "fraud_suspected" else "fraud"
        return "first_card"
    return "first_card" if existing_cards else "new_account"


def _expiration(order_date: str) -> str:
    try:
        parts = order_date.split("/")
        exp_month = parts[0]
        exp_year = str(int(parts[2]) + 4)
        if exp_month in ["01", "03", "05", "07", "08", "10", "12"]:
            exp_day = "31"
        elif exp_month == "02":
            exp_day = "28"
        else:
            exp_day = "30"
        return f"{exp_month}/{exp_day}/{exp_year}"
    except (ValueError, IndexError):
        return "12/31/2029"


@KNOWLEDGE.discoverable_tool(write=True)
def order_debit_card_5739(
    ctx: Tau2Context,
    account_id: str,
    user_id: str,
    delivery_option: str,
    delivery_fee: float,
    card_design: str,
    design_fee: float,
    shipping_address: str,
    excess_replacement_fee: float | None = None,
) -> str:
    """Order a new debit card for a customer's checking account.

    Args:
        account_id (string): The checking account ID to link the debit card to
        user_id (string): The customer's unique identifier
        delivery_option (string): Shipping speed: STANDARD, EXPEDITED, or RUSH
        delivery_fee (number): Fee to charge for delivery in dollars
        card_design (string): Card design: CLASSIC, PREMIUM, or CUSTOM
        design_fee (number): Fee to charge for card design in dollars
        shipping_address (string): Full shipping address for card delivery
        excess_replacement_fee (number, optional): Fee for exceeding replacement limit, if applicable

    Returns:
        Debit card order placed successfully.
    """
    excess: Any = excess_replacement_fee or 0
    try:
        delivery = float(delivery_fee) if delivery_fee is not None else None
    except (TypeError, ValueError):
        return "Error: delivery_fee must be a number."
    try:
        design = float(design_fee) if design_fee is not None else None
    except (TypeError, ValueError):
        return "Error: design_fee must be a number."
    try:
        excess = float(excess)
    except (TypeError, ValueError):
        excess = 0
    required = [account_id, user_id, delivery_option, delivery is not None, card_design, design is not None]
    if not all([*required, shipping_address]):
        return "Error: Missing required parameters. Required: account_id, user_id, delivery_option, delivery_fee, card_design, design_fee, shipping_address."
    assert delivery is not None and design is not None
    valid_delivery = ["STANDARD", "EXPEDITED", "RUSH"]
    if delivery_option.upper() not in valid_delivery:
        return f"Error: Invalid delivery_option. Must be one of: {valid_delivery}"
    delivery_option = delivery_option.upper()
    valid_design = ["CLASSIC", "PREMIUM", "CUSTOM"]
    if card_design.upper() not in valid_design:
        return f"Error: Invalid card_design. Must be one of: {valid_design}"
    card_design = card_design.upper()
    if not exists(ctx, "accounts", account_id):
        return f"Error: Account '{account_id}' not found."
    account = record(ctx, "accounts", account_id)
    if account.get("class") != "checking":
        return f"Error: Debit cards can only be ordered for checking accounts. Account '{account_id}' is a {account.get('class')} account."
    if account.get("status") != "OPEN":
        return f"Error: Account must be OPEN. Account '{account_id}' has status: {account.get('status')}"
    if account.get("user_id") != user_id:
        return f"Error: Account '{account_id}' does not belong to user '{user_id}'."
    try:
        current_holdings = float(str(account.get("current_holdings", "0")).replace(",", ""))
    except ValueError:
        current_holdings = 0.0
    if current_holdings < 25.0:
        return f"Error: Account must have a minimum balance of $25. Current balance: ${current_holdings:.2f}"
    for _, order in ctx.items("debit_card_orders"):
        if order.get("account_id") == account_id and order.get("status") == "PENDING":
            return f"Error: There is already a pending debit card order for account '{account_id}'."
    active = sum(
        1
        for _, card in ctx.items("debit_cards")
        if card.get("account_id") == account_id and card.get("status") == "ACTIVE"
    )
    if active >= 1:
        return f"Error: Account '{account_id}' already has an active debit card. Maximum 1 active card per checking account."
    total_fee = delivery + design + excess
    if total_fee > 0 and current_holdings < total_fee:
        return f"Error: Insufficient funds for fees. Total fees: ${total_fee:.2f}. Current balance: ${current_holdings:.2f}"
    expected_delivery = _DELIVERY_TIMES[delivery_option]
    order_date = get_today_str()
    order_id = generate_debit_card_order_id(account_id, user_id, delivery_option)
    order_record = {
        "order_id": order_id,
        "account_id": account_id,
        "user_id": user_id,
        "delivery_option": delivery_option,
        "card_design": card_design,
        "shipping_address": shipping_address,
        "delivery_fee": delivery,
        "design_fee": design,
        "excess_replacement_fee": excess,
        "total_fee": total_fee,
        "order_date": order_date,
        "expected_delivery": expected_delivery,
        "status": "PENDING",
    }
    if not add_to_db("debit_card_orders", order_id, order_record, db=ctx):
        return "Error: Failed to create debit card order. Order may already exist."
    if total_fee > 0:
        account["current_holdings"] = f"{current_holdings - total_fee:.2f}"
        fee_txn_id = f"btxn_dcfee_{order_id[-8:]}"
        fee_transaction = {
            "transaction_id": fee_txn_id,
            "account_id": account_id,
            "date": order_date,
            "description": f"DEBIT CARD ORDER FEE - {', '.join(_order_fees(delivery, design, excess, ''))}",
            "amount": -total_fee,
            "type": "debit_card_fee",
            "status": "posted",
        }
        add_to_db("bank_account_transaction_history", fee_txn_id, fee_transaction, db=ctx)
    card_id = generate_debit_card_id(account_id, user_id, order_date)
    seed = f"card_details:{card_id}"
    last_4_digits = "".join(c for c in deterministic_id(seed + ":last4", length=8) if c.isdigit())[:4].zfill(
        4
    )
    cvv = "".join(c for c in deterministic_id(seed + ":cvv", length=6) if c.isdigit())[:3].zfill(3)
    cardholder_name = "CARDHOLDER"
    user = ctx.read("users", user_id)
    if user is not None:
        cardholder_name = user.get("name", "CARDHOLDER").upper()
    expiration_date = _expiration(order_date)
    card_record = {
        "card_id": card_id,
        "account_id": account_id,
        "user_id": user_id,
        "cardholder_name": cardholder_name,
        "last_4_digits": last_4_digits,
        "cvv": cvv,
        "status": "PENDING",
        "issue_date": order_date,
        "expiration_date": expiration_date,
        "card_design": card_design,
        "issue_reason": _issue_reason(ctx, account_id),
    }
    add_to_db("debit_cards", card_id, card_record, db=ctx)
    result_parts = [
        "Debit Card Order Confirmed",
        f"Order ID: {order_id}",
        f"Card ID: {card_id}",
        f"Linked Account: {account_id}",
        f"Delivery Option: {delivery_option}",
        f"Card Design: {card_design}",
        f"Shipping Address: {shipping_address}",
        f"Expected Delivery: {expected_delivery}",
        "",
        "Note: Card will arrive with status PENDING. Customer must call to activate after receiving the card.",
    ]
    if total_fee > 0:
        fee_details = ", ".join(_order_fees(delivery, design, excess, ":"))
        result_parts.append(f"Total Fees: ${total_fee:.2f} ({fee_details}) - CHARGED to account {account_id}")
        result_parts.append(f"New Account Balance: ${current_holdings - total_fee:.2f}")
    else:
        result_parts.append("Total Fees: $0 (No additional charges)")
    return "\n".join(result_parts)


__all__: list[str] = []
