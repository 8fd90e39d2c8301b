"""tau2's banking_knowledge domain: the customer's discoverable tools, actions in the
real world (a cash-back dispute, a referral link, a card's last digits, a check
deposit). They run only once the agent has given them (``give_discoverable_user_tool``
writes ``user_discoverable_tools``); each call is logged in
``user_discoverable_tool_calls``. Port of tau2-bench (Sierra Research, MIT)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .banking_models import (
    generate_dispute_id,
    generate_referral_link_id,
    generate_user_discoverable_tool_call_id,
    get_today_str,
)
from .banking_query import add_to_db, exists, parse_balance, query_database_tool, record
from .banking_user import KNOWLEDGE_USER
from .toolkit import Tau2Context


def _check_tool_given(ctx: Tau2Context, tool_name: str) -> str | None:
    result = query_database_tool("user_discoverable_tools", f'{{"tool_name": "{tool_name}"}}', db=ctx)
    if "No records found" in result:
        return (
            f"Error: Tool '{tool_name}' has not been given to you by the agent. "
            f"The agent must first use `give_discoverable_user_tool` to give this tool to you."
        )
    return None


def _log_user_tool_call(ctx: Tau2Context, tool_name: str, args: dict[str, Any]) -> None:
    call_record = {
        "tool_name": tool_name,
        "arguments": args,
        "called_at": get_today_str(),
        "status": "CALLED",
    }
    call_record_id = generate_user_discoverable_tool_call_id(tool_name, args)
    add_to_db("user_discoverable_tool_calls", call_record_id, call_record, db=ctx)


@KNOWLEDGE_USER.discoverable_tool(write=True)
def submit_cash_back_dispute_0589(ctx: Tau2Context, user_id: str, transaction_id: str) -> str:
    """Submit a cash back dispute for a specific transaction.

    Args:
        user_id (string): The user's unique identifier in the system
        transaction_id (string): The unique identifier for the transaction with incorrect cash back

    Returns:
        Cash back dispute submitted successfully. Your case has been queued for review.
    """
    error = _check_tool_given(ctx, "submit_cash_back_dispute_0589")
    if error:
        return error
    args = {"user_id": user_id, "transaction_id": transaction_id}
    _log_user_tool_call(ctx, "submit_cash_back_dispute_0589", args)
    dispute_id = generate_dispute_id(user_id, transaction_id)
    auto_resolve = False
    if any(True for _ in ctx.items("task_config")):
        config = ctx.read("task_config", "dispute_settings")
        auto_resolve = (config if config is not None else {}).get("auto_resolve_disputes", False)
    dispute_record: dict[str, Any] = {
        "dispute_id": dispute_id,
        "user_id": user_id,
        "transaction_id": transaction_id,
        "submitted_at": get_today_str(),
    }
    if auto_resolve:
        dispute_record.update(status="RESOLVED", resolution="APPROVED")
        status_msg = "Status: RESOLVED - The dispute has been reviewed and approved. The transaction rewards need to be updated."
    else:
        dispute_record["status"] = "SUBMITTED"
        status_msg = "Status: SUBMITTED - Your dispute has been queued for review."
    success = add_to_db("cash_back_disputes", dispute_id, dispute_record, db=ctx)
    result = f"Cash back dispute submitted successfully. Your case has been queued for review.\n\nExecuted: submit_cash_back_dispute_0589\nArguments: {json.dumps(args, indent=2)}\n"
    if success:
        result += f"Dispute ID: {dispute_id}\n{status_msg}"
    else:
        result += "Note: Dispute may have already been submitted for this transaction."
    return result


@KNOWLEDGE_USER.discoverable_tool(write=True)
def get_referral_link(ctx: Tau2Context, user_id: str, card_name: str) -> str:
    """Generate a referral link for a specific credit card to share with friends or family.

    Args:
        user_id (string): The user's unique identifier in the system (the referrer)
        card_name (string): The name of the credit card to create a referral for (e.g., 'Gold Rewards Card')

    Returns:
        Referral link generated successfully. Share this link with the person you want to refer.
    """
    error = _check_tool_given(ctx, "get_referral_link")
    if error:
        return error
    args = {"user_id": user_id, "card_name": card_name}
    _log_user_tool_call(ctx, "get_referral_link", args)
    referral_id = generate_referral_link_id(user_id, card_name)
    referral_record = {
        "referral_id": referral_id,
        "referrer_id": user_id,
        "referred_account_type": card_name,
        "referral_status": "NO_PROGRESS",
        "date": get_today_str(),
    }
    success = add_to_db("referrals", referral_id, referral_record, db=ctx)
    result = f"Referral link generated successfully. Share this link with the person you want to refer.\n\nExecuted: get_referral_link\nArguments: {json.dumps(args, indent=2)}\n"
    if success:
        result += f"Referral ID: {referral_id}\nReferral link: https://rhobank.com/refer/{referral_id}"
    else:
        result += "Note: A referral link for this card may have already been generated."
    return result


@KNOWLEDGE_USER.discoverable_tool()
def get_card_last_4_digits(ctx: Tau2Context, credit_card_account_id: str) -> str:
    """Look up the last 4 digits of a credit card number.

    Args:
        credit_card_account_id (string): The credit card account ID to look up (e.g., 'cc_76ad9cc60e_gold')

    Returns:
        Card information retrieved successfully.
    """
    error = _check_tool_given(ctx, "get_card_last_4_digits")
    if error:
        return error
    args = {"credit_card_account_id": credit_card_account_id}
    _log_user_tool_call(ctx, "get_card_last_4_digits", args)
    result = query_database_tool(
        "credit_card_accounts", f'{{"account_id": "{credit_card_account_id}"}}', db=ctx
    )
    if "No results found" in result or "No records found" in result:
        return f"Error: Credit card account '{credit_card_account_id}' not found."
    hash_digest = hashlib.sha256(f"card_last4:{credit_card_account_id}".encode()).hexdigest()
    last_4 = "".join(c for c in hash_digest if c.isdigit())[:4].ljust(4, "0")
    return f"Card information retrieved successfully.\n\nExecuted: get_card_last_4_digits\nArguments: {json.dumps(args, indent=2)}\nLast 4 digits of card: {last_4}"


@KNOWLEDGE_USER.discoverable_tool(write=True)
def deposit_check_3847(ctx: Tau2Context, account_id: str, check_amount: float) -> str:
    """Deposit a check into a checking or savings account. The user takes a photo of the check and submits it through their mobile banking app.

    Args:
        account_id (string): The bank account ID to deposit the check into
        check_amount (number): The amount of the check in USD

    Returns:
        Check deposited successfully. Funds will be available according to your account's deposit policy.
    """
    error = _check_tool_given(ctx, "deposit_check_3847")
    if error:
        return error
    args = {"account_id": account_id, "check_amount": check_amount}
    _log_user_tool_call(ctx, "deposit_check_3847", args)
    try:
        check_amount = float(check_amount)
    except (ValueError, TypeError):
        return f"Error: Invalid check amount '{check_amount}'. Must be a number."
    if check_amount <= 0:
        return "Error: Check amount must be positive."
    if not exists(ctx, "accounts", account_id):
        return f"Error: Account '{account_id}' not found."
    account = record(ctx, "accounts", account_id)
    if account.get("status") not in ("ACTIVE", "OPEN"):
        return f"Error: Account '{account_id}' is not active."
    current_balance = parse_balance(account.get("current_holdings", account.get("balance", 0)))
    new_balance = current_balance + check_amount
    account["current_holdings"] = f"${new_balance:.2f}"
    return (
        f"Check deposited successfully. Funds will be available according to your account's deposit policy.\n\n"
        f"Executed: deposit_check_3847\n"
        f"Arguments: {json.dumps(args, indent=2)}\n"
        f"Check deposit processed!\n"
        f"  - Account: {account_id}\n"
        f"  - Check Amount: ${check_amount:.2f}\n"
        f"  - Previous Balance: ${current_balance:.2f}\n"
        f"  - New Balance: ${new_balance:.2f}"
    )


__all__: list[str] = []
