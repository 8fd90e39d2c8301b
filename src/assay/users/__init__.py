"""User simulators: the protocol, the scripted simulator, the registry."""

from .scripted import FACT_PATTERNS, FACT_PHRASES, ScriptedUser, questions
from .simulator import (
    OUT_OF_SCOPE,
    STOP,
    STOP_TOKENS,
    TRANSFER,
    USERS,
    UserContext,
    UserFactory,
    UserSimulator,
    UserTurn,
)
from .specs import USER_PREFIXES, user_factory

__all__ = [
    "FACT_PATTERNS",
    "FACT_PHRASES",
    "OUT_OF_SCOPE",
    "STOP",
    "STOP_TOKENS",
    "TRANSFER",
    "USERS",
    "USER_PREFIXES",
    "ScriptedUser",
    "UserContext",
    "UserFactory",
    "UserSimulator",
    "UserTurn",
    "questions",
    "user_factory",
]
