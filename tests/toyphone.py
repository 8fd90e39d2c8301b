"""A tiny dual-control domain for tests: the agent manages a line, the user holds the
phone (user tools), and assertions check both sides."""

from __future__ import annotations

from assay.envs import Database, SuiteDomain, ToolContext, ToolError, Toolkit, assertion, tool


def generate(seed: int) -> Database:
    db = Database({"lines": "line_id", "phone": "id"})
    db.insert("lines", {"line_id": "L1", "active": False, "plan": {"name": "basic", "gb": 5}})
    db.insert("phone", {"id": "phone", "airplane": True})
    return db


@tool
def get_line(ctx: ToolContext, line_id: str) -> dict:
    """Read a line.

    Args:
        line_id: The line id.
    """
    line = ctx.db.get("lines", line_id)
    if line is None:
        raise ToolError(f"no line {line_id}")
    return line


@tool(write=True)
def activate_line(ctx: ToolContext, line_id: str) -> str:
    """Activate a line.

    Args:
        line_id: The line id.
    """
    ctx.db.update("lines", line_id, active=True)
    return f"{line_id} active"


@tool(for_="user")
def check_phone(ctx: ToolContext) -> str:
    """Look at the phone's status bar."""
    return "airplane mode" if ctx.db.get("phone", "phone")["airplane"] else "signal ok"


@tool(for_="user", write=True)
def toggle_airplane(ctx: ToolContext) -> str:
    """Toggle airplane mode."""
    phone = ctx.db.get("phone", "phone")
    ctx.db.update("phone", "phone", airplane=not phone["airplane"])
    return "airplane mode" if not phone["airplane"] else "signal ok"


@assertion
def line_active(ctx: ToolContext, line_id: str) -> bool:
    """The line is active."""
    return bool(ctx.db.get("lines", line_id)["active"])


@assertion(for_="user")
def phone_online(ctx: ToolContext) -> bool:
    """The phone is not in airplane mode."""
    return not ctx.db.get("phone", "phone")["airplane"]


@assertion
def broken(ctx: ToolContext, line_id: str) -> bool:
    """Raises for an unknown line."""
    return ctx.db.get("lines", line_id)["active"] is True


DOMAIN = SuiteDomain(
    name="toyphone",
    toolkit=Toolkit([get_line, activate_line, check_phone, toggle_airplane]),
    generate=generate,
    policy="Help the user get online.",
    assertions={a.name: a for a in (line_active, phone_online, broken)},
)

#: Picked up when this module is named in ASSAY_PLUGINS.
DOMAINS = {"toyphone": DOMAIN}
