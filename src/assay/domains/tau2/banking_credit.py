"""tau2's banking_knowledge domain: the agent's discoverable tools for credit card
accounts: replacement and closure (statement credits, flags and payments are in
:mod:`.banking_credit_payments`). Port of tau2-bench (Sierra Research, MIT)."""

from __future__ import annotations

import json

from .banking import KNOWLEDGE
from .banking_models import generate_closure_reason_id, generate_credit_card_order_id, get_today_str
from .banking_query import add_to_db, exists, listing, query_database_tool, record, update_record_in_db
from .toolkit import Tau2Context


def _card_exists(ctx: Tau2Context, credit_card_account_id: object) -> bool:
    """tau2's check that a credit card account exists: a query on its ``account_id``."""
    result = query_database_tool(
        "credit_card_accounts", f'{{"account_id": "{credit_card_account_id}"}}', db=ctx
    )
    return not ("No results found" in result or "No records found" in result)


@KNOWLEDGE.discoverable_tool(write=True)
def order_replacement_credit_card_7291(
    ctx: Tau2Context,
    credit_card_account_id: str,
    user_id: str,
    shipping_address: str,
    reason: str,
    expedited_shipping: bool = False,
) -> str:
    """Order a replacement credit card for a customer. The old card will be automatically cancelled when the replacement is ordered.

    Args:
        credit_card_account_id (string): The credit card account ID for the card being replaced
        user_id (string): The user's unique identifier in the system
        shipping_address (string): Full shipping address where the new card should be sent
        reason (string): Reason for replacement. Must be one of: 'fraud_suspected', 'lost', 'stolen', 'damaged', 'expired', 'other'
        expedited_shipping (boolean, optional): Whether to use expedited shipping (2-3 business days instead of 7-10)

    Returns:
        Replacement credit card order placed successfully. The old card has been cancelled for security.
    """
    if not credit_card_account_id or not user_id or not shipping_address or not reason:
        return (
            "Error: Missing required parameters (credit_card_account_id, user_id, shipping_address, reason)."
        )
    valid_reasons = ["fraud_suspected", "lost", "stolen", "damaged", "expired", "other"]
    if reason not in valid_reasons:
        return f"Error: Invalid reason. Must be one of: {valid_reasons}"
    if not _card_exists(ctx, credit_card_account_id):
        return f"Error: Credit card account '{credit_card_account_id}' not found."
    order_id = generate_credit_card_order_id(credit_card_account_id, user_id, reason)
    order_record = {
        "order_id": order_id,
        "credit_card_account_id": credit_card_account_id,
        "user_id": user_id,
        "shipping_address": shipping_address,
        "reason": reason,
        "expedited_shipping": expedited_shipping,
        "order_date": get_today_str(),
        "status": "ORDERED",
        "old_card_cancelled": True,
    }
    if not add_to_db("credit_card_orders", order_id, order_record, db=ctx):
        return "Error: Order may have already been placed for this card replacement."
    if exists(ctx, "credit_card_accounts", credit_card_account_id):
        account = record(ctx, "credit_card_accounts", credit_card_account_id)
        account["status"] = "CLOSED"
        account["closed_date"] = get_today_str()
    shipping_method = "Expedited" if expedited_shipping else "Standard"
    expected_delivery = "2-3 business days" if expedited_shipping else "7-10 business days"
    result_parts = [
        f"Order ID: {order_id}",
        f"Card Account: {credit_card_account_id}",
        f"Reason: {reason.replace('_', ' ').title()}",
        f"Shipping Address: {shipping_address}",
        f"Shipping Method: {shipping_method}",
        f"Expected Delivery: {expected_delivery}",
        "",
        "The old card has been cancelled for security. The new card will have the same account number but a new card number and CVV.",
    ]
    return "\n".join(result_parts)


@KNOWLEDGE.discoverable_tool()
def get_pending_replacement_orders_5765(ctx: Tau2Context, credit_card_account_id: str) -> str:
    """Check if a credit card account has any pending replacement card orders.

    Args:
        credit_card_account_id (string): The credit card account ID to check for pending replacement orders

    Returns:
        Pending replacement orders check completed.
    """
    if not credit_card_account_id:
        return "Error: Missing required parameter: credit_card_account_id"
    head = [
        "Pending replacement orders check completed.",
        "",
        "Executed: get_pending_replacement_orders_5765",
        f"Replacement orders for credit card account {credit_card_account_id}:",
    ]
    none = "\nNo pending replacement orders found for this credit card account."
    return listing(ctx, "credit_card_orders", "credit_card_account_id", credit_card_account_id, head, none)


@KNOWLEDGE.discoverable_tool(write=True)
def log_credit_card_closure_reason_4521(
    ctx: Tau2Context, credit_card_account_id: str, user_id: str, closure_reason: str
) -> str:
    """Log the reason why a customer wants to close their credit card account.

    Args:
        credit_card_account_id (string): The credit card account ID the customer wants to close
        user_id (string): The user's unique identifier in the system
        closure_reason (string): Reason for closure. Must be one of: 'annual_fee', 'not_using_card', 'found_better_card', 'unhappy_with_rewards', 'simplifying_finances', 'negative_experience', 'other'

    Returns:
        Closure reason logged successfully.
    """
    if not credit_card_account_id or not user_id or not closure_reason:
        return "Error: Missing required parameters."
    valid_reasons = [
        "annual_fee",
        "not_using_card",
        "found_better_card",
        "unhappy_with_rewards",
        "simplifying_finances",
        "negative_experience",
        "other",
    ]
    if closure_reason not in valid_reasons:
        return f"Error: Invalid closure_reason. Must be one of: {valid_reasons}"
    record_id = generate_closure_reason_id(credit_card_account_id, user_id)
    closure_record = {
        "record_id": record_id,
        "credit_card_account_id": credit_card_account_id,
        "user_id": user_id,
        "closure_reason": closure_reason,
        "logged_at": get_today_str(),
        "status": "LOGGED",
    }
    add_to_db("credit_card_closure_reasons", record_id, closure_record, db=ctx)
    arguments = {
        "credit_card_account_id": credit_card_account_id,
        "user_id": user_id,
        "closure_reason": closure_reason,
    }
    return (
        f"Closure reason logged successfully.\n\n"
        f"Executed: log_credit_card_closure_reason_4521\n"
        f"Arguments: {json.dumps(arguments, indent=2)}\n"
        f"Closure reason '{closure_reason}' logged for account {credit_card_account_id}."
    )


@KNOWLEDGE.discoverable_tool()
def get_closure_reason_history_8293(ctx: Tau2Context, credit_card_account_id: str) -> str:
    """Retrieve the closure reason history for a specific credit card account.

    Args:
        credit_card_account_id (string): The credit card account ID to check for previous closure attempts

    Returns:
        Closure reason history retrieved successfully.
    """
    if not credit_card_account_id:
        return "Error: Missing required parameter: credit_card_account_id"
    head = [
        "Closure reason history retrieved successfully.",
        "",
        "Executed: get_closure_reason_history_8293",
        f"Closure reason history for credit card account {credit_card_account_id}:",
    ]
    none = "\nNo closure reason records found for this credit card account."
    return listing(
        ctx, "credit_card_closure_reasons", "credit_card_account_id", credit_card_account_id, head, none
    )


@KNOWLEDGE.discoverable_tool(write=True)
def close_credit_card_account_7834(ctx: Tau2Context, credit_card_account_id: str, user_id: str) -> str:
    """Close a customer's credit card account permanently.

    Args:
        credit_card_account_id (string): The credit card account ID to close
        user_id (string): The user's unique identifier in the system

    Returns:
        Credit card account closed successfully.
    """
    if not credit_card_account_id or not user_id:
        return "Error: Missing required parameters (credit_card_account_id, user_id)."
    if not _card_exists(ctx, credit_card_account_id):
        return f"Error: Credit card account '{credit_card_account_id}' not found."
    success, _ = update_record_in_db(
        "credit_card_accounts",
        db=ctx,
        record_id=credit_card_account_id,
        updates={"status": "CLOSED", "closed_date": get_today_str(), "closed_by": user_id},
    )
    if not success:
        return f"Error: Failed to close credit card account '{credit_card_account_id}'."
    arguments = {"credit_card_account_id": credit_card_account_id, "user_id": user_id}
    return (
        f"Credit card account closed successfully.\n\n"
        f"Executed: close_credit_card_account_7834\n"
        f"Arguments: {json.dumps(arguments, indent=2)}\n"
        f"Account {credit_card_account_id} has been closed."
    )


__all__: list[str] = []
