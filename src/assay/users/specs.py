"""User spec strings: ``scripted`` (default) and, from the models layer, LLM users."""

from __future__ import annotations

from typing import Any

from ..errors import SpecError
from ..llm.spec import PROVIDERS
from .simulator import USERS, UserFactory

#: Spec prefixes whose factories live in other modules (``openai:MODEL``, ...).
USER_PREFIXES: dict[str, Any] = {}


def user_factory(spec: str) -> UserFactory:
    """Resolve a user spec string (``scripted`` or ``KIND:MODEL``) to a factory."""
    if spec in USERS:
        return USERS.get(spec)
    kind, sep, rest = spec.partition(":")
    if sep and kind in USER_PREFIXES:
        return USER_PREFIXES[kind](rest)
    if sep and kind in PROVIDERS:
        from .llm import llm_user_factory

        return llm_user_factory(spec)
    known = ", ".join([*USERS.names(), *(f"{p}:MODEL" for p in [*PROVIDERS, *sorted(USER_PREFIXES)])])
    raise SpecError(f"user spec {spec!r} is unknown; known: {known}")
