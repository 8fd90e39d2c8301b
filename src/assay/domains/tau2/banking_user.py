"""tau2's banking_knowledge domain: the customer's tools (``KnowledgeUserTools``), on
the agent's database. Port of tau2-bench (Sierra Research, MIT).

The user's discoverable tools are actions in the real world (deposit a check, open a
referral link...). They run only after the agent has given them
(``give_discoverable_user_tool`` writes ``user_discoverable_tools``); each call is logged
in ``user_discoverable_tool_calls``.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from typing import Any

from .banking import MODULE
from .banking_models import (
    generate_application_id,
    generate_dispute_id,
    generate_referral_id,
    generate_referral_link_id,
    generate_transaction_id,
    generate_user_discoverable_tool_call_id,
    get_today_str,
)
from .banking_query import add_to_db, exists, parse_balance, query_database_tool, record
from .toolkit import Tau2Context, Tau2Toolkit

KNOWLEDGE_USER = Tau2Toolkit(
    "KnowledgeUserTools",
    caller="user",
    module=MODULE,
    order=(
        "apply_for_credit_card",
        "submit_referral",
        "call_discoverable_user_tool",
        "list_discoverable_user_tools",
        "request_human_agent_transfer",
        "submit_transaction",
    ),
)

VALID_CREDIT_CARD_TYPES = [
    "Bronze Rewards Card",
    "Business Bronze Rewards Card",
    "Business Gold Rewards Card",
    "Business Platinum Rewards Card",
    "Business Silver Rewards Card",
    "Crypto-Cash Back",
    "Diamond Elite Card",
    "EcoCard",
    "Gold Rewards Card",
    "Green Rewards Card",
    "Platinum Rewards Card",
    "Silver Rewards Card",
    "Silver Zoom Card",
]
#: Reward rate (%) by card type and category ("default" for the others).
CREDIT_CARD_REWARDS: dict[str, dict[str, float]] = {
    "Bronze Rewards Card": {"default": 1.0},
    "Silver Rewards Card": {"Travel": 4.0, "Software": 4.0, "default": 1.0},
    "Gold Rewards Card": {"default": 2.5},
    "Platinum Rewards Card": {"default": 10.0},
    "Business Bronze Rewards Card": {"default": 1.0},
    "Business Silver Rewards Card": {"Travel": 10.0, "Software": 10.0, "default": 1.0},
    "Green Rewards Card": {"Sustainable": 3.0, "default": 1.0},
    "Business Gold Rewards Card": {"Operations": 2.5, "default": 1.0},
    "Business Platinum Rewards Card": {"Travel": 4.0, "Software": 4.0, "Media": 4.0, "default": 1.5},
    "Silver Zoom Card": {"Transportation": 3.0, "default": 1.0},
    "Diamond Elite Card": {"default": 5.0},
    "EcoCard": {"Green": 5.0, "default": 1.0},
    "Crypto-Cash Back": {"default": 2.0},
}


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


# --- the user's discoverable tools --------------------------------------------------------


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


# --- the user's tools ---------------------------------------------------------------------


@KNOWLEDGE_USER.tool(write=True)
def apply_for_credit_card(
    ctx: Tau2Context,
    card_type: str,
    customer_name: str,
    annual_income: float,
    rho_bank_subscription: bool = False,
) -> str:
    """Apply for a credit card.

    Args:
        card_type: Type of credit card
        customer_name: Full legal name
        annual_income: Annual income in USD
        rho_bank_subscription: Whether user has Rho-Bank+ subscription
    """
    if card_type not in VALID_CREDIT_CARD_TYPES:
        return f"Error: Invalid card_type '{card_type}'. Must be one of: {VALID_CREDIT_CARD_TYPES}"
    try:
        annual_income = float(annual_income)
    except (TypeError, ValueError):
        return "Error: Invalid annual_income. Must be a number."
    application_id = generate_application_id(card_type, customer_name, annual_income, rho_bank_subscription)
    today = get_today_str()
    application = {
        "application_id": application_id,
        "card_type": card_type,
        "customer_name": customer_name,
        "annual_income": annual_income,
        "rho_bank_subscription": rho_bank_subscription,
        "status": "PENDING",
        "date": today,
    }
    if not add_to_db("credit_card_applications", application_id, application, db=ctx):
        return f"Failed to submit application: Record ID '{application_id}' may already exist."
    return (
        "Credit card application submitted:\n"
        "Your application has been successfully submitted. "
        "You will receive a decision within 5-7 business days via email."
    )


@KNOWLEDGE_USER.tool(write=True)
def submit_referral(ctx: Tau2Context, user_id: str, account_type: str) -> str:
    """Submit a referral request to refer someone to open an account.

    Args:
        user_id: Your user ID (the referrer)
        account_type: The type of account you are referring someone to open
    """
    referral_id = generate_referral_id(user_id, account_type)
    today = get_today_str()
    referral = {
        "referral_id": referral_id,
        "referrer_id": user_id,
        "referred_account_type": account_type,
        "referral_status": "NO_PROGRESS",
        "date": today,
    }
    if not add_to_db("referrals", referral_id, referral, db=ctx):
        return f"Failed to submit referral: Record ID '{referral_id}' may already exist."
    return (
        f"Referral request submitted successfully!\n"
        f"  - Referral ID: {referral_id}\n"
        f"  - Referrer ID: {user_id}\n"
        f"  - Account Type: {account_type}\n"
        f"  - Status: NO_PROGRESS\n"
        f"  - Date: {today}\n\n"
        f"Share your referral ID with the person you're referring. "
        f"They will need to use this when applying for their account."
    )


@KNOWLEDGE_USER.function
def query_database(ctx: Tau2Context, database_name: str, constraints: str = "{}") -> str:
    """Query a database with constraints.

    Args:
        database_name: Name of the database to query
        constraints: JSON string of field constraints
    """
    return query_database_tool(database_name, constraints, db=ctx)


@KNOWLEDGE_USER.tool(write=True)
def call_discoverable_user_tool(ctx: Tau2Context, discoverable_tool_name: str, arguments: str = "{}") -> str:
    """Call a tool that was given to you by the agent.

    Use this when the agent has instructed you to perform an action using
    a discoverable tool. The agent will have told you the tool name and arguments.

    This simulates you performing the action in the real world (e.g., opening
    a webpage, navigating to a section, clicking a button).

    Args:
        discoverable_tool_name: The name of the discoverable tool to call (e.g., "open_webpage")
        arguments: JSON string of arguments for the tool (e.g., '{"url": "https://example.com"}')

    Returns:
        The result of executing the discoverable tool
    """
    tools = KNOWLEDGE_USER.discoverable
    if discoverable_tool_name not in tools:
        return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
    try:  # every JSON number a float, as tau2 reads them
        args_dict = json.loads(arguments, parse_int=float)
    except json.JSONDecodeError as e:
        return f"Error: Invalid JSON in arguments: {e}"
    tool = tools[discoverable_tool_name]
    parameters = dict.fromkeys(list(inspect.signature(tool.fn).parameters)[1:])  # the bound method's
    for param_name in parameters:
        if param_name not in tool.signature.required:
            continue
        if param_name not in args_dict:
            return f"Error: Missing required parameter: {param_name}"
    for arg_name in args_dict:
        if arg_name not in parameters:
            return f"Error: Unexpected parameter: {arg_name}"
    try:
        return tool.fn(ctx, **tool.signature.check(args_dict))
    except TypeError as e:
        return f"Error: Invalid arguments for tool '{discoverable_tool_name}': {e}"


@KNOWLEDGE_USER.tool()
def list_discoverable_user_tools(ctx: Tau2Context) -> str:
    """List all tools that have been given to you by the agent.

    Use this to see what actions the agent has instructed you to perform.

    Returns:
        A list of tools that have been given to you
    """
    result = query_database_tool("user_discoverable_tools", "{}", db=ctx)
    if "No results found" in result:
        return "No tools have been given to you yet by the agent."
    return f"Tools given to you by the agent:\n{result}"


@KNOWLEDGE_USER.tool(write=True)
def request_human_agent_transfer(ctx: Tau2Context) -> str:
    """Request to be transferred to a human agent for assistance.

    Use this when you want to speak with a real human agent instead of
    the automated system. Each request will be logged and processed.

    Returns:
        Confirmation that your transfer request has been submitted
    """
    today = get_today_str()
    existing_requests = query_database_tool("human_transfer_requests", "{}", db=ctx)
    if "No records found" in existing_requests or "No results found" in existing_requests:
        request_count = 1
    else:
        request_count = existing_requests.count("request_id") + 1
    request_id = f"transfer_request_{request_count}"
    request = {
        "request_id": request_id,
        "request_number": request_count,
        "requested_at": today,
        "status": "PENDING",
    }
    add_to_db("human_transfer_requests", request_id, request, db=ctx)
    return f"Transfer request #{request_count} submitted.\nThe agent will process your request."


@KNOWLEDGE_USER.tool(write=True)
def submit_transaction(
    ctx: Tau2Context, user_id: str, credit_card_type: str, merchant_name: str, amount: float, category: str
) -> str:
    """Submit a credit card transaction.

    Args:
        user_id: Your user ID
        credit_card_type: Type of credit card used (e.g., "Bronze Rewards Card", "Gold Rewards Card")
        merchant_name: Name of the merchant where the purchase was made
        amount: Transaction amount in USD (e.g., 127.43)
        category: Transaction category (e.g., "Groceries", "Dining", "Travel", "Software", "Entertainment", "Utilities", "Shopping")
    """
    if credit_card_type not in CREDIT_CARD_REWARDS:
        available_cards = list(CREDIT_CARD_REWARDS.keys())
        return f"Error: Unknown credit card type '{credit_card_type}'. Available types: {available_cards}"
    transaction_id = generate_transaction_id(user_id, credit_card_type, merchant_name, amount, category)
    today = get_today_str()
    card_rewards = CREDIT_CARD_REWARDS[credit_card_type]
    reward_rate = card_rewards.get(category, card_rewards["default"])
    points_earned = int(amount * reward_rate)
    transaction = {
        "transaction_id": transaction_id,
        "user_id": user_id,
        "credit_card_type": credit_card_type,
        "merchant_name": merchant_name,
        "transaction_amount": f"${amount:.2f}",
        "transaction_date": today,
        "category": category,
        "status": "COMPLETED",
        "rewards_earned": f"{points_earned} points",
    }
    if not add_to_db("credit_card_transaction_history", transaction_id, transaction, db=ctx):
        return f"Failed to submit transaction: Record ID '{transaction_id}' may already exist."
    return (
        f"Transaction submitted successfully!\n"
        f"  - Transaction ID: {transaction_id}\n"
        f"  - User ID: {user_id}\n"
        f"  - Card Type: {credit_card_type}\n"
        f"  - Merchant: {merchant_name}\n"
        f"  - Amount: ${amount:.2f}\n"
        f"  - Category: {category}\n"
        f"  - Date: {today}\n"
        f"  - Rewards Earned: {points_earned} points ({reward_rate}% cashback rate)\n"
    )


__all__ = ["CREDIT_CARD_REWARDS", "KNOWLEDGE_USER", "VALID_CREDIT_CARD_TYPES"]
