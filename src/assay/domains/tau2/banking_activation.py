"""tau2's banking_knowledge domain: the agent's discoverable tools that activate debit
cards (new, replacement, reissued) and set their PINs. Port of tau2-bench (Sierra
Research, MIT)."""

from __future__ import annotations

from typing import Any

from .banking import KNOWLEDGE
from .banking_models import get_today_str
from .banking_query import exists, record, validate_pin
from .toolkit import Tau2Context

_ACTIVATION_TOOL = {
    "new_account": "activate_debit_card_8291",
    "first_card": "activate_debit_card_8291",
    "lost": "activate_debit_card_8292",
    "stolen": "activate_debit_card_8292",
    "fraud": "activate_debit_card_8292",
    "expired": "activate_debit_card_8293",
    "damaged": "activate_debit_card_8293",
    "upgrade": "activate_debit_card_8293",
    "bank_reissue": "activate_debit_card_8293",
}


def _activation_error(
    ctx: Tau2Context,
    card_id: Any,
    last_4_digits: Any,
    expiration_date: Any,
    cvv: Any,
    pin: Any,
    allowed: list[str],
    tool_name: str,
) -> str | None:
    """tau2's checks common to the three activations (``_validate_activation_common``)."""
    if not all([card_id, last_4_digits, expiration_date, cvv, pin]):
        return (
            "Error: Missing required parameters. Required: card_id, last_4_digits, expiration_date, cvv, pin."
        )
    pin_error = validate_pin(pin)
    if pin_error:
        return f"Error: {pin_error}"
    if not cvv.isdigit() or len(cvv) != 3:
        return "Error: CVV must be exactly 3 digits."
    if not last_4_digits.isdigit() or len(last_4_digits) != 4:
        return "Error: Last 4 digits must be exactly 4 digits."
    if not exists(ctx, "debit_cards", card_id):
        return f"Error: Debit card '{card_id}' not found."
    card = record(ctx, "debit_cards", card_id)
    issue_reason = card.get("issue_reason", "new_account")
    if issue_reason not in allowed:
        correct_tool = _ACTIVATION_TOOL.get(issue_reason, "unknown")
        return f"Error: Wrong activation tool. This card has issue_reason='{issue_reason}'. Please use {correct_tool} instead of {tool_name}."
    if card.get("status") == "ACTIVE":
        return f"Error: Debit card '{card_id}' is already active."
    if card.get("status") != "PENDING":
        return f"Error: Debit card '{card_id}' cannot be activated. Current status: {card.get('status')}. Only PENDING cards can be activated."
    if card.get("last_4_digits") != last_4_digits:
        return "Error: Card verification failed. The last 4 digits do not match our records."
    account_id = card.get("account_id")
    if account_id and exists(ctx, "accounts", account_id):
        account = ctx.read("accounts", account_id)
        if account is not None and account.get("status") != "OPEN":
            return f"Error: The linked checking account '{account_id}' is no longer open. Card cannot be activated."
    return None


def _activate(
    ctx: Tau2Context, card_id: Any, new_status: str, stamp: str, why: str
) -> tuple[dict[str, Any], list[str]]:
    """Activate the card and move the account's other active cards to ``new_status``
    (``stamp``: the date field set on them; ``why``: their deactivation reason)."""
    card = record(ctx, "debit_cards", card_id)
    account_id = card.get("account_id")
    card["status"] = "ACTIVE"
    card["activated_date"] = get_today_str()
    moved = []
    for other_id, other in ctx.items("debit_cards"):
        if other_id != card_id and other.get("account_id") == account_id and other.get("status") == "ACTIVE":
            other = record(ctx, "debit_cards", other_id)
            other["status"] = new_status
            other[stamp] = get_today_str()
            other["deactivation_reason"] = why
            moved.append(other_id)
    return card, moved


@KNOWLEDGE.discoverable_tool(write=True)
def activate_debit_card_8291(
    ctx: Tau2Context, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
) -> str:
    """Activate a NEW debit card for a customer. Use ONLY for first-time cards on a checking account (issue_reason = 'new_account' or 'first_card'). For replacement or reissued cards, use the appropriate variant.

    Args:
        card_id (string): The debit card ID to activate
        last_4_digits (string): Last 4 digits of the card number (for verification)
        expiration_date (string): Card expiration date in MM/YY format
        cvv (string): 3-digit CVV from the back of the card
        pin (string): 4-digit PIN chosen by the customer

    Returns:
        New debit card activated successfully.
    """
    allowed = ["new_account", "first_card"]
    error = _activation_error(
        ctx, card_id, last_4_digits, expiration_date, cvv, pin, allowed, "activate_debit_card_8291"
    )
    if error:
        return error
    _, moved = _activate(ctx, card_id, "DEACTIVATED", "deactivated_date", "New card activated")
    result_parts = [
        "New Debit Card Activation Successful",
        f"Card ID: {card_id}",
        "Status: ACTIVE",
        f"Activation Date: {get_today_str()}",
        "",
        "Your card is now ready to use at any ATM or point of sale terminal.",
        "For security, please sign the back of your card.",
    ]
    if moved:
        result_parts.append(f"\nNote: Previous card(s) have been deactivated: {', '.join(moved)}")
    return "\n".join(result_parts)


@KNOWLEDGE.discoverable_tool(write=True)
def activate_debit_card_8292(
    ctx: Tau2Context, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
) -> str:
    """Activate a REPLACEMENT debit card. Use ONLY for cards replacing lost, stolen, or fraud-suspected cards (issue_reason = 'lost', 'stolen', or 'fraud'). For new or reissued cards, use the appropriate variant.

    Args:
        card_id (string): The debit card ID to activate
        last_4_digits (string): Last 4 digits of the card number (for verification)
        expiration_date (string): Card expiration date in MM/YY format
        cvv (string): 3-digit CVV from the back of the card
        pin (string): 4-digit PIN chosen by the customer

    Returns:
        Replacement debit card activated successfully.
    """
    allowed = ["lost", "stolen", "fraud"]
    error = _activation_error(
        ctx, card_id, last_4_digits, expiration_date, cvv, pin, allowed, "activate_debit_card_8292"
    )
    if error:
        return error
    issue_reason = record(ctx, "debit_cards", card_id).get("issue_reason", "lost")
    why = f"Replacement card activated ({issue_reason})"
    _, moved = _activate(ctx, card_id, "DEACTIVATED", "deactivated_date", why)
    result_parts = [
        "Replacement Debit Card Activation Successful",
        f"Card ID: {card_id}",
        f"Replacement Reason: {issue_reason.replace('_', ' ').title()}",
        "Status: ACTIVE",
        f"Activation Date: {get_today_str()}",
        "",
        "Your replacement card is now ready to use.",
        "",
        "IMPORTANT SECURITY REMINDERS:",
        "- Please review your recent transactions for any unauthorized charges",
        "- Report any suspicious activity immediately",
    ]
    if issue_reason == "fraud":
        result_parts.append("- Since fraud was suspected, we recommend changing your online banking password")
    if moved:
        result_parts.append(f"\nPrevious card(s) have been deactivated for security: {', '.join(moved)}")
    return "\n".join(result_parts)


@KNOWLEDGE.discoverable_tool(write=True)
def activate_debit_card_8293(
    ctx: Tau2Context, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
) -> str:
    """Activate a REISSUED debit card. Use ONLY for cards reissued due to expiration, damage, design upgrade, or bank-initiated replacement (issue_reason = 'expired', 'damaged', 'upgrade', or 'bank_reissue'). For new or replacement cards, use the appropriate variant.

    Args:
        card_id (string): The debit card ID to activate
        last_4_digits (string): Last 4 digits of the card number (for verification)
        expiration_date (string): Card expiration date in MM/YY format
        cvv (string): 3-digit CVV from the back of the card
        pin (string): 4-digit PIN chosen by the customer

    Returns:
        Reissued debit card activated successfully.
    """
    allowed = ["expired", "damaged", "upgrade", "bank_reissue"]
    error = _activation_error(
        ctx, card_id, last_4_digits, expiration_date, cvv, pin, allowed, "activate_debit_card_8293"
    )
    if error:
        return error
    issue_reason = record(ctx, "debit_cards", card_id).get("issue_reason", "expired")
    why = f"Reissued card activated ({issue_reason})"
    _, moved = _activate(ctx, card_id, "GRACE_PERIOD", "grace_period_ends", why)
    result_parts = [
        "Reissued Debit Card Activation Successful",
        f"Card ID: {card_id}",
        f"Reissue Reason: {issue_reason.replace('_', ' ').title()}",
        "Status: ACTIVE",
        f"Activation Date: {get_today_str()}",
        "",
        "Your reissued card is now ready to use.",
    ]
    if moved:
        result_parts.append(
            f"\nNote: Your previous card(s) ({', '.join(moved)}) will remain active for 24 hours as a grace period."
        )
        result_parts.append("After 24 hours, the old card(s) will be automatically deactivated.")
    if issue_reason in ["expired", "bank_reissue"]:
        result_parts.append(
            "\nReminder: If your card number changed, please update any recurring payments with your new card details."
        )
    return "\n".join(result_parts)


_PIN_CHANGED = [
    "",
    "The new PIN is effective immediately.",
    "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.",
    "",
    "Security reminder: Never share your PIN with anyone.",
]


@KNOWLEDGE.discoverable_tool(write=True)
def reset_debit_card_pin_6284(ctx: Tau2Context, card_id: str, last_4_digits: str, new_pin: str) -> str:
    """Reset a debit card PIN when the customer has forgotten it.

    Args:
        card_id (string): The debit card ID to reset PIN for
        last_4_digits (string): Last 4 digits of the card number (for verification)
        new_pin (string): The new 4-digit PIN chosen by the customer

    Returns:
        Debit card PIN reset successfully.
    """
    if not all([card_id, last_4_digits, new_pin]):
        return "Error: Missing required parameters. Required: card_id, last_4_digits, new_pin."
    if not last_4_digits.isdigit() or len(last_4_digits) != 4:
        return "Error: Last 4 digits must be exactly 4 digits."
    pin_error = validate_pin(new_pin)
    if pin_error:
        return f"Error: {pin_error}"
    if not exists(ctx, "debit_cards", card_id):
        return f"Error: Debit card '{card_id}' not found."
    card = record(ctx, "debit_cards", card_id)
    if card.get("last_4_digits") != last_4_digits:
        return "Error: Card verification failed. The last 4 digits do not match our records."
    if card.get("status") != "ACTIVE":
        return f"Error: Cannot reset PIN. Card status is {card.get('status')}. Only ACTIVE cards can have their PIN reset."
    card["pin_last_changed"] = get_today_str()
    card["pin_locked"] = False
    card["pin_attempts_remaining"] = 3
    result_parts = [
        "Debit Card PIN Reset Successfully",
        f"Card ID: {card_id}",
        f"PIN Changed: {get_today_str()}",
        "",
        "The new PIN is effective immediately.",
        "Your card has been unlocked and is ready to use.",
        *_PIN_CHANGED[2:],
    ]
    return "\n".join(result_parts)


@KNOWLEDGE.discoverable_tool(write=True)
def change_debit_card_pin_6285(ctx: Tau2Context, card_id: str, current_pin: str, new_pin: str) -> str:
    """Change a debit card PIN when the customer knows their current PIN.

    Args:
        card_id (string): The debit card ID to change PIN for
        current_pin (string): The customer's current 4-digit PIN
        new_pin (string): The new 4-digit PIN chosen by the customer

    Returns:
        Debit card PIN changed successfully.
    """
    if not all([card_id, current_pin, new_pin]):
        return "Error: Missing required parameters. Required: card_id, current_pin, new_pin."
    if not current_pin.isdigit() or len(current_pin) != 4:
        return "Error: Current PIN must be exactly 4 digits."
    pin_error = validate_pin(new_pin)
    if pin_error:
        return f"Error: {pin_error}"
    if current_pin == new_pin:
        return "Error: New PIN must be different from current PIN."
    if not exists(ctx, "debit_cards", card_id):
        return f"Error: Debit card '{card_id}' not found."
    card = record(ctx, "debit_cards", card_id)
    if card.get("status") != "ACTIVE":
        return f"Error: Cannot change PIN. Card status is {card.get('status')}. Only ACTIVE cards can have their PIN changed."
    card["pin_last_changed"] = get_today_str()
    result_parts = [
        "Debit Card PIN Changed Successfully",
        f"Card ID: {card_id}",
        f"PIN Changed: {get_today_str()}",
    ]
    return "\n".join([*result_parts, *_PIN_CHANGED])


__all__: list[str] = []
