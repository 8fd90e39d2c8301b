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
which the user then calls through ``call_discoverable_user_tool``
(:mod:`.banking_user`). The discoverable tools themselves are in
:mod:`.banking_disputes`, :mod:`.banking_credit`, :mod:`.banking_limits`,
:mod:`.banking_accounts`, :mod:`.banking_debit` and :mod:`.banking_cards`.

"Now" is tau2's fixed 2025-11-14 03:40:00 (dates ``11/14/2025``).
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from .banking_kb import TOP_K, KnowledgeBaseError, format_results, knowledge_base
from .banking_models import (
    DB_SPEC,
    generate_agent_discoverable_tool_id,
    generate_user_discoverable_tool_id,
    generate_verification_id,
    get_now,
)
from .banking_query import (
    add_to_db,
    format_discoverable_tool_for_agent,
    parse_discoverable_tool_docstring,
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
UNLOCKED = "unlocked_agent_tools"
GIVEN = "given_user_tools"

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


def _user_discoverable() -> dict[str, Any]:
    from .banking_user import KNOWLEDGE_USER

    return KNOWLEDGE_USER.discoverable


@KNOWLEDGE.tool(write=True)
def give_discoverable_user_tool(ctx: Tau2Context, discoverable_tool_name: str, arguments: str = "{}") -> str:
    """Pass a tool to the user so they can execute it themselves.

    Use this when the knowledge base indicates that the user should perform
    an action themselves (e.g., "to do X, have the user call tool_name(args)").

    The user will then be able to call `call_discoverable_tool` with the same
    tool name and arguments to simulate executing the action.

    Args:
        discoverable_tool_name: The name of the discoverable tool (e.g., "open_webpage", "navigate_to_section")
        arguments: JSON string of arguments for the tool (e.g., '{"url": "https://example.com"}')

    Returns:
        A confirmation message with instructions for the user
    """
    if not isinstance(discoverable_tool_name, str):  # hasattr(KnowledgeUserTools, name)
        raise TypeError(f"attribute name must be string, not '{type(discoverable_tool_name).__name__}'")
    tools = _user_discoverable()
    if discoverable_tool_name not in tools:
        return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
    try:
        args_dict = json.loads(arguments)
    except json.JSONDecodeError as e:
        return f"Error: Invalid JSON in arguments: {e}"
    method = tools[discoverable_tool_name].fn
    parameters = dict.fromkeys(["self", *list(inspect.signature(method).parameters)[1:]])
    for arg_name in args_dict:
        if arg_name not in parameters and arg_name != "self":
            return f"Error: Unexpected parameter: {arg_name}"
    tool_info = parse_discoverable_tool_docstring(method)
    ctx.session.setdefault(GIVEN, {})[discoverable_tool_name] = {
        "arguments": args_dict,
        "given_at": get_now().isoformat(),
        "tool_info": tool_info,
    }
    record = {"tool_name": discoverable_tool_name, "status": "GIVEN"}
    add_to_db(
        "user_discoverable_tools", generate_user_discoverable_tool_id(discoverable_tool_name), record, db=ctx
    )
    args_str = json.dumps(args_dict, indent=2) if args_dict else "(no arguments)"
    return (
        f"Tool given to user: {discoverable_tool_name}\n"
        f"Description: {tool_info['description']}\n"
        f"Arguments: {args_str}\n\n"
        f"The user can now execute this action by calling `call_discoverable_user_tool` "
        f"with discoverable_tool_name='{discoverable_tool_name}' and the same arguments."
    )


@KNOWLEDGE.tool(write=True)
def unlock_discoverable_agent_tool(ctx: Tau2Context, agent_tool_name: str) -> str:
    """Unlock an agent discoverable tool that was found in the knowledge base.

    Use this when the knowledge base indicates that you have access to a specialized
    internal tool. The knowledge base will tell you the tool name to unlock.

    After unlocking, you can use the tool by calling `call_discoverable_agent_tool` with
    the tool name and required arguments.

    Args:
        agent_tool_name: The name of the agent discoverable tool to unlock
                        (e.g., "calculate_apr_adjustment_7842")

    Returns:
        A confirmation message with the tool's description and parameters
    """
    if agent_tool_name not in KNOWLEDGE.discoverable:
        return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
    tool_info = parse_discoverable_tool_docstring(KNOWLEDGE.discoverable[agent_tool_name].fn)
    ctx.session.setdefault(UNLOCKED, {})[agent_tool_name] = {
        "unlocked_at": get_now().isoformat(),
        "tool_info": tool_info,
    }
    formatted_tool = format_discoverable_tool_for_agent(tool_info)
    return (
        f"Tool unlocked: {agent_tool_name}\n"
        f"Description: {tool_info['description']}\n\n"
        f"{formatted_tool}\n\n"
        f"You can now use this tool by calling `call_discoverable_agent_tool` with "
        f"agent_tool_name='{agent_tool_name}' and the required arguments."
    )


@KNOWLEDGE.tool(write=True)
def call_discoverable_agent_tool(ctx: Tau2Context, agent_tool_name: str, arguments: str = "{}") -> str:
    """Call an agent discoverable tool that you have previously unlocked.

    Use this after unlocking a tool with `unlock_discoverable_agent_tool`. The knowledge base
    will tell you which tool to use and what arguments to provide.

    Args:
        agent_tool_name: The name of the agent discoverable tool to call
        arguments: JSON string of arguments for the tool (e.g., '{"user_id": "abc123"}')

    Returns:
        The result of executing the agent tool
    """
    if agent_tool_name not in KNOWLEDGE.discoverable:
        return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
    if agent_tool_name not in ctx.session.get(UNLOCKED, {}):
        return (
            f"Error: Tool '{agent_tool_name}' has not been unlocked. "
            f"You must first use `unlock_discoverable_agent_tool` to unlock this tool before calling it."
        )
    try:  # every JSON number a float, as tau2 reads them
        args_dict = json.loads(arguments, parse_int=float)
    except json.JSONDecodeError as e:
        return f"Error: Invalid JSON in arguments: {e}"
    tool = KNOWLEDGE.discoverable[agent_tool_name]
    try:
        result = tool.fn(ctx, **tool.signature.check(args_dict))
    except TypeError as e:
        return f"Error: Invalid arguments: {e}"
    if tool.write or agent_tool_name in ctx.options.get("read_log_allowlist", ()):
        record = {"tool_name": agent_tool_name, "status": "CALLED"}
        add_to_db(
            "agent_discoverable_tools", generate_agent_discoverable_tool_id(agent_tool_name), record, db=ctx
        )
    return result


@KNOWLEDGE.tool()
def list_discoverable_agent_tools(ctx: Tau2Context) -> str:
    """List all agent discoverable tools that you have called.

    Use this to see what specialized tools you have used.

    Returns:
        A list of tools that you have called
    """
    result = query_database_tool("agent_discoverable_tools", "{}", db=ctx)
    if "No results found" in result:
        return "No agent tools have been called yet. Search the knowledge base to discover available tools."
    return f"Your called agent tools:\n{result}"
