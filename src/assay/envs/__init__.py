"""Environments: state, tools, domains."""

from .capabilities import (
    AssertionDomain,
    GoldState,
    GoldStateDomain,
    StateComparison,
    compare_by_diff,
    replay_gold,
)
from .environment import NO_DOMAIN, Domain, Environment, ToolDomain, ToolEnvironment
from .local import Assertion, DomainContext, LocalDomainRef, SuiteDomain, SuiteDomainError, assertion
from .registry import DOMAINS, DomainRef, get_domain
from .state import Database, Snapshot, State, state_hash
from .state_diff import diff
from .tools import Caller, InvalidToolCall, Tool, ToolContext, ToolError, Toolkit, render_result, tool

__all__ = [
    "DOMAINS",
    "NO_DOMAIN",
    "Assertion",
    "AssertionDomain",
    "Caller",
    "Database",
    "Domain",
    "DomainContext",
    "DomainRef",
    "Environment",
    "GoldState",
    "GoldStateDomain",
    "InvalidToolCall",
    "LocalDomainRef",
    "Snapshot",
    "State",
    "StateComparison",
    "SuiteDomain",
    "SuiteDomainError",
    "Tool",
    "ToolContext",
    "ToolDomain",
    "ToolEnvironment",
    "ToolError",
    "Toolkit",
    "assertion",
    "compare_by_diff",
    "diff",
    "get_domain",
    "render_result",
    "replay_gold",
    "state_hash",
    "tool",
]
