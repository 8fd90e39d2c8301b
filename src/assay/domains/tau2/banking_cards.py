"""tau2's banking_knowledge domain: the agent's discoverable tools that manage issued
debit cards (close, freeze, fraud alerts, PINs, listing, temporary limits). Port of
tau2-bench (Sierra Research, MIT)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from .banking import KNOWLEDGE
from .banking_models import get_today_str
from .banking_query import exists, record
from .toolkit import Tau2Context

DEFAULT_ATM_LIMITS = {
    "blue account": 500,
    "green account": 600,
    "light blue account": 400,
    "green fee-free account": 500,
    "evergreen account": 750,
    "bluest account": 1500,
    "dark green account": 300,
    "gold years account": 600,
    "purple account": 1000,
}


@KNOWLEDGE.discoverable_tool(write=True)
def close_debit_card_4721(ctx: Tau2Context, card_id: str, reason: str) -> str:
    """Close or cancel a debit card permanently.

    Args:
        card_id (string): The debit card ID to close
        reason (string): Reason for closing: lost, stolen, fraud_suspected, damaged, no_longer_needed, or account_closing

    Returns:
        Debit card closed successfully.
    """
    if not card_id or not reason:
        return "Error: Missing required parameters. Required: card_id, reason."
    valid_reasons = ["lost", "stolen", "fraud_suspected", "damaged", "no_longer_needed", "account_closing"]
    if reason.lower() not in valid_reasons:
        return f"Error: Invalid reason. Must be one of: {valid_reasons}"
    reason = reason.lower()
    if not exists(ctx, "debit_cards", card_id):
        return f"Error: Debit card '{card_id}' not found."
    card = record(ctx, "debit_cards", card_id)
    if card.get("status") not in ["ACTIVE", "PENDING"]:
        return f"Error: Debit card '{card_id}' cannot be closed. Current status: {card.get('status')}. Only ACTIVE or PENDING cards can be closed."
    previous_status = card.get("status")
    card["status"] = "CLOSED"
    card["closed_date"] = get_today_str()
    card["closure_reason"] = reason
    result_parts = [
        "Debit Card Closed Successfully",
        f"Card ID: {card_id}",
        f"Previous Status: {previous_status}",
        "New Status: CLOSED",
        f"Closure Reason: {reason.replace('_', ' ').title()}",
        f"Closure Date: {get_today_str()}",
        "",
    ]
    if reason in ["lost", "stolen", "fraud_suspected"]:
        result_parts.append("IMPORTANT: This card has been immediately deactivated for security.")
        result_parts.append("Any pending transactions may still be processed.")
        if reason == "fraud_suspected":
            result_parts.append(
                "Please advise the customer to review recent transactions and file disputes for any unauthorized charges."
            )
            result_parts.append("Also recommend changing their online banking password.")
    result_parts.append("")
    result_parts.append(
        "Note: This card cannot be reactivated. If the customer needs a new card, they can order one through the standard ordering process."
    )
    result_parts.append(
        "Any recurring payments linked to this card will need to be updated with new payment information."
    )
    return "\n".join(result_parts)


@KNOWLEDGE.discoverable_tool(write=True)
def freeze_debit_card_3892(ctx: Tau2Context, card_id: str) -> str:
    """Temporarily freeze a debit card. The card can be unfrozen later.

    Args:
        card_id (string): The debit card ID to freeze

    Returns:
        Debit card frozen successfully.
    """
    if not card_id:
        return "Error: Missing required parameter: card_id."
    if not exists(ctx, "debit_cards", card_id):
        return f"Error: Debit card '{card_id}' not found."
    card = record(ctx, "debit_cards", card_id)
    if card.get("status") == "FROZEN":
        return f"Error: Debit card '{card_id}' is already frozen."
    if card.get("status") != "ACTIVE":
        return f"Error: Debit card '{card_id}' cannot be frozen. Current status: {card.get('status')}. Only ACTIVE cards can be frozen."
    card["status"] = "FROZEN"
    card["frozen_date"] = get_today_str()
    result_parts = [
        "Debit Card Frozen Successfully",
        f"Card ID: {card_id}",
        "Status: FROZEN",
        f"Frozen Date: {get_today_str()}",
        "",
        "While frozen:",
        "- All new purchase transactions will be declined",
        "- Recurring payments and subscriptions will be declined",
        "- Pending transactions already authorized may still process",
        "",
        "To unfreeze, the customer can call customer service or use the mobile app.",
        "If the card is confirmed lost or stolen, recommend closing the card permanently instead.",
    ]
    return "\n".join(result_parts)


@KNOWLEDGE.discoverable_tool(write=True)
def unfreeze_debit_card_3893(ctx: Tau2Context, card_id: str) -> str:
    """Unfreeze a previously frozen debit card.

    Args:
        card_id (string): The debit card ID to unfreeze

    Returns:
        Debit card unfrozen successfully.
    """
    if not card_id:
        return "Error: Missing required parameter: card_id."
    if not exists(ctx, "debit_cards", card_id):
        return f"Error: Debit card '{card_id}' not found."
    card = record(ctx, "debit_cards", card_id)
    if card.get("status") == "ACTIVE":
        return f"Error: Debit card '{card_id}' is already active."
    if card.get("status") != "FROZEN":
        return f"Error: Debit card '{card_id}' cannot be unfrozen. Current status: {card.get('status')}. Only FROZEN cards can be unfrozen."
    account_id = card.get("account_id")
    if account_id and exists(ctx, "accounts", account_id):
        account = ctx.read("accounts", account_id)
        if account is not None and account.get("status") != "OPEN":
            return f"Error: The linked checking account '{account_id}' is no longer open. Card cannot be unfrozen."
    card["status"] = "ACTIVE"
    card["unfrozen_date"] = get_today_str()
    result_parts = [
        "Debit Card Unfrozen Successfully",
        f"Card ID: {card_id}",
        "Status: ACTIVE",
        f"Unfrozen Date: {get_today_str()}",
        "",
        "The card is now active and ready to use immediately.",
        "All transactions will process normally.",
    ]
    return "\n".join(result_parts)


@KNOWLEDGE.discoverable_tool(write=True)
def clear_debit_card_fraud_alert_4892(ctx: Tau2Context, card_id: str, reason: str) -> str:
    """Clear a fraud alert or velocity block on a debit card.

    Args:
        card_id (string): The debit card ID to clear the alert/block for
        reason (string): Reason for clearing: 'customer_verified' (for fraud alerts after customer verification) or 'velocity_clear' (for velocity blocks after identity verification)

    Returns:
        Fraud alert/velocity block cleared successfully.
    """
    if not card_id:
        return "Error: Missing required parameter: card_id."
    if not reason:
        return "Error: Missing required parameter: reason."
    valid_reasons = ["customer_verified", "velocity_clear"]
    if reason not in valid_reasons:
        return f"Error: Invalid reason '{reason}'. Must be one of: {', '.join(valid_reasons)}"
    if not exists(ctx, "debit_cards", card_id):
        return f"Error: Debit card '{card_id}' not found."
    card = record(ctx, "debit_cards", card_id)
    if reason == "velocity_clear":
        if not card.get("velocity_blocked", False):
            return f"Error: Debit card '{card_id}' does not have an active velocity block."
        card["velocity_blocked"] = False
        card["velocity_cleared_date"] = get_today_str()
        result_parts = [
            "Velocity Block Cleared Successfully",
            f"Card ID: {card_id}",
            f"Cleared Date: {get_today_str()}",
            "",
            "The card is now unblocked and ready for normal use.",
            "The velocity monitoring will continue - if the same unusual patterns recur,",
            "the card may be blocked again automatically.",
        ]
        return "\n".join(result_parts)
    if not card.get("fraud_alert_active", False):
        return f"Error: Debit card '{card_id}' does not have an active fraud alert."
    if card.get("alert_source") == "bank_initiated":
        return "Error: BANK_INITIATED_ALERT - This fraud alert was initiated by the bank's fraud detection system and cannot be cleared by customer service agents. Please transfer the customer to the security team using transfer_to_human_agents."
    card["fraud_alert_active"] = False
    card["alert_source"] = None
    card["fraud_alert_cleared_date"] = get_today_str()
    result_parts = [
        "Fraud Alert Cleared Successfully",
        f"Card ID: {card_id}",
        f"Cleared Date: {get_today_str()}",
        "",
        "The fraud alert has been removed from the card.",
        "All transactions will process normally.",
        "",
        "Remind the customer to review recent transactions and report any unauthorized charges.",
    ]
    return "\n".join(result_parts)


@KNOWLEDGE.discoverable_tool()
def get_debit_cards_by_account_id_7823(ctx: Tau2Context, account_id: str) -> str:
    """Retrieve all debit cards associated with a checking account. Returns card details including status, issue reason, and expiration date.

    Args:
        account_id (string): The checking account ID to retrieve debit cards for

    Returns:
        Debit cards retrieved successfully.
    """
    if not account_id:
        return "Error: Missing required parameter 'account_id'."
    account = ctx.read("accounts", account_id)
    if account is None:
        return f"Error: Account '{account_id}' not found."
    if account.get("class", "").lower() not in ["checking", "business_checking"]:
        return f"Error: Account '{account_id}' is not a checking account. Debit cards are only available for checking accounts."
    account_cards = []
    for card_id, card in ctx.items("debit_cards"):
        if card.get("account_id") == account_id:
            card_info: dict[str, Any] = {"card_id": card_id}
            card_info.update(card)
            if "last_4_digits" in card_info and "card_number_last_4" not in card_info:
                card_info["card_number_last_4"] = card_info.pop("last_4_digits")
            if "issue_date" in card_info and "date_issued" not in card_info:
                card_info["date_issued"] = card_info.pop("issue_date")
            elif "created_date" in card_info and "date_issued" not in card_info:
                card_info["date_issued"] = card_info.pop("created_date")
            account_cards.append(card_info)
    if not account_cards:
        return f"No debit cards found for account '{account_id}'."
    account_cards.sort(key=lambda x: x.get("date_issued") or "", reverse=True)
    return json.dumps(account_cards, indent=2)


def _current_limit(card: dict[str, Any], account: dict[str, Any], limit_type: str) -> tuple[Any, str | None]:
    """The card's current limit of ``limit_type`` (ATM limits default by account level),
    or the error text."""
    if limit_type != "atm":
        return card.get("daily_purchase_limit"), None
    current = card.get("daily_atm_limit")
    if current is not None:
        return current, None
    account_level = account.get("level", "").lower()
    if "light green" in account_level:
        return None, (
            "Error: Light Green Account (teen checking) cards have policy-based limits that cannot be modified. "
            "The daily ATM withdrawal limit of $150 is fixed by account policy for safety reasons. The customer "
            "may request the parent/guardian to withdraw cash from their own account if needed."
        )
    current = DEFAULT_ATM_LIMITS.get(account_level)
    if current is None:
        return None, (
            f"Error: Could not determine the default ATM limit for account type '{account.get('level')}'. "
            "Please verify the account type."
        )
    return current, None


@KNOWLEDGE.discoverable_tool(write=True)
def request_temporary_debit_card_limit_increase_8374(
    ctx: Tau2Context, card_id: str, limit_type: str, new_limit: int
) -> str:
    """Request a temporary 24-hour increase to a debit card's daily ATM or purchase limit.

    Args:
        card_id (string): The debit card ID to increase limits for
        limit_type (string): Type of limit to increase: 'atm' for daily ATM withdrawal limit, 'purchase' for daily purchase limit
        new_limit (integer): The requested new temporary limit amount in dollars

    Returns:
        Temporary limit increase granted successfully.
    """
    if not card_id:
        return "Error: Missing required parameter: card_id."
    if not limit_type:
        return "Error: Missing required parameter: limit_type."
    if limit_type not in ["atm", "purchase"]:
        return f"Error: Invalid limit_type '{limit_type}'. Must be 'atm' or 'purchase'."
    if new_limit is None:
        return "Error: Missing required parameter: new_limit."
    try:
        limit = float(new_limit)
    except (ValueError, TypeError):
        return f"Error: new_limit must be an integer, got '{new_limit}'."
    if not limit.is_integer():
        return f"Error: new_limit must be an integer, got '{limit}'."
    requested = int(limit)
    if requested <= 0:
        return "Error: new_limit must be a positive amount."
    if not exists(ctx, "debit_cards", card_id):
        return f"Error: Debit card '{card_id}' not found."
    card = record(ctx, "debit_cards", card_id)
    if card.get("status") != "ACTIVE":
        return f"Error: Debit card '{card_id}' is not active. Current status: {card.get('status')}. Only ACTIVE cards can have limit increases."
    account_id = card.get("account_id")
    if not account_id or not exists(ctx, "accounts", account_id):
        return f"Error: Could not find linked account for debit card '{card_id}'."
    account = ctx.read("accounts", account_id) or {}
    if account.get("status") != "OPEN":
        return f"Error: The linked account '{account_id}' is not in good standing. Account status: {account.get('status')}."
    date_opened_str = account.get("date_opened")
    if date_opened_str:
        try:
            date_opened = datetime.strptime(date_opened_str, "%m/%d/%Y")
            age = (datetime.strptime(get_today_str(), "%m/%d/%Y") - date_opened).days
            if age < 60:
                return f"Error: Account must be at least 60 days old for a temporary limit increase. Account age: {age} days."
        except ValueError:
            pass
    limit_name = "Daily ATM Withdrawal Limit" if limit_type == "atm" else "Daily Purchase Limit"
    current_limit, error = _current_limit(card, account, limit_type)
    if error is not None:
        return error
    if current_limit is None:
        return f"Error: The card does not have a {limit_name.lower()} configured. This may be a restricted account type where limits are set by account policy and cannot be modified."
    max_allowed = int(current_limit * 1.5)
    if requested > max_allowed:
        return f"Error: Requested limit ${requested} exceeds the maximum allowed temporary increase. Maximum temporary limit is ${max_allowed} (150% of current ${current_limit} limit)."
    if requested <= current_limit:
        return (
            f"Error: Requested limit ${requested} is not higher than the current limit of ${current_limit}."
        )
    card["daily_atm_limit" if limit_type == "atm" else "daily_purchase_limit"] = requested
    card[f"temporary_{limit_type}_limit_increase"] = True
    card[f"original_{limit_type}_limit"] = current_limit
    card[f"temporary_{limit_type}_limit_expires"] = get_today_str()
    result_parts = [
        f"Temporary {limit_name} Increase Granted Successfully",
        f"Card ID: {card_id}",
        f"Previous Limit: ${current_limit}",
        f"New Temporary Limit: ${requested}",
        f"Increase Amount: ${requested - current_limit}",
        "",
        "Important Information:",
        "- This temporary increase expires in 24 hours",
        f"- After expiration, the limit will revert to ${current_limit}",
        "- Only one temporary increase is allowed per 24-hour period",
        "",
        "Note: If the customer is at a third-party (non-Rho-Bank) ATM, that ATM may have its own",
        "per-transaction or daily limits that Rho-Bank cannot override. The customer may need to",
        "use a Rho-Bank ATM or make multiple smaller withdrawals at third-party ATMs.",
    ]
    return "\n".join(result_parts)


__all__ = ["DEFAULT_ATM_LIMITS"]
