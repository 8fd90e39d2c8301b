"""Environments: state, tools, domains."""

from .environment import NO_DOMAIN, Domain, Environment, ToolDomain, ToolEnvironment
from .registry import DOMAINS, get_domain
from .state import Database, Snapshot, State, diff, state_hash
from .tools import Caller, InvalidToolCall, Tool, ToolContext, ToolError, Toolkit, render_result, tool

__all__ = [
    "DOMAINS",
    "NO_DOMAIN",
    "Caller",
    "Database",
    "Domain",
    "Environment",
    "InvalidToolCall",
    "Snapshot",
    "State",
    "Tool",
    "ToolContext",
    "ToolDomain",
    "ToolEnvironment",
    "ToolError",
    "Toolkit",
    "diff",
    "get_domain",
    "render_result",
    "state_hash",
    "tool",
]
