"""tau2's banking_knowledge domain: the customer's tools (``KnowledgeUserTools``), on
the agent's database. Port of tau2-bench (Sierra Research, MIT). The customer's
discoverable tools are in :mod:`.banking_user_actions`.
"""

from __future__ import annotations

import inspect
import json

from .banking import MODULE
from .banking_models import (
    generate_application_id,
    generate_referral_id,
    generate_transaction_id,
    get_today_str,
)
from .banking_query import add_to_db, query_database_tool
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


# --- the user's discoverable tools --------------------------------------------------------


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
