"""tau2's banking_knowledge domain: the agent's discoverable tools for bank accounts
(open, close, list, transfer, transactions). Port of tau2-bench (Sierra Research, MIT)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .banking import KNOWLEDGE
from .banking_models import deterministic_id, get_now, get_today_str
from .banking_query import account_balance, add_to_db, exists, found, parse_balance, query_db, record
from .banking_query import query_database_tool as query
from .toolkit import Tau2Context

PERSONAL_CHECKING_EARLY_CLOSURE = {
    "Light Blue Account": {"fee": 15, "window_days": 30},
    "Light Green Account": {"fee": 15, "window_days": 30},
    "Green Fee-Free Account": {"fee": 15, "window_days": 30},
    "Blue Account": {"fee": 25, "window_days": 60},
    "Green Account": {"fee": 25, "window_days": 60},
    "Evergreen Account": {"fee": 50, "window_days": 90},
    "Bluest Account": {"fee": 100, "window_days": 180},
}
PERSONAL_SAVINGS_EARLY_CLOSURE = {
    "Bronze Account": {"fee": 20, "window_days": 60},
    "Silver Account": {"fee": 35, "window_days": 90},
    "Silver Plus Account": {"fee": 35, "window_days": 90},
    "Gold Account": {"fee": 75, "window_days": 180},
    "Gold Plus Account": {"fee": 75, "window_days": 180},
    "Gold Years Account": {"fee": 75, "window_days": 180},
    "Platinum Account": {"fee": 150, "window_days": 270},
    "Platinum Plus Account": {"fee": 150, "window_days": 270},
    "Diamond Elite Account": {"fee": 150, "window_days": 270},
}
_NOT_MET = "Error: Account eligibility requirements not met."


def _age_days(acc: dict[str, Any]) -> int:
    try:
        return (get_now() - datetime.strptime(acc.get("date_opened", ""), "%m/%d/%Y")).days
    except ValueError:
        return 0


def _kind(acc: dict[str, Any]) -> Any:
    return acc.get("account_type", acc.get("class", ""))


def _eligible(accounts: list[dict[str, Any]], account_type: str) -> bool:
    """tau2's eligibility rules for a new savings, business checking or business savings account."""
    if account_type == "savings":
        personal = ["checking", "personal_checking"]
        return any(
            _kind(acc) in personal and acc.get("status", "") in ["OPEN", "ACTIVE"] and _age_days(acc) >= 14
            for acc in accounts
        )
    if account_type == "business_checking":
        if any(acc.get("status") == "CLOSED" for acc in accounts):
            return False
        return any(
            _kind(acc) in ["checking", "personal_checking"] and acc.get("status", "") in ["OPEN", "ACTIVE"]
            for acc in accounts
        )
    if account_type == "business_savings":
        for acc in accounts:
            if parse_balance(acc.get("current_holdings", acc.get("balance", 0))) < 0:
                return False
        return any(
            _kind(acc) == "business_checking"
            and acc.get("status", "") in ["OPEN", "ACTIVE"]
            and _age_days(acc) >= 30
            for acc in accounts
        )
    return True


@KNOWLEDGE.discoverable_tool(write=True)
def open_bank_account_4821(ctx: Tau2Context, user_id: str, account_type: str, account_class: str) -> str:
    """Open a new bank account for a customer.

    Args:
        user_id (string): The customer's unique identifier in the system
        account_type (string): Type of account to open. Must be one of: 'checking' (personal checking), 'savings' (personal savings), 'business_checking', 'business_savings'
        account_class (string): The full official account class name

    Returns:
        Bank account opened successfully.
    """
    if not user_id or not account_type or not account_class:
        return "Error: Missing required parameters."
    valid_types = ["checking", "savings", "business_checking", "business_savings"]
    if account_type not in valid_types:
        return f"Error: Invalid account_type. Must be one of: {valid_types}"
    user_accounts = [acc for _, acc in ctx.items("accounts") if acc.get("user_id") == user_id]
    if not _eligible(user_accounts, account_type):
        return _NOT_MET
    account_id = deterministic_id(f"account:{user_id}:{account_type}:{account_class}")
    today = get_today_str()
    account_record = {
        "account_id": account_id,
        "user_id": user_id,
        "account_type": account_type,
        "account_class": account_class,
        "current_holdings": "0.00",
        "status": "OPEN",
        "date_opened": today,
    }
    if not add_to_db("accounts", account_id, account_record, db=ctx):
        return f"Failed to open account: Account ID '{account_id}' may already exist."
    return (
        f"Bank account opened successfully!\n"
        f"  - Account ID: {account_id}\n"
        f"  - User ID: {user_id}\n"
        f"  - Account Type: {account_type}\n"
        f"  - Account Class: {account_class}\n"
        f"  - Status: OPEN\n"
        f"  - Initial Balance: $0.00\n"
        f"  - Date Opened: {today}"
    )


def _early_closure_fee(account: dict[str, Any], balance: float) -> float | None:
    """The early-closure fee that applies (0.0 when none), or None when the balance
    cannot pay it."""
    account_level = account.get("level", "")
    account_class = account.get("class", "")
    date_opened_str = account.get("date_opened", "")
    config = None
    if account_class == "checking":
        config = PERSONAL_CHECKING_EARLY_CLOSURE.get(account_level)
    elif account_class == "savings":
        config = PERSONAL_SAVINGS_EARLY_CLOSURE.get(account_level)
    if config and date_opened_str:
        try:
            age = (get_now() - datetime.strptime(date_opened_str, "%m/%d/%Y")).days
            if age < config["window_days"]:
                if balance < config["fee"]:
                    return None
                return config["fee"]
        except ValueError:
            pass
    return 0.0


@KNOWLEDGE.discoverable_tool(write=True)
def close_bank_account_7392(
    ctx: Tau2Context,
    account_id: str,
    reason: str = "Customer requested closure",
    waive_early_closure_fee: bool = False,
) -> str:
    """Close a customer's bank account (checking or savings).

    Args:
        account_id (string): The ID of the bank account to close
        reason (string, optional): The reason for closing the account
        waive_early_closure_fee (boolean, optional): Whether to waive early closure fees

    Returns:
        Bank account closed successfully.
    """
    if not account_id:
        return "Error: Missing required parameter (account_id)."
    if not exists(ctx, "accounts", account_id):
        return f"Error: Account '{account_id}' not found."
    account = record(ctx, "accounts", account_id)
    if account.get("status") == "CLOSED":
        return f"Error: Account '{account_id}' is already closed."
    balance = account_balance(account)
    fee = 0.0 if waive_early_closure_fee else _early_closure_fee(account, balance)
    if fee is None:
        return "Error: Account unable to be closed."
    if balance - fee != 0:
        return f"Error: Account balance must be $0.00 before closing. Current balance: ${balance:.2f}"
    today = get_today_str()
    account["status"] = "CLOSED"
    account["date_closed"] = today
    account["closure_reason"] = reason
    account["early_closure_fee_waived"] = waive_early_closure_fee
    return (
        f"Bank account closed successfully!\n"
        f"  - Account ID: {account_id}\n"
        f"  - Account Type: {account.get('account_type', 'N/A')}\n"
        f"  - Account Class: {account.get('account_class', 'N/A')}\n"
        f"  - Status: CLOSED\n"
        f"  - Date Closed: {today}\n"
        f"  - Reason: {reason}\n"
        f"  - Early Closure Fee Waived: {'Yes' if waive_early_closure_fee else 'No'}"
    )


@KNOWLEDGE.discoverable_tool()
def get_all_user_accounts_by_user_id_3847(ctx: Tau2Context, user_id: str) -> str:
    """Retrieve all accounts (checking, savings, credit cards) for a customer.

    Args:
        user_id (string): The customer's unique identifier in the system

    Returns:
        User accounts retrieved successfully.
    """
    if not user_id:
        return "Error: Missing required parameter: user_id"
    accounts_result = query("accounts", f'{{"user_id": "{user_id}"}}', db=ctx)
    cc_result = query("credit_card_accounts", f'{{"user_id": "{user_id}"}}', db=ctx)
    result_parts = [
        "User accounts retrieved successfully.",
        "",
        "Executed: get_all_user_accounts_by_user_id_3847",
        f"Accounts for user {user_id}:",
        "",
        "Bank Accounts:",
        accounts_result if found(accounts_result) else "  No bank accounts found.",
        "\nCredit Card Accounts:",
        cc_result if found(cc_result) else "  No credit card accounts found.",
    ]
    return "\n".join(result_parts)


@KNOWLEDGE.discoverable_tool(write=True)
def transfer_funds_between_bank_accounts_7291(
    ctx: Tau2Context, source_account_id: str, destination_account_id: str, amount: float
) -> str:
    """Transfer funds from one bank account to another.

    Args:
        source_account_id (string): The account ID to transfer funds from
        destination_account_id (string): The account ID to transfer funds to
        amount (number): The amount to transfer in USD

    Returns:
        Funds transferred successfully.
    """
    if not source_account_id or not destination_account_id or amount is None:
        return "Error: Missing required parameters (source_account_id, destination_account_id, amount)."
    try:
        amount = float(amount)
    except (ValueError, TypeError):
        return f"Error: Invalid amount '{amount}'. Must be a number."
    if amount <= 0:
        return "Error: Transfer amount must be positive."
    if source_account_id == destination_account_id:
        return "Error: Source and destination accounts cannot be the same."
    if not exists(ctx, "accounts", source_account_id):
        return f"Error: Source account '{source_account_id}' not found."
    if not exists(ctx, "accounts", destination_account_id):
        return f"Error: Destination account '{destination_account_id}' not found."
    source = record(ctx, "accounts", source_account_id)
    if source.get("status") not in ("ACTIVE", "OPEN"):
        return f"Error: Source account '{source_account_id}' is not active."
    dest = record(ctx, "accounts", destination_account_id)
    if dest.get("status") not in ("ACTIVE", "OPEN"):
        return f"Error: Destination account '{destination_account_id}' is not active."
    source_balance = account_balance(source)
    if source_balance < amount:
        return (
            f"Error: Insufficient funds. Source account balance is ${source_balance:.2f}, "
            f"but transfer amount is ${amount:.2f}."
        )
    dest_balance = account_balance(dest)
    new_source = source_balance - amount
    new_dest = dest_balance + amount
    source["current_holdings"] = f"${new_source:.2f}"
    dest["current_holdings"] = f"${new_dest:.2f}"
    return (
        f"Transfer completed successfully!\n"
        f"  - Amount: ${amount:.2f}\n"
        f"  - From: {source_account_id} (new balance: ${new_source:.2f})\n"
        f"  - To: {destination_account_id} (new balance: ${new_dest:.2f})"
    )


def _transaction_date(item: tuple[str, dict[str, Any]]) -> datetime:
    date_str = str(item[1].get("date", ""))
    for fmt in ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y"):
        try:
            return datetime.strptime(date_str, fmt)
        except ValueError:
            continue
    return datetime.min


@KNOWLEDGE.discoverable_tool()
def get_bank_account_transactions_9173(ctx: Tau2Context, account_id: str) -> str:
    """Retrieve the transaction history for a bank account.

    Transactions are returned in reverse chronological order (most recent
    first).

    Args:
        account_id (string): The bank account ID to retrieve transactions for

    Returns:
        Bank account transactions retrieved successfully.
    """
    if not account_id:
        return "Error: Missing required parameter: account_id"
    if not exists(ctx, "accounts", account_id):
        return f"Error: Account '{account_id}' not found."
    txns = query_db("bank_account_transaction_history", db=ctx, return_ids=True, account_id=account_id)
    txns = sorted(txns, key=_transaction_date, reverse=True)  # stable: same-date records keep their order
    result_parts = [
        "Bank account transactions retrieved successfully.",
        "",
        "Executed: get_bank_account_transactions_9173",
        f"Transactions for account {account_id}:",
    ]
    if txns:
        formatted_lines = [f"Found {len(txns)} record(s) in 'bank_account_transaction_history':\n"]
        for i, (record_id, rec) in enumerate(txns, 1):
            formatted_lines.append(f"{i}. Record ID: {record_id}")
            for field, value in rec.items():
                formatted_lines.append(f"   {field}: {value}")
            formatted_lines.append("")
        result_parts.append("\n".join(formatted_lines))
    else:
        result_parts.append("\nNo transactions found for this account.")
    return "\n".join(result_parts)


__all__ = ["PERSONAL_CHECKING_EARLY_CLOSURE", "PERSONAL_SAVINGS_EARLY_CLOSURE"]
