"""Agents: the protocol, adapters, spec strings."""

from .adapters import CallableAgent, to_turn
from .base import Agent, AgentContext, AgentFactory, AgentTurn
from .specs import AGENTS, PREFIXES, agent_factory

__all__ = [
    "AGENTS",
    "PREFIXES",
    "Agent",
    "AgentContext",
    "AgentFactory",
    "AgentTurn",
    "CallableAgent",
    "agent_factory",
    "to_turn",
]
