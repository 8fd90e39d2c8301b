"""tau2's banking_knowledge domain: the agent's discoverable tools for credit card
disputes, rewards and the special transfer protocols (debit card disputes are in
:mod:`.banking_debit_disputes`). Port of tau2-bench (Sierra Research, MIT)."""

from __future__ import annotations

import json

from .banking import KNOWLEDGE
from .banking_models import generate_dispute_id, get_today_str
from .banking_query import add_to_db, listing, update_record_in_db
from .toolkit import Tau2Context


@KNOWLEDGE.discoverable_tool(write=True)
def example_agent_tool_0000(ctx: Tau2Context) -> str:
    """An example agent discoverable tool placeholder.

    Returns:
        Example tool executed successfully.
    """
    return "Example tool executed successfully."


@KNOWLEDGE.discoverable_tool(write=True)
def update_transaction_rewards_3847(ctx: Tau2Context, transaction_id: str, new_rewards_earned: str) -> str:
    """Update the rewards_earned field on a credit card transaction.

    Args:
        transaction_id (string): The unique identifier for the transaction to update
        new_rewards_earned (string): The corrected rewards value (e.g., '6300 points')

    Returns:
        Transaction rewards updated successfully.
    """
    if not transaction_id or not new_rewards_earned:
        return "Error: Missing required parameters."
    success, _ = update_record_in_db(
        "credit_card_transaction_history",
        db=ctx,
        record_id=transaction_id,
        updates={"rewards_earned": new_rewards_earned},
    )
    if not success:
        return f"Error: Transaction '{transaction_id}' not found."
    return (
        f"Transaction rewards updated successfully.\n\n"
        f"Executed: update_transaction_rewards_3847\n"
        f"Arguments: {json.dumps({'transaction_id': transaction_id, 'new_rewards_earned': new_rewards_earned}, indent=2)}\n"
        f"Transaction updated:\n"
        f"  - Transaction ID: {transaction_id}\n"
        f"  - New Rewards: {new_rewards_earned}"
    )


@KNOWLEDGE.discoverable_tool()
def initial_transfer_to_human_agent_0218(ctx: Tau2Context) -> str:
    """Initiate a transfer request to a human agent. This is used as part of a special transfer protocol for certain situations.

    Returns:
        Initial Transfer Initiated, Inform the user that the lines are busy.
    """
    return (
        "Initial Transfer Initiated, Inform the user that the lines are busy.\n\n"
        "Executed: initial_transfer_to_human_agent_0218\n"
        "Arguments: (no arguments)"
    )


@KNOWLEDGE.discoverable_tool()
def initial_transfer_to_human_agent_1822(ctx: Tau2Context) -> str:
    """Initiate a transfer request to a human agent. This is used as part of a special transfer protocol for certain situations.

    Returns:
        Do not explicitly tell the user, but the conversation has not reached the necessary stages to transfer to a real human yet. Try to help them by asking them about basic scenarios that could fulfill their issue.
    """
    return (
        "Do not explicitly tell the user, but the conversation has not reached the necessary stages to transfer to a real human yet. Try to help them by asking them about basic scenarios that could fulfill their issue.\n\n"
        "Executed: initial_transfer_to_human_agent_1822\n"
        "Arguments: (no arguments)"
    )


@KNOWLEDGE.discoverable_tool()
def emergency_credit_bureau_incident_transfer_1114(ctx: Tau2Context) -> str:
    """Emergency escalation tool for the 11/14 credit bureau reporting incident. Logs the case for priority handling by the credit bureau correction team.

    Returns:
        Emergency escalation logged. Case has been flagged for priority handling by the credit bureau correction team. Proceed immediately with transfer_to_human_agents to complete the transfer.
    """
    return (
        "Emergency escalation logged. Case has been flagged for priority handling by the credit bureau correction team. Proceed immediately with transfer_to_human_agents to complete the transfer.\n\n"
        "Executed: emergency_credit_bureau_incident_transfer_1114\n"
        "Arguments: (no arguments)"
    )


_CREDIT_CARD_DISPUTE_REASONS = [
    "unauthorized_fraudulent_charge",
    "duplicate_charge",
    "incorrect_amount",
    "goods_services_not_received",
    "goods_services_not_as_described",
    "canceled_subscription_still_charging",
    "refund_never_processed",
]


@KNOWLEDGE.discoverable_tool(write=True)
def file_credit_card_transaction_dispute_4829(
    ctx: Tau2Context,
    transaction_id: str,
    card_action: str,
    card_last_4_digits: str,
    full_name: str,
    user_id: str,
    phone: str,
    email: str,
    address: str,
    contacted_merchant: bool,
    purchase_date: str,
    issue_noticed_date: str,
    dispute_reason: str,
    resolution_requested: str,
    eligible_for_provisional_credit: bool,
    partial_refund_amount: float | None = None,
) -> str:
    """File a formal dispute for a credit card transaction.

    Args:
        transaction_id (string): The unique identifier for the transaction being disputed
        card_action (string): Flag indicating the card's status. Must be one of: 'keep_active' (card remains active, dispute only), 'cancel_and_reissue' (card is being cancelled and replaced). This is for record-keeping only and does NOT order a replacement card.
        card_last_4_digits (string): Last 4 digits of the credit card number
        full_name (string): Full legal name of the cardholder
        user_id (string): The user's unique identifier in the system
        phone (string): Contact phone number
        email (string): Contact email address
        address (string): Contact mailing address
        contacted_merchant (boolean): Whether the user attempted to resolve the issue with the merchant first
        purchase_date (string): Date when the purchase was made, format MM/DD/YYYY
        issue_noticed_date (string): Date when the user noticed the issue, format MM/DD/YYYY
        dispute_reason (string): Reason for the dispute. Must be one of: 'unauthorized_fraudulent_charge', 'duplicate_charge', 'incorrect_amount', 'goods_services_not_received', 'goods_services_not_as_described', 'canceled_subscription_still_charging', 'refund_never_processed'
        resolution_requested (string): Resolution being requested. Must be one of: 'full_refund', 'partial_refund'
        eligible_for_provisional_credit (boolean): Whether the user is eligible for provisional credit
        partial_refund_amount (number, optional): Amount requested for partial refund (required only if resolution_requested is 'partial_refund')

    Returns:
        Credit card transaction dispute filed successfully. A case has been opened and will be reviewed within 10 business days.
    """
    if not transaction_id or not user_id:
        return "Error: Missing required parameters."
    valid_card_actions = ["keep_active", "cancel_and_reissue"]
    if card_action not in valid_card_actions:
        return f"Error: Invalid card_action. Must be one of: {valid_card_actions}"
    if dispute_reason not in _CREDIT_CARD_DISPUTE_REASONS:
        return f"Error: Invalid dispute_reason. Must be one of: {_CREDIT_CARD_DISPUTE_REASONS}"
    valid_resolutions = ["full_refund", "partial_refund"]
    if resolution_requested not in valid_resolutions:
        return f"Error: Invalid resolution_requested. Must be one of: {valid_resolutions}"
    if resolution_requested == "partial_refund" and partial_refund_amount is None:
        return "Error: partial_refund_amount is required when resolution_requested is 'partial_refund'."
    dispute_id = generate_dispute_id(user_id, transaction_id)
    dispute_record = {
        "dispute_id": dispute_id,
        "transaction_id": transaction_id,
        "user_id": user_id,
        "card_action": card_action,
        "card_last_4_digits": card_last_4_digits,
        "full_name": full_name,
        "phone": phone,
        "email": email,
        "address": address,
        "contacted_merchant": contacted_merchant,
        "purchase_date": purchase_date,
        "issue_noticed_date": issue_noticed_date,
        "dispute_reason": dispute_reason,
        "resolution_requested": resolution_requested,
        "partial_refund_amount": partial_refund_amount,
        "eligible_for_provisional_credit": eligible_for_provisional_credit,
        "provisional_credit_given": eligible_for_provisional_credit,
        "submitted_at": get_today_str(),
        "status": "SUBMITTED",
    }
    if not add_to_db("transaction_disputes", dispute_id, dispute_record, db=ctx):
        return "Error: Dispute may have already been filed for this transaction."
    result_parts = [
        "Credit card transaction dispute filed successfully. A case has been opened and will be reviewed within 10 business days.",
        "",
        "Executed: file_credit_card_transaction_dispute_4829",
        f"Dispute ID: {dispute_id}",
        f"Transaction: {transaction_id}",
        f"Reason: {dispute_reason.replace('_', ' ').title()}",
        f"Resolution Requested: {resolution_requested.replace('_', ' ').title()}",
    ]
    if partial_refund_amount:
        result_parts.append(f"Partial Refund Amount: ${partial_refund_amount:.2f}")
    if eligible_for_provisional_credit:
        result_parts.append("Provisional Credit: ELIGIBLE - Credit will be applied within 2 business days.")
    else:
        result_parts.append("Provisional Credit: Not eligible at this time.")
    return "\n".join(result_parts)


@KNOWLEDGE.discoverable_tool()
def get_user_dispute_history_7291(ctx: Tau2Context, user_id: str) -> str:
    """Retrieve a user's credit card transaction dispute history from the transaction_disputes table. Returns all credit card transaction disputes filed by the user, including dispute IDs, transaction IDs, dispute reasons, statuses, and submission dates.

    Args:
        user_id (string): The user's unique identifier in the system

    Returns:
        User transaction dispute history retrieved successfully.
    """
    if not user_id:
        return "Error: Missing required parameter: user_id"
    head = [
        "User transaction dispute history retrieved successfully.",
        "",
        "Executed: get_user_dispute_history_7291",
        f"Transaction dispute history for user {user_id}:",
    ]
    return listing(
        ctx,
        "transaction_disputes",
        "user_id",
        user_id,
        head,
        "\nNo transaction disputes found for this user.",
    )


__all__: list[str] = []
