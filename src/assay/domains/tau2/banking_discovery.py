"""tau2's banking_knowledge domain: the agent's tools that unlock, call and give
discoverable tools, and list them (``KnowledgeTools``). Port of tau2-bench (Sierra
Research, MIT); the mechanics are described in :mod:`.banking`."""

from __future__ import annotations

import inspect
import json
from typing import Any

from .banking import KNOWLEDGE
from .banking_models import generate_agent_discoverable_tool_id, generate_user_discoverable_tool_id, get_now
from .banking_query import (
    add_to_db,
    format_discoverable_tool_for_agent,
    parse_discoverable_tool_docstring,
    query_database_tool,
)
from .toolkit import Tau2Context

UNLOCKED = "unlocked_agent_tools"


GIVEN = "given_user_tools"


def _user_discoverable() -> dict[str, Any]:
    from .banking_user import KNOWLEDGE_USER
    from .banking_user_actions import __name__ as _registered  # noqa: F401 (registers them)

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


__all__: list[str] = []
