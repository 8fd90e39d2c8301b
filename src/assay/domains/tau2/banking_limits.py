"""tau2's banking_knowledge domain: the agent's discoverable tools for credit limits and
payment history. Port of tau2-bench (Sierra Research, MIT)."""

from __future__ import annotations

from typing import Any

from .banking import KNOWLEDGE
from .banking_models import generate_credit_limit_increase_request_id, get_today_str
from .banking_query import add_to_db, exists, listing, record
from .toolkit import Tau2Context


@KNOWLEDGE.discoverable_tool(write=True)
def submit_credit_limit_increase_request_7392(
    ctx: Tau2Context, credit_card_account_id: str, user_id: str, requested_increase_amount: int
) -> str:
    """Submit a credit limit increase request for a customer's credit card.

    Args:
        credit_card_account_id (string): The credit card account ID to request increase for
        user_id (string): The customer's unique identifier in the system
        requested_increase_amount (integer): The dollar amount by which to increase the credit limit (e.g., 2500 for $2,500)

    Returns:
        Credit limit increase request submitted successfully.
    """
    if not credit_card_account_id or not user_id or requested_increase_amount is None:
        return "Error: Missing required parameters."
    try:
        amount = float(requested_increase_amount)
    except (TypeError, ValueError):
        return "Error: Invalid requested_increase_amount. Must be a whole number."
    if not amount.is_integer():
        return "Error: Invalid requested_increase_amount. Must be a whole number of dollars."
    increase = int(amount)
    if increase <= 0:
        return "Error: Requested increase amount must be positive."
    if not exists(ctx, "credit_card_accounts", credit_card_account_id):
        return f"Error: Credit card account '{credit_card_account_id}' not found."
    cc_account = record(ctx, "credit_card_accounts", credit_card_account_id)
    if cc_account.get("user_id") != user_id:
        return f"Error: Credit card account '{credit_card_account_id}' does not belong to user '{user_id}'."
    request_id = generate_credit_limit_increase_request_id(credit_card_account_id, user_id, increase)
    request_record = {
        "request_id": request_id,
        "credit_card_account_id": credit_card_account_id,
        "user_id": user_id,
        "requested_increase_amount": increase,
        "submitted_at": get_today_str(),
        "status": "PENDING",
    }
    if not add_to_db("credit_limit_increase_requests", request_id, request_record, db=ctx):
        return "Error: A similar request may already exist."
    return (
        f"Credit limit increase request submitted successfully.\n\n"
        f"Executed: submit_credit_limit_increase_request_7392\n"
        f"  - Request ID: {request_id}\n"
        f"  - Account: {credit_card_account_id}\n"
        f"  - Requested Increase: ${increase:,}\n"
        f"  - Status: PENDING"
    )


@KNOWLEDGE.discoverable_tool()
def get_credit_limit_increase_history_4829(ctx: Tau2Context, credit_card_account_id: str) -> str:
    """Retrieve the credit limit increase request history for a specific credit card account. Returns all previous CLI requests including dates, amounts, and statuses.

    Args:
        credit_card_account_id (string): The credit card account ID to check for CLI history

    Returns:
        Credit limit increase history retrieved.
    """
    if not credit_card_account_id:
        return "Error: Missing required parameter: credit_card_account_id"
    head = [
        "Credit limit increase history retrieved.",
        "",
        "Executed: get_credit_limit_increase_history_4829",
        f"Credit limit increase history for account {credit_card_account_id}:",
    ]
    none = "\nNo credit limit increase requests found for this account."
    return listing(
        ctx, "credit_limit_increase_requests", "credit_card_account_id", credit_card_account_id, head, none
    )


@KNOWLEDGE.discoverable_tool()
def get_payment_history_6183(ctx: Tau2Context, credit_card_account_id: str, months: int) -> str:
    """Retrieve payment history for a credit card account.

    Args:
        credit_card_account_id (string): The credit card account ID to check payment history for
        months (integer): Number of months of payment history to retrieve

    Returns:
        Payment history retrieved.
    """
    if not credit_card_account_id or months is None:
        return "Error: Missing required parameters (credit_card_account_id, months)."
    try:
        months = int(months)
        if months <= 0:
            return "Error: months must be a positive integer."
    except (ValueError, TypeError):
        return "Error: Invalid months value. Must be a positive integer."
    payments = [
        p
        for _, p in ctx.items("payment_history")
        if p.get("credit_card_account_id") == credit_card_account_id
    ]
    if not payments:
        return f"No payment history found for account '{credit_card_account_id}'."
    payments.sort(key=lambda x: x.get("payment_date") or "", reverse=True)
    payments = payments[:months]
    consecutive_on_time = 0
    for payment in payments:
        if payment.get("status") != "ON_TIME":
            break
        consecutive_on_time += 1
    result_parts = [
        f"Payment history for account '{credit_card_account_id}' (last {months} months):",
        f"Consecutive on-time payments: {consecutive_on_time}",
    ]
    for payment in payments:
        result_parts.append(
            f"\n  - Payment Date: {payment.get('payment_date')}\n"
            f"    Amount: {payment.get('amount')}\n"
            f"    Status: {payment.get('status')}"
        )
    return "\n".join(result_parts)


def _limit_of(value: Any) -> float:
    try:
        return float(str(value).replace("$", "").replace(",", ""))
    except (ValueError, TypeError):
        return 0.0


def _cli_ineligible(
    ctx: Tau2Context, cc_account: dict[str, Any], credit_card_account_id: str, user_id: Any
) -> bool:
    """tau2's eligibility checks of an approval: no pending dispute of the user, no
    pending replacement of the card, an account in good standing."""
    for _, dispute in ctx.items("transaction_disputes"):
        if dispute.get("user_id") == user_id and dispute.get("status") in [
            "SUBMITTED",
            "UNDER_REVIEW",
            "PENDING",
        ]:
            return True
    for _, order in ctx.items("credit_card_orders"):
        if order.get("credit_card_account_id") == credit_card_account_id and order.get("status") in [
            "PENDING",
            "PROCESSING",
            "SHIPPED",
        ]:
            return True
    account_status = cc_account.get("account_status", "").upper()
    return account_status in ["PAST_DUE", "DELINQUENT", "COLLECTIONS", "CLOSED"]


@KNOWLEDGE.discoverable_tool(write=True)
def approve_credit_limit_increase_5847(
    ctx: Tau2Context, credit_card_account_id: str, user_id: str, new_credit_limit: int
) -> str:
    """Approve and apply a credit limit increase for a customer's credit card.

    Args:
        credit_card_account_id (string): The credit card account ID
        user_id (string): The customer's unique identifier in the system
        new_credit_limit (integer): The new total credit limit in dollars (e.g., 7500 for $7,500)

    Returns:
        Credit limit increase approved and applied successfully.
    """
    if not credit_card_account_id or not user_id or new_credit_limit is None:
        return "Error: Missing required parameters."
    if not exists(ctx, "credit_card_accounts", credit_card_account_id):
        return f"Error: Credit card account '{credit_card_account_id}' not found."
    cc_account = record(ctx, "credit_card_accounts", credit_card_account_id)
    if cc_account.get("user_id") != user_id:
        return f"Error: Credit card account '{credit_card_account_id}' does not belong to user '{user_id}'."
    if _cli_ineligible(ctx, cc_account, credit_card_account_id, user_id):
        return "Error: Credit limit increase request cannot be approved at this time."
    current_limit = _limit_of(cc_account.get("credit_limit", "$0.00"))
    new_limit = float(new_credit_limit)
    cc_account["credit_limit"] = f"${new_limit:.2f}"
    today = get_today_str()
    request_id = generate_credit_limit_increase_request_id(
        credit_card_account_id, user_id, new_limit - current_limit
    )
    approval_record = {
        "request_id": request_id,
        "credit_card_account_id": credit_card_account_id,
        "user_id": user_id,
        "previous_limit": f"${current_limit:.2f}",
        "new_limit": f"${new_limit:.2f}",
        "increase_amount": f"${new_limit - current_limit:.2f}",
        "decision_date": today,
        "status": "APPROVED",
    }
    add_to_db("credit_limit_increase_requests", request_id, approval_record, db=ctx)
    return (
        f"Credit limit increase approved!\n"
        f"  - Account: {credit_card_account_id}\n"
        f"  - Previous Limit: ${current_limit:.2f}\n"
        f"  - New Limit: ${new_limit:.2f}\n"
        f"  - Increase: ${new_limit - current_limit:.2f}\n"
        f"  - Effective Date: {today}\n"
        f"The customer will receive a confirmation email."
    )


@KNOWLEDGE.discoverable_tool(write=True)
def deny_credit_limit_increase_5848(
    ctx: Tau2Context, credit_card_account_id: str, user_id: str, denial_reason: str
) -> str:
    """Deny a credit limit increase request for a customer's credit card.

    Args:
        credit_card_account_id (string): The credit card account ID
        user_id (string): The customer's unique identifier in the system
        denial_reason (string): The reason for denying the request. Must be one of: 'insufficient_account_age', 'cooldown_period_active', 'pending_disputes', 'pending_replacement_card', 'past_due_balance', 'high_utilization', 'insufficient_payment_history', 'requested_amount_exceeds_limit', 'other'

    Returns:
        Credit limit increase request denied.
    """
    if not credit_card_account_id or not user_id or not denial_reason:
        return "Error: Missing required parameters."
    valid_reasons = [
        "insufficient_account_age",
        "cooldown_period_active",
        "pending_disputes",
        "pending_replacement_card",
        "past_due_balance",
        "high_utilization",
        "insufficient_payment_history",
        "requested_amount_exceeds_limit",
        "other",
    ]
    if denial_reason not in valid_reasons:
        return f"Error: Invalid denial_reason. Must be one of: {', '.join(valid_reasons)}"
    if not exists(ctx, "credit_card_accounts", credit_card_account_id):
        return f"Error: Credit card account '{credit_card_account_id}' not found."
    today = get_today_str()
    request_id = generate_credit_limit_increase_request_id(credit_card_account_id, user_id, 0.0)
    denial_record = {
        "request_id": request_id,
        "credit_card_account_id": credit_card_account_id,
        "user_id": user_id,
        "denial_reason": denial_reason,
        "decision_date": today,
        "status": "DENIED",
    }
    add_to_db("credit_limit_increase_requests", request_id, denial_record, db=ctx)
    return (
        f"Credit limit increase request denied.\n"
        f"  - Account: {credit_card_account_id}\n"
        f"  - Denial Reason: {denial_reason}\n"
        f"  - Date: {today}\n"
        f"The customer will receive a notification explaining the denial."
    )


__all__: list[str] = []
