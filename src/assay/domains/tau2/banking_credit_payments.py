"""tau2's banking_knowledge domain: the agent's discoverable tools for a credit card
account's statement credits, account flags (fee waivers, promotional APRs, rewards
bonuses) and payments from checking. Port of tau2-bench (Sierra Research, MIT)."""

from __future__ import annotations

from .banking import KNOWLEDGE
from .banking_credit import _card_exists
from .banking_models import generate_account_flag_id, generate_transaction_id, get_today_str
from .banking_query import account_balance, add_to_db, exists, record
from .toolkit import Tau2Context


@KNOWLEDGE.discoverable_tool(write=True)
def apply_statement_credit_8472(
    ctx: Tau2Context, user_id: str, credit_card_account_id: str, amount: float, reason: str
) -> str:
    """Apply a statement credit to a customer's credit card account.

    Args:
        user_id (string): The user's unique identifier in the system
        credit_card_account_id (string): The credit card account ID to apply the credit to
        amount (number): The credit amount in dollars (e.g., 25.00 for a $25 credit)
        reason (string): Reason for the statement credit. Must be one of: 'goodwill_adjustment', 'promotional_credit', 'annual_fee_reversal', 'late_fee_reversal', 'interest_charge_reversal', 'dispute_resolution', 'price_match', 'retention_offer', 'error_correction', 'other'

    Returns:
        Statement credit applied successfully.
    """
    if not user_id or not credit_card_account_id or amount is None or not reason:
        return "Error: Missing required parameters (user_id, credit_card_account_id, amount, reason)."
    if amount <= 0:
        return "Error: Credit amount must be positive."
    valid_reasons = [
        "goodwill_adjustment",
        "promotional_credit",
        "annual_fee_reversal",
        "late_fee_reversal",
        "interest_charge_reversal",
        "dispute_resolution",
        "price_match",
        "retention_offer",
        "error_correction",
        "other",
    ]
    if reason not in valid_reasons:
        return f"Error: Invalid reason. Must be one of: {valid_reasons}"
    if not _card_exists(ctx, credit_card_account_id):
        return f"Error: Credit card account '{credit_card_account_id}' not found."
    transaction_id = generate_transaction_id(user_id, "STATEMENT_CREDIT", reason, amount, "Statement Credit")
    today = get_today_str()
    credit_record = {
        "transaction_id": transaction_id,
        "user_id": user_id,
        "credit_card_account_id": credit_card_account_id,
        "credit_card_type": "N/A",
        "merchant_name": "Rho-Bank Statement Credit",
        "transaction_amount": f"-${amount:.2f}",
        "transaction_date": today,
        "category": "Statement Credit",
        "status": "COMPLETED",
        "rewards_earned": "0 points",
        "credit_reason": reason,
    }
    if not add_to_db("credit_card_transaction_history", transaction_id, credit_record, db=ctx):
        return (
            f"Error: Failed to apply statement credit. Transaction ID '{transaction_id}' may already exist."
        )
    return (
        f"Statement credit applied successfully.\n\n"
        f"Executed: apply_statement_credit_8472\n"
        f"  - Transaction ID: {transaction_id}\n"
        f"  - User ID: {user_id}\n"
        f"  - Account: {credit_card_account_id}\n"
        f"  - Credit Amount: ${amount:.2f}\n"
        f"  - Reason: {reason.replace('_', ' ').title()}\n"
        f"  - Date: {today}"
    )


@KNOWLEDGE.discoverable_tool(write=True)
def apply_credit_card_account_flag_6147(
    ctx: Tau2Context,
    credit_card_account_id: str,
    user_id: str,
    flag_type: str,
    expiration_date: str,
    reason: str,
) -> str:
    """Apply a flag to a customer's credit card account. Flags can include annual fee waivers, promotional APR rates, rewards bonuses, or other account-level modifiers. Each flag has an effective date and expiration date.

    Args:
        credit_card_account_id (string): The credit card account ID to apply the flag to
        user_id (string): The user's unique identifier in the system
        flag_type (string): Type of flag to apply. Must be one of: 'annual_fee_waived', 'promotional_apr', 'rewards_bonus', 'other'
        expiration_date (string): Date when the flag expires (MM/DD/YYYY format)
        reason (string): Reason for applying this flag. Must be one of: 'retention_offer', 'loyalty_benefit', 'promotional', 'error_correction', 'other'

    Returns:
        Account flag applied successfully.
    """
    if not credit_card_account_id or not user_id or not flag_type or not expiration_date or not reason:
        return "Error: Missing required parameters (credit_card_account_id, user_id, flag_type, expiration_date, reason)."
    valid_flag_types = ["annual_fee_waived", "promotional_apr", "rewards_bonus", "other"]
    if flag_type not in valid_flag_types:
        return f"Error: Invalid flag_type. Must be one of: {valid_flag_types}"
    valid_reasons = ["retention_offer", "loyalty_benefit", "promotional", "error_correction", "other"]
    if reason not in valid_reasons:
        return f"Error: Invalid reason. Must be one of: {valid_reasons}"
    if not _card_exists(ctx, credit_card_account_id):
        return f"Error: Credit card account '{credit_card_account_id}' not found."
    flag_id = generate_account_flag_id(credit_card_account_id, flag_type, expiration_date)
    today = get_today_str()
    flag_record = {
        "flag_id": flag_id,
        "credit_card_account_id": credit_card_account_id,
        "user_id": user_id,
        "flag_type": flag_type,
        "effective_date": today,
        "expiration_date": expiration_date,
        "reason": reason,
        "applied_at": today,
        "status": "ACTIVE",
    }
    if not add_to_db("credit_card_account_flags", flag_id, flag_record, db=ctx):
        return f"Error: Failed to apply account flag. Flag ID '{flag_id}' may already exist."
    return (
        f"Account flag applied successfully!\n"
        f"  - Flag ID: {flag_id}\n"
        f"  - Account: {credit_card_account_id}\n"
        f"  - User ID: {user_id}\n"
        f"  - Flag Type: {flag_type.replace('_', ' ').title()}\n"
        f"  - Effective Date: {today}\n"
        f"  - Expiration Date: {expiration_date}\n"
        f"  - Reason: {reason.replace('_', ' ').title()}"
    )


@KNOWLEDGE.discoverable_tool(write=True)
def pay_credit_card_from_checking_9182(
    ctx: Tau2Context, user_id: str, checking_account_id: str, credit_card_account_id: str, amount: float
) -> str:
    """Pay off a credit card balance using funds from the customer's Rho-Bank checking account. This deducts the specified amount from the checking account and reduces the credit card balance by the same amount.

    Args:
        user_id (string): The customer's unique identifier in the system
        checking_account_id (string): The ID of the Rho-Bank checking account to debit funds from
        credit_card_account_id (string): The ID of the credit card account to apply the payment to
        amount (number): The payment amount in dollars. Must be a positive number.

    Returns:
        Credit card payment processed successfully.
    """
    if not user_id or not checking_account_id or not credit_card_account_id or amount is None:
        return "Error: Missing required parameters (user_id, checking_account_id, credit_card_account_id, amount)."
    try:
        amount = float(amount)
        if amount <= 0:
            return "Error: Payment amount must be a positive number."
    except (ValueError, TypeError):
        return "Error: Invalid payment amount. Must be a positive number."
    if not exists(ctx, "accounts", checking_account_id):
        return f"Error: Checking account '{checking_account_id}' not found."
    checking_account = record(ctx, "accounts", checking_account_id)
    if checking_account.get("user_id") != user_id:
        return f"Error: Checking account '{checking_account_id}' does not belong to user '{user_id}'."
    if checking_account.get("class") != "checking":
        return f"Error: Account '{checking_account_id}' is not a checking account."
    current_balance = account_balance(checking_account)
    if amount > current_balance:
        return f"Error: Insufficient funds in checking account. Available balance: ${current_balance:.2f}, requested payment: ${amount:.2f}."
    if not exists(ctx, "credit_card_accounts", credit_card_account_id):
        return f"Error: Credit card account '{credit_card_account_id}' not found."
    cc_account = record(ctx, "credit_card_accounts", credit_card_account_id)
    if cc_account.get("user_id") != user_id:
        return f"Error: Credit card account '{credit_card_account_id}' does not belong to user '{user_id}'."
    cc_balance_str = cc_account.get("current_balance", "$0.00")
    try:
        cc_balance = float(str(cc_balance_str).replace("$", "").replace(",", ""))
    except (ValueError, TypeError):
        cc_balance = 0.0
    if amount > cc_balance:
        return f"Error: Payment amount (${amount:.2f}) exceeds credit card balance (${cc_balance:.2f}). Please specify an amount up to the outstanding balance."
    new_checking_balance = current_balance - amount
    new_cc_balance = cc_balance - amount
    checking_account["current_holdings"] = f"{new_checking_balance:.2f}"
    cc_account["current_balance"] = f"${new_cc_balance:.2f}"
    return (
        f"Payment processed successfully!\n"
        f"  - Payment Amount: ${amount:.2f}\n"
        f"  - From Checking Account: {checking_account_id}\n"
        f"  - To Credit Card Account: {credit_card_account_id}\n"
        f"  - New Checking Balance: ${new_checking_balance:.2f}\n"
        f"  - New Credit Card Balance: ${new_cc_balance:.2f}\n"
        f"The payment has been applied immediately."
    )


__all__: list[str] = []
