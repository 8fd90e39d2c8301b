"""The helpdesk world of this suite: tools over its data (``data/``), a user tool (the
user's own laptop: dual control) and assertion functions for the ``env_assert`` grader.

Loading the suite imports this file (``assay validate`` says so); no plugin, no install.
"""

from assay.envs import ToolContext, ToolError, assertion, tool

POLICY_NOTE = "The policy is in policy.md (named in suite.yaml)."


@tool
def find_account(ctx: ToolContext, email: str) -> dict:
    """Find an employee's account by email.

    Args:
        email: The employee's email, such as 'ada@example.com'.
    """
    for account in ctx.db.rows("accounts"):
        if account["email"] == email.strip().lower():
            return account
    raise ToolError(f"no account with email {email!r}; ask the user to check the spelling")


@tool
def get_ticket(ctx: ToolContext, ticket_id: str) -> dict:
    """Read a support ticket.

    Args:
        ticket_id: The ticket id, such as 'T-100'.
    """
    ticket = ctx.db.get("tickets", ticket_id)
    if ticket is None:
        raise ToolError(f"ticket {ticket_id} does not exist; ids look like 'T-100'")
    return ticket


@tool(write=True)
def unlock_account(ctx: ToolContext, account_id: str) -> str:
    """Unlock a locked account (after too many failed logins).

    Args:
        account_id: The account id, such as 'u-ada'.
    """
    account = ctx.db.get("accounts", account_id)
    if account is None:
        raise ToolError(f"account {account_id} does not exist")
    if not account["locked"]:
        raise ToolError(f"account {account_id} is not locked")
    ctx.db.update("accounts", account_id, locked=False, failed_logins=0)
    return f"account {account_id} unlocked"


@tool(write=True)
def close_ticket(ctx: ToolContext, ticket_id: str, resolution: str) -> str:
    """Close a ticket with a short resolution.

    Args:
        ticket_id: The ticket id.
        resolution: What was done, in a few words.
    """
    ticket = ctx.db.get("tickets", ticket_id)
    if ticket is None:
        raise ToolError(f"ticket {ticket_id} does not exist")
    if ticket["status"] == "closed":
        raise ToolError(f"ticket {ticket_id} is already closed")
    ctx.db.update("tickets", ticket_id, status="closed", resolution=resolution)
    return f"ticket {ticket_id} closed"


# --- the user's own tools (dual control) ----------------------------------------------------


@tool(for_="user")
def check_vpn(ctx: ToolContext) -> str:
    """Look at the VPN icon of your laptop."""
    laptop = ctx.db.get("devices", "laptop")
    return f"VPN: {laptop['vpn']}"


@tool(for_="user", write=True)
def connect_vpn(ctx: ToolContext) -> str:
    """Click 'Connect' in your laptop's VPN client."""
    laptop = ctx.db.get("devices", "laptop")
    if not laptop["vpn_profile"]:
        raise ToolError("the VPN client has no profile to connect with")
    ctx.db.update("devices", "laptop", vpn="connected")
    return "VPN: connected"


# --- assertions over the end state (the env_assert grader) ------------------------------


@assertion
def account_unlocked(ctx: ToolContext, account_id: str) -> bool:
    """The account is not locked."""
    return not ctx.db.get("accounts", account_id)["locked"]


@assertion(for_="user")
def vpn_connected(ctx: ToolContext) -> bool:
    """The user's laptop is connected to the VPN."""
    return ctx.db.get("devices", "laptop")["vpn"] == "connected"
