"""tau2's banking_knowledge domain: the agent's discoverable tools for debit card
transaction disputes (filing one, a user's debit dispute history). Port of tau2-bench
(Sierra Research, MIT)."""

from __future__ import annotations

from .banking import KNOWLEDGE
from .banking_models import generate_dispute_id, get_today_str
from .banking_query import add_to_db, listing
from .toolkit import Tau2Context

_DEBIT_DISPUTE_CATEGORIES = [
    "unauthorized_transaction",
    "atm_cash_discrepancy",
    "atm_deposit_not_credited",
    "duplicate_charge",
    "incorrect_amount",
    "goods_services_not_received",
    "recurring_charge_after_cancellation",
    "card_present_fraud",
    "card_not_present_fraud",
]
_DEBIT_TRANSACTION_TYPES = [
    "pin_purchase",
    "signature_purchase",
    "online_purchase",
    "atm_withdrawal",
    "atm_deposit",
    "recurring_payment",
    "person_to_person",
]


@KNOWLEDGE.discoverable_tool(write=True)
def file_debit_card_transaction_dispute_6281(
    ctx: Tau2Context,
    transaction_id: str,
    account_id: str,
    card_id: str,
    user_id: str,
    dispute_category: str,
    transaction_date: str,
    discovery_date: str,
    disputed_amount: float,
    transaction_type: str,
    card_in_possession: bool,
    pin_compromised: str,
    contacted_merchant: bool,
    police_report_filed: bool,
    written_statement_provided: bool,
    provisional_credit_eligible: bool,
    customer_max_liability_amount: float,
    card_action: str,
) -> str:
    """File a formal dispute for a debit card transaction under Regulation E. Debit card disputes affect actual bank funds and have different liability rules based on reporting timing.

    Args:
        transaction_id (string): The unique identifier for the transaction being disputed
        account_id (string): The checking account ID linked to the debit card
        card_id (string): The debit card ID
        user_id (string): The user's unique identifier in the system
        dispute_category (string): Category of the dispute. Must be one of: 'unauthorized_transaction', 'atm_cash_discrepancy', 'atm_deposit_not_credited', 'duplicate_charge', 'incorrect_amount', 'goods_services_not_received', 'recurring_charge_after_cancellation', 'card_present_fraud', 'card_not_present_fraud'
        transaction_date (string): Date when the transaction occurred, format MM/DD/YYYY
        discovery_date (string): Date when the user first noticed the issue, format MM/DD/YYYY
        disputed_amount (number): The dollar amount being disputed
        transaction_type (string): Type of transaction. Must be one of: 'pin_purchase', 'signature_purchase', 'online_purchase', 'atm_withdrawal', 'atm_deposit', 'recurring_payment', 'person_to_person'
        card_in_possession (boolean): Whether the customer still has their physical debit card in their possession
        pin_compromised (string): Whether the customer's PIN may have been compromised. Must be one of: 'yes_shared', 'yes_observed', 'no', 'unknown'
        contacted_merchant (boolean): Whether the user attempted to resolve the issue with the merchant first
        police_report_filed (boolean): Whether a police report has been filed (recommended for fraud over $500)
        written_statement_provided (boolean): Whether the customer has provided a written statement describing what happened (required for Reg E provisional credit)
        provisional_credit_eligible (boolean): Whether the user is eligible for provisional credit based on Debit Card Provisional Credit Guidelines
        customer_max_liability_amount (number): The maximum dollar amount the customer could be liable for based on Regulation E reporting timing rules and the disputed amount. Use -1 for unlimited liability.
        card_action (string): Action to take on the card. Must be one of: 'keep_active', 'freeze_pending_investigation', 'close_and_reissue'

    Returns:
        Debit card transaction dispute filed successfully. A case has been opened and provisional credit determination has been recorded.
    """
    required = [
        transaction_id,
        account_id,
        card_id,
        user_id,
        dispute_category,
        transaction_date,
        discovery_date,
        disputed_amount,
        transaction_type,
        pin_compromised,
        card_action,
    ]
    if not all(required):
        return "Error: Missing required parameters."
    if customer_max_liability_amount is None:
        return "Error: customer_max_liability_amount is required."
    if (
        card_in_possession is None
        or contacted_merchant is None
        or police_report_filed is None
        or written_statement_provided is None
    ):
        return "Error: card_in_possession, contacted_merchant, police_report_filed, and written_statement_provided are required boolean fields."
    if dispute_category not in _DEBIT_DISPUTE_CATEGORIES:
        return f"Error: Invalid dispute_category. Must be one of: {_DEBIT_DISPUTE_CATEGORIES}"
    if transaction_type not in _DEBIT_TRANSACTION_TYPES:
        return f"Error: Invalid transaction_type. Must be one of: {_DEBIT_TRANSACTION_TYPES}"
    valid_pin_statuses = ["yes_shared", "yes_observed", "no", "unknown"]
    if pin_compromised not in valid_pin_statuses:
        return f"Error: Invalid pin_compromised. Must be one of: {valid_pin_statuses}"
    valid_card_actions = ["keep_active", "freeze_pending_investigation", "close_and_reissue"]
    if card_action not in valid_card_actions:
        return f"Error: Invalid card_action. Must be one of: {valid_card_actions}"
    if disputed_amount <= 0:
        return "Error: disputed_amount must be a positive number."
    dispute_id = generate_dispute_id(user_id, transaction_id)
    is_fraud_category = dispute_category in [
        "unauthorized_transaction",
        "card_present_fraud",
        "card_not_present_fraud",
    ]
    pin_shared_voluntarily = pin_compromised == "yes_shared"
    dispute_record = {
        "dispute_id": dispute_id,
        "transaction_id": transaction_id,
        "account_id": account_id,
        "card_id": card_id,
        "user_id": user_id,
        "dispute_category": dispute_category,
        "transaction_date": transaction_date,
        "discovery_date": discovery_date,
        "disputed_amount": disputed_amount,
        "transaction_type": transaction_type,
        "card_in_possession": card_in_possession,
        "pin_compromised": pin_compromised,
        "contacted_merchant": contacted_merchant,
        "police_report_filed": police_report_filed,
        "written_statement_provided": written_statement_provided,
        "provisional_credit_eligible": provisional_credit_eligible,
        "provisional_credit_issued": provisional_credit_eligible,
        "provisional_credit_amount": disputed_amount if provisional_credit_eligible else None,
        "customer_max_liability_amount": customer_max_liability_amount,
        "card_action": card_action,
        "is_fraud_category": is_fraud_category,
        "pin_shared_voluntarily": pin_shared_voluntarily,
        "submitted_at": get_today_str(),
        "status": "OPEN",
    }
    if not add_to_db("debit_card_disputes", dispute_id, dispute_record, db=ctx):
        return "Error: Dispute may have already been filed for this transaction."
    result_parts = [
        f"Dispute ID: {dispute_id}",
        f"Transaction: {transaction_id}",
        f"Account: {account_id}",
        f"Category: {dispute_category.replace('_', ' ').title()}",
        f"Disputed Amount: ${disputed_amount:.2f}",
        f"Card Action: {card_action.replace('_', ' ').title()}",
    ]
    if provisional_credit_eligible:
        result_parts.append(
            f"Provisional Credit: ISSUED - ${disputed_amount:.2f} credited within 10 business days per Regulation E."
        )
    else:
        result_parts.append(
            "Provisional Credit: Not eligible - see Debit Card Provisional Credit Guidelines for details."
        )
    if pin_shared_voluntarily:
        result_parts.append(
            "WARNING: Customer indicated PIN was shared voluntarily. This may affect liability determination."
        )
    if is_fraud_category and not police_report_filed and disputed_amount > 500:
        result_parts.append(
            "RECOMMENDATION: For fraud disputes over $500, filing a police report is recommended."
        )
    return "\n".join(result_parts)


@KNOWLEDGE.discoverable_tool()
def get_debit_dispute_status_7483(ctx: Tau2Context, user_id: str) -> str:
    """Retrieve a user's debit card dispute history from the debit_card_disputes table. Returns all debit card disputes filed by the user, including dispute IDs, categories, amounts, statuses, and provisional credit information.

    Args:
        user_id (string): The user's unique identifier in the system

    Returns:
        Debit card dispute history retrieved successfully.
    """
    if not user_id:
        return "Error: Missing required parameter: user_id"
    head = [
        "Debit card dispute history retrieved successfully.",
        "",
        "Executed: get_debit_dispute_status_7483",
        f"Debit card dispute history for user {user_id}:",
    ]
    return listing(
        ctx, "debit_card_disputes", "user_id", user_id, head, "\nNo debit card disputes found for this user."
    )


__all__: list[str] = []
