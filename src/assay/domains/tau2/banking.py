"""tau2's banking_knowledge domain: the agent's tools (``KnowledgeTools`` with tau2's
``KB_search``, the ``bm25`` retrieval variant) and the mechanics of its discoverable
tools. Port of tau2-bench (Sierra Research, MIT).

Discoverable tools are methods the model is not offered: the knowledge base names them.
The agent unlocks one (``unlock_discoverable_agent_tool``: remembered by the environment,
not in the database, as tau2 keeps it on its toolkit object) and calls it through
``call_discoverable_agent_tool`` (arguments as a JSON text, every number read as a
float); a call of a state-changing one, or of one the task's gold actions call (tau2's
``read_log_allowlist``), is logged in ``agent_discoverable_tools``. The agent gives the
user a tool (``give_discoverable_user_tool``: logged in ``user_discoverable_tools``),
which the user then calls through ``call_discoverable_user_tool`` (:mod:`.banking_user`).
These four mechanics are in :mod:`.banking_discovery`; the discoverable tools themselves
in :mod:`.banking_disputes`, :mod:`.banking_debit_disputes`, :mod:`.banking_credit`,
:mod:`.banking_credit_payments`, :mod:`.banking_limits`, :mod:`.banking_accounts`,
:mod:`.banking_corrections`, :mod:`.banking_debit`, :mod:`.banking_activation`,
:mod:`.banking_cards` and (the user's) :mod:`.banking_user_actions`.

"Now" is tau2's fixed 2025-11-14 03:40:00 (dates ``11/14/2025``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from .banking_kb import TOP_K, KnowledgeBaseError, format_results, knowledge_base
from .banking_models import (
    DB_SPEC,
    generate_verification_id,
)
from .banking_query import (
    add_to_db,
    query_database_tool,
    update_record_in_db,
)
from .toolkit import Tau2Context, Tau2Toolkit

MODULE = "tau2.domains.banking_knowledge.tools"
KNOWLEDGE = Tau2Toolkit(
    "KnowledgeTools",
    module=MODULE,
    order=(
        "KB_search",
        "transfer_to_human_agents",
        "get_current_time",
        "get_user_information_by_id",
        "get_user_information_by_name",
        "get_user_information_by_email",
        "change_user_email",
        "get_referrals_by_user",
        "get_credit_card_transactions_by_user",
        "get_credit_card_accounts_by_user",
        "log_verification",
        "give_discoverable_user_tool",
        "unlock_discoverable_agent_tool",
        "call_discoverable_agent_tool",
        "list_discoverable_agent_tools",
    ),
)
#: tau2's retrieval variant whose tools and prompt the port has (KB_search over BM25).
VARIANT_PROMPT = "classic_rag_bm25_no_grep.md"

TransferReasonLiteral = Literal[
    "fraud_or_security_concern",
    "account_closure_request",
    "deceased_account_holder",
    "legal_or_regulatory_matter",
    "account_ownership_dispute",
    "complex_billing_dispute",
    "abusive_customer_behavior",
    "third_party_inquiry",
    "technical_system_error",
    "unconfirmed_external_communication",
    "customer_demands_after_unavailable_offer_refusal",
    "kb_search_unsuccessful_customer_requests_transfer",
    "specialized_department_required",
    "accessibility_or_special_needs",
    "customer_frustrated_demands_human",
    "supervisor_request_service_complaint",
    "customer_requests_human_no_specific_reason",
    "request_completed_customer_wants_human_followup",
    # Tier 4
    "other",
]

__all__ = ["DB_SPEC", "KNOWLEDGE", "environment_options", "policy"]


def policy(folder: Path) -> str:
    """The agent's prompt of tau2's ``bm25`` variant: ``prompts/classic_rag_bm25_no_grep.md``
    with its ``{{component:NAME}}`` parts (``prompts/components/NAME.md``) filled in."""
    prompts = folder / "prompts"
    template = (prompts / VARIANT_PROMPT).read_text(encoding="utf-8")
    return re.sub(
        r"\{\{component:(\w+)\}\}",
        lambda m: (prompts / "components" / f"{m.group(1)}.md").read_text(encoding="utf-8"),
        template,
    )


def environment_options(gold_actions: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """tau2's ``read_log_allowlist``: the discoverable tools the task's gold actions call
    through ``call_discoverable_agent_tool`` (their calls are logged even when they only
    read, so that a required read is checked)."""
    allow = set()
    for name, arguments in gold_actions:
        if name == "call_discoverable_agent_tool":
            tool = (arguments or {}).get("agent_tool_name")
            if isinstance(tool, str) and tool:
                allow.add(tool)
    return {"read_log_allowlist": frozenset(allow)}


# --- KB_search (tau2's KBSearchMixin) ---------------------------------------------------


@KNOWLEDGE.tool(owner="KBSearchMixin")
def KB_search(ctx: Tau2Context, query: str) -> str:
    """Search the knowledge base for relevant documents.

    Args:
        query: The search query to find relevant documents

    Returns:
        Relevant document excerpts matching the query
    """
    folder = ctx.options.get("folder")
    if folder is None:
        raise KnowledgeBaseError("KB_search needs the domain's data folder (run it in a tau2 environment)")
    return format_results(knowledge_base(folder).search(query, TOP_K))


# --- KnowledgeTools ---------------------------------------------------------------------


@KNOWLEDGE.tool()
def transfer_to_human_agents(ctx: Tau2Context, summary: str, reason: TransferReasonLiteral = "other") -> str:
    """Transfer the user to a human agent.

    The proper transfer reason enum can be found in the knowledge base: search it before calling this tool to select the proper applicable reason.

    Args:
        summary: A summary of the user's issue and what was attempted before transfer.
        reason: The specific reason code for the transfer.
    """
    valid_reasons = list(get_args(TransferReasonLiteral))
    if reason not in valid_reasons:
        return f"Error: Invalid transfer reason '{reason}'. Must be one of: {', '.join(valid_reasons)}"
    return f"Transfer successful (reason: {reason}). A human agent will assist you shortly."


@KNOWLEDGE.tool()
def get_current_time(ctx: Tau2Context) -> str:
    """Get the current time. Use this to get the current timestamp for logging verification records.

    Returns:
        The current time in the format "YYYY-MM-DD HH:MM:SS TZ"
    """
    return "The current time is 2025-11-14 03:40:00 EST."


@KNOWLEDGE.tool()
def get_user_information_by_id(ctx: Tau2Context, user_id: str) -> str:
    """Get the information (date of birth, email, phone number, address) for a user by their user id.

    Args:
        user_id: The ID of the user
    """
    return query_database_tool("users", f'{{"user_id": "{user_id}"}}', db=ctx)


@KNOWLEDGE.tool()
def get_user_information_by_name(ctx: Tau2Context, customer_name: str) -> str:
    """Get the information (date of birth, email, phone number, address) for a user by their name. Case Sensitive.

    Args:
        customer_name: The name of the user
    """
    return query_database_tool("users", f'{{"name": "{customer_name}"}}', db=ctx)


@KNOWLEDGE.tool()
def get_user_information_by_email(ctx: Tau2Context, email: str) -> str:
    """Get the information (date of birth, email, phone number, address) for a user by their email.

    Args:
        email: The email of the user
    """
    return query_database_tool("users", f'{{"email": "{email}"}}', db=ctx)


@KNOWLEDGE.tool(write=True)
def change_user_email(ctx: Tau2Context, user_id: str, new_email: str) -> str:
    """Change the email address for a user.

    Args:
        user_id: The ID of the user whose email should be changed
        new_email: The new email address to set for the user
    """
    success, _ = update_record_in_db("users", db=ctx, record_id=user_id, updates={"email": new_email})
    if not success:
        return f"Error: User with ID '{user_id}' not found."
    return f"Email updated successfully.\n  - User ID: {user_id}\n  - New Email: {new_email}"


@KNOWLEDGE.tool()
def get_referrals_by_user(ctx: Tau2Context, user_id: str) -> str:
    """Get all referrals made by a user.

    Args:
        user_id: The ID of the user (referrer) to look up referrals for
    """
    return query_database_tool("referrals", f'{{"referrer_id": "{user_id}"}}', db=ctx)


@KNOWLEDGE.tool()
def get_credit_card_transactions_by_user(ctx: Tau2Context, user_id: str) -> str:
    """Get all credit card transactions for a user.

    Args:
        user_id: The ID of the user to look up transactions for
    """
    return query_database_tool("credit_card_transaction_history", f'{{"user_id": "{user_id}"}}', db=ctx)


@KNOWLEDGE.tool()
def get_credit_card_accounts_by_user(ctx: Tau2Context, user_id: str) -> str:
    """Get all credit card accounts for a user.

    Returns information about each credit card account including card type,
    date opened, current balance, and reward points.

    Args:
        user_id: The ID of the user to look up credit card accounts for
    """
    return query_database_tool("credit_card_accounts", f'{{"user_id": "{user_id}"}}', db=ctx)


@KNOWLEDGE.tool(write=True)
def log_verification(
    ctx: Tau2Context,
    name: str,
    user_id: str,
    address: str,
    email: str,
    phone_number: str,
    date_of_birth: str,
    time_verified: str,
) -> str:
    """Log a verification record after successfully verifying a user's identity.

    Call this tool after you have verified a user by confirming 2 out of 4 identity fields
    (date of birth, email, phone number, address). This creates an audit record of the verification.

    Args:
        name: The verified user's full name
        user_id: The verified user's ID
        address: The verified user's address
        email: The verified user's email
        phone_number: The verified user's phone number
        date_of_birth: The verified user's date of birth (MM/DD/YYYY format)
        time_verified: The timestamp of the verification (e.g., "2025-11-14 03:40:00 EST")
    """
    record_id = generate_verification_id(user_id, time_verified)
    record = {
        "name": name,
        "user_id": user_id,
        "address": address,
        "email": email,
        "phone_number": phone_number,
        "date_of_birth": date_of_birth,
        "time_verified": time_verified,
    }
    if not add_to_db("verification_history", record_id, record, db=ctx):
        return "Failed to log verification: Record may already exist."
    return f"Verification logged successfully.\n  - User: {name} (ID: {user_id})\n  - Verified at: {time_verified}"
