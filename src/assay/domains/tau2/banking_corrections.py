"""tau2's banking_knowledge domain: the agent's discoverable tools for deposits and
corrections (ATM deposit images, account credits, interest discrepancy reports). Port
of tau2-bench (Sierra Research, MIT)."""

from __future__ import annotations

from .banking import KNOWLEDGE
from .banking_models import deterministic_id, get_today_str
from .banking_query import account_balance, add_to_db, exists, record
from .toolkit import Tau2Context

#: tau2's hard-coded deposit images: transaction id -> (ATM, envelope scan, verification notes).
DEPOSIT_IMAGES: dict[str, tuple[str, str, str]] = {
    "btxn_834027370c20": (
        "ATM #3921",
        (
            "\n"
            "=== ATM DEPOSIT ENVELOPE SCAN ===\n"
            "Envelope ID: ENV-2025-3921-00923\n"
            "Deposit Time: 3:47 PM CST\n"
            "ATM Location: Rho-Bank ATM #3921, Cedar Lane Branch, Austin, TX\n"
            "\n"
            "--- ENVELOPE CONTENTS ---\n"
            "Item 1: Personal Check\n"
            "  - Check Number: 7284\n"
            "  - Drawn On: First Texas Bank\n"
            "  - Payee: Derek Yamamoto\n"
            "  - Amount: $875.00\n"
            '  - Memo: "October rent refund"\n'
            "  - Signature: Present and legible\n"
            "  - Date on Check: 11/03/2025\n"
            "\n"
            "Item 2: Cash\n"
            "  - Denomination breakdown:\n"
            "    * 2 x $100 bills = $200.00\n"
            "    * 3 x $20 bills = $60.00\n"
            "  - Total Cash: $260.00\n"
            "\n"
            "--- DEPOSIT SUMMARY ---\n"
            "Check Total: $875.00\n"
            "Cash Total: $260.00\n"
            "GRAND TOTAL: $1,135.00\n"
            "\n"
            "--- MACHINE RECORD ---\n"
            "Amount Recorded by ATM: $385.00\n"
            "DISCREPANCY DETECTED: $750.00 difference\n"
            "\n"
            "--- IMAGE QUALITY ---\n"
            "Envelope scan: CLEAR\n"
            "Check front: CLEAR\n"
            'Check back (endorsement): CLEAR - endorsed "For Deposit Only - Derek Yamamoto"\n'
            "Cash image: CLEAR - bills visible and countable\n"
        ),
        "Images clearly show deposit contents totaling $1,135.00. ATM machine recorded only $385.00. Discrepancy of $750.00 confirmed via image review.",
    ),
    "btxn_test_deposit_001": (
        "ATM #3921",
        (
            "\n"
            "=== ATM DEPOSIT ENVELOPE SCAN ===\n"
            "Envelope ID: ENV-2025-3921-00847\n"
            "Deposit Time: 2:34 PM EST\n"
            "ATM Location: Rho-Bank ATM #3921, 742 Oak Avenue, Portland, OR\n"
            "\n"
            "--- ENVELOPE CONTENTS ---\n"
            "Item 1: Personal Check\n"
            "  - Check Number: 4821\n"
            "  - Drawn On: First National Bank\n"
            "  - Payee: Linda Patterson\n"
            "  - Amount: $875.00\n"
            '  - Memo: "October rent refund"\n'
            "  - Signature: Present and legible\n"
            "  - Date on Check: 11/05/2025\n"
            "\n"
            "Item 2: Cash\n"
            "  - Denomination breakdown:\n"
            "    * 2 x $100 bills = $200.00\n"
            "    * 3 x $20 bills = $60.00\n"
            "  - Total Cash: $260.00\n"
            "\n"
            "--- DEPOSIT SUMMARY ---\n"
            "Check Total: $875.00\n"
            "Cash Total: $260.00\n"
            "GRAND TOTAL: $1,135.00\n"
            "\n"
            "--- MACHINE RECORD ---\n"
            "Amount Recorded by ATM: $385.00\n"
            "DISCREPANCY DETECTED: $750.00 difference\n"
            "\n"
            "--- IMAGE QUALITY ---\n"
            "Envelope scan: CLEAR\n"
            "Check front: CLEAR\n"
            'Check back (endorsement): CLEAR - endorsed "For Deposit Only - Linda Patterson"\n'
            "Cash image: CLEAR - bills visible and countable\n"
        ),
        "Images clearly show deposit contents totaling $1,135.00. ATM machine recorded only $385.00. Discrepancy of $750.00 confirmed via image review.",
    ),
    "btxn_test_atm_dep_partial": (
        "ATM #5847",
        (
            "\n"
            "=== ATM DEPOSIT ENVELOPE SCAN ===\n"
            "Envelope ID: ENV-2025-5847-00293\n"
            "Deposit Time: 10:15 AM EST\n"
            "\n"
            "--- ENVELOPE CONTENTS ---\n"
            "Item 1: Personal Check\n"
            "  - Check Number: 7392\n"
            "  - Amount: $500.00\n"
            "\n"
            "--- DEPOSIT SUMMARY ---\n"
            "Check Total: $500.00\n"
            "Cash Total: $0.00\n"
            "GRAND TOTAL: $500.00\n"
            "\n"
            "--- MACHINE RECORD ---\n"
            "Amount Recorded by ATM: $500.00\n"
            "No discrepancy detected.\n"
        ),
        "Images confirm deposit matches recorded amount. No discrepancy found.",
    ),
}


@KNOWLEDGE.discoverable_tool()
def get_atm_deposit_images_8473(ctx: Tau2Context, transaction_id: str) -> str:
    """Retrieve ATM deposit envelope/check images for a specific ATM deposit transaction.

    Args:
        transaction_id (string): The transaction ID of the ATM deposit to retrieve images for

    Returns:
        ATM deposit images retrieved successfully.
    """
    if not transaction_id:
        return "Error: Missing required parameter: transaction_id"
    if not exists(ctx, "bank_account_transaction_history", transaction_id):
        return f"Error: Transaction '{transaction_id}' not found."
    txn = record(ctx, "bank_account_transaction_history", transaction_id)
    if txn.get("type") != "atm_deposit":
        return f"Error: Transaction '{transaction_id}' is not an ATM deposit. This tool only works for ATM deposit transactions."
    description = txn.get("description", "")
    if "RHO-BANK" not in description.upper() and "RHOBANK" not in description.upper():
        return f"Error: Transaction '{transaction_id}' is from a third-party ATM. Deposit images are only available for Rho-Bank ATM deposits. For third-party ATM disputes, a chargeback request must be submitted to the ATM network."
    if transaction_id in DEPOSIT_IMAGES:
        atm_id, envelope_contents, verification_notes = DEPOSIT_IMAGES[transaction_id]
        return (
            f"ATM Deposit Image Retrieval Results\n"
            f"=====================================\n"
            f"Transaction ID: {transaction_id}\n"
            f"ATM: {atm_id}\n"
            f"Deposit Date: {txn.get('date', 'Unknown')}\n"
            f"\n"
            f"{envelope_contents}\n"
            f"\n"
            f"--- VERIFICATION NOTES ---\n"
            f"{verification_notes}\n"
        )
    return (
        f"ATM Deposit Image Retrieval Results\n"
        f"=====================================\n"
        f"Transaction ID: {transaction_id}\n"
        f"ATM: {description}\n"
        f"Deposit Date: {txn.get('date', 'Unknown')}\n"
        f"Amount Recorded: ${abs(txn.get('amount', 0)):.2f}\n"
        f"\n"
        f"--- IMAGE STATUS ---\n"
        f"Status: IMAGES NOT AVAILABLE\n"
        f"Reason: Deposit images for this transaction have either expired (older than 90 days) or were not captured by the ATM system.\n"
        f"\n"
        f"For deposits without available images, the dispute will proceed based on customer statement and ATM journal records only. Investigation timeline may be extended.\n"
    )


def _credit(
    ctx: Tau2Context, account_id: object, amount: object, credit_type: object, kind: str
) -> tuple[str | None, dict[str, object], float, float]:
    """The checks and the balance change both account credits share: ``(error, account,
    amount, previous balance)``."""
    if not account_id or amount is None or not credit_type:
        return "Error: Missing required parameters.", {}, 0.0, 0.0
    try:
        value = float(amount)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "Error: Invalid credit amount. Must be a number.", {}, 0.0, 0.0
    if value <= 0:
        return "Error: Credit amount must be positive.", {}, 0.0, 0.0
    valid_types = (
        ["rebate_credit", "fee_refund"]
        if kind == "checking"
        else ["interest_correction", "fee_refund", "goodwill_credit"]
    )
    if credit_type not in valid_types:
        return f"Error: Invalid credit_type. Must be one of: {valid_types}", {}, 0.0, 0.0
    if not exists(ctx, "accounts", account_id):
        return f"Error: Account '{account_id}' not found.", {}, 0.0, 0.0
    account = record(ctx, "accounts", account_id)
    account_class = account.get("class", "").lower()
    if kind == "checking" and account_class != "checking":
        error = f"Error: Account '{account_id}' is not a checking account. Credits can only be applied to checking accounts."
        return error, {}, 0.0, 0.0
    if kind == "savings" and account_class not in ("saving", "savings"):
        error = f"Error: Account '{account_id}' is not a savings account. This tool only applies to savings accounts."
        return error, {}, 0.0, 0.0
    if account.get("status") not in ("ACTIVE", "OPEN"):
        return f"Error: Account '{account_id}' is not active.", {}, 0.0, 0.0
    return None, account, value, account_balance(account)


def _credited(
    ctx: Tau2Context,
    account_id: object,
    credit_type: object,
    amount: float,
    current: float,
    txn: str,
    text: str,
) -> str:
    """Record the credit's transaction (tau2 assigns it, replacing one of the same id)."""
    ctx.put(
        "bank_account_transaction_history",
        txn,
        {
            "transaction_id": txn,
            "account_id": account_id,
            "date": get_today_str(),
            "description": text,
            "amount": amount,
            "type": credit_type,
            "status": "posted",
        },
    )
    return (
        f"\nCredit applied successfully!\n"
        f"  - Transaction ID: {txn}\n"
        f"  - Account: {account_id}\n"
        f"  - Credit Type: {credit_type}\n"
        f"  - Amount: ${amount:.2f}\n"
        f"  - Previous Balance: ${current:.2f}\n"
        f"  - New Balance: ${current + amount:.2f}"
    )


@KNOWLEDGE.discoverable_tool(write=True)
def apply_checking_account_credit_5829(
    ctx: Tau2Context, account_id: str, amount: float, credit_type: str
) -> str:
    """Apply a credit to a customer's checking account.

    Args:
        account_id (string): The checking account ID to credit
        amount (number): The positive dollar amount to credit (must be greater than 0)
        credit_type (string): The type of credit: 'rebate_credit' for missing rebates, 'fee_refund' for incorrect fee charges

    Returns:
        Credit applied to checking account successfully.
    """
    error, account, value, current = _credit(ctx, account_id, amount, credit_type, "checking")
    if error is not None:
        return error
    account["current_holdings"] = f"${current + value:.2f}"
    txn = f"txn_{deterministic_id(f'checking_credit:{account_id}:{credit_type}:{value}:{get_today_str()}')}"
    text = (
        "REBATE CREDIT - CUSTOMER SERVICE"
        if credit_type == "rebate_credit"
        else "FEE REFUND - CUSTOMER SERVICE"
    )
    return _credited(ctx, account_id, credit_type, value, current, txn, text)


@KNOWLEDGE.discoverable_tool(write=True)
def apply_savings_account_credit_6831(
    ctx: Tau2Context, account_id: str, amount: float, credit_type: str
) -> str:
    """Apply a credit to a customer's savings account for interest corrections, fee refunds, or goodwill adjustments.

    Args:
        account_id (string): The savings account ID to credit
        amount (number): The positive dollar amount to credit (must be greater than 0)
        credit_type (string): The type of credit: 'interest_correction' for APY/interest calculation errors, 'fee_refund' for incorrect fee charges, 'goodwill_credit' for customer service gestures

    Returns:
        Credit applied to savings account successfully.
    """
    error, account, value, current = _credit(ctx, account_id, amount, credit_type, "savings")
    if error is not None:
        return error
    account["current_holdings"] = f"{current + value:.2f}"
    txn = f"txn_{deterministic_id(f'savings_credit:{account_id}:{credit_type}:{value}:{get_today_str()}')}"
    if credit_type == "interest_correction":
        text = "INTEREST CORRECTION - CUSTOMER SERVICE"
    elif credit_type == "fee_refund":
        text = "FEE REFUND - CUSTOMER SERVICE"
    else:
        text = "GOODWILL CREDIT - CUSTOMER SERVICE"
    return _credited(ctx, account_id, credit_type, value, current, txn, text)


@KNOWLEDGE.discoverable_tool(write=True)
def submit_interest_discrepancy_report_7294(
    ctx: Tau2Context,
    account_id: str,
    user_id: str,
    expected_apy: float,
    actual_apy: float,
    amount_difference: float,
) -> str:
    """Submit a report for interest calculation discrepancies to the backend team for investigation. Use this when the interest credited to a customer's account does not match expected APY calculations.

    Args:
        account_id (string): The savings account ID with the discrepancy
        user_id (string): The customer's unique identifier
        expected_apy (number): The APY percentage the customer should have received (e.g., 2.775 for 2.775%)
        actual_apy (number): The APY percentage that was actually applied (e.g., 2.5 for 2.5%)
        amount_difference (number): The dollar amount difference between expected and actual interest credited

    Returns:
        Interest discrepancy report submitted successfully. Backend team will investigate.
    """
    if (
        not account_id
        or not user_id
        or expected_apy is None
        or actual_apy is None
        or amount_difference is None
    ):
        return "Error: Missing required parameters."
    try:
        expected_apy = float(expected_apy)
        actual_apy = float(actual_apy)
        amount_difference = float(amount_difference)
    except (ValueError, TypeError):
        return "Error: expected_apy, actual_apy, and amount_difference must be numbers."
    account = ctx.read("accounts", account_id)
    if account is None:
        return f"Error: Account '{account_id}' not found."
    user = ctx.read("users", user_id)
    if user is None:
        return f"Error: User '{user_id}' not found."
    seed = f"interest_report:{account_id}:{user_id}:{expected_apy}:{actual_apy}:{get_today_str()}"
    report_id = f"IDR_{deterministic_id(seed)}"
    report_record = {
        "report_id": report_id,
        "account_id": account_id,
        "user_id": user_id,
        "account_level": account.get("level", "Unknown"),
        "expected_apy": expected_apy,
        "actual_apy": actual_apy,
        "apy_difference": round(expected_apy - actual_apy, 4),
        "amount_difference": amount_difference,
        "submitted_date": get_today_str(),
        "status": "PENDING_REVIEW",
    }
    # tau2's database has no such table: the report is not kept (add_to_db returns False)
    add_to_db("interest_discrepancy_reports", report_id, report_record, db=ctx)
    return (
        f"\nInterest Discrepancy Report Submitted Successfully!\n"
        f"  - Report ID: {report_id}\n"
        f"  - Account: {account_id} ({account.get('level', 'Unknown')})\n"
        f"  - Customer: {user.get('name', 'Unknown')}\n"
        f"  - Expected APY: {expected_apy}%\n"
        f"  - Actual APY: {actual_apy}%\n"
        f"  - APY Difference: {round(expected_apy - actual_apy, 4)}%\n"
        f"  - Amount Difference: ${amount_difference:.2f}\n"
        f"  - Status: PENDING_REVIEW\n"
        f"\nThe backend team will investigate this discrepancy and ensure "
        f"correct APY calculations are applied going forward."
    )


__all__ = ["DEPOSIT_IMAGES"]
