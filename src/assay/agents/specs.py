"""Agent spec strings: ``builtin:NAME``, ``python:module:factory`` (and, from the
models layer, ``openai:MODEL`` and friends)."""

from __future__ import annotations

import inspect
from typing import Any

from ..core.registry import Registry, import_object
from ..errors import SpecError
from ..llm.spec import PROVIDERS
from .adapters import CallableAgent
from .base import Agent, AgentFactory

#: Built-in agents: reference agents of the example domains, lazily imported.
AGENTS: Registry[Any] = Registry(
    "agent",
    "AGENTS",
    {
        "retail-careful": "assay.domains.retail.agents:CarefulAgent",
        "retail-hasty": "assay.domains.retail.agents:HastyAgent",
        "retail-flaky": "assay.domains.retail.agents:FlakyAgent",
        "humaneval-canonical": "assay.domains.code.agents:HumanEvalCanonical",
        "humaneval-mutant": "assay.domains.code.agents:HumanEvalMutant",
        "code-bugfix-reference": "assay.domains.code.agents:BugfixReference",
        "gold-replay": "assay.agents.oracle:GoldReplayAgent",
    },
)

#: Spec prefixes whose factories live in other layers (registered there).
PREFIXES: dict[str, Any] = {}


def declared_prompt_version(factory: AgentFactory) -> str | None:
    """The prompt version an agent declares before it runs (an attribute
    ``prompt_version`` of the agent object, class or factory): part of the config hash."""
    version = getattr(factory, "prompt_version", None)
    return str(version) if version is not None else None


def _factory_for(obj: Any, spec: str) -> AgentFactory:
    """A factory making a fresh Agent per trial from what ``spec`` names (see
    :func:`_make_factory`), carrying the prompt version the object declares."""
    factory = _make_factory(obj, spec)
    version = getattr(obj, "prompt_version", None)
    if isinstance(version, str):
        factory.prompt_version = version  # type: ignore[attr-defined]
    if getattr(obj, "oracle", False) is True:
        factory.oracle = True  # type: ignore[attr-defined]
    return factory


def _make_factory(obj: Any, spec: str) -> AgentFactory:
    """A factory making a fresh Agent per trial from what ``spec`` names: an agent
    object, an agent class (taking the AgentContext or nothing), a factory function
    ``f(ctx)`` / ``f()``, or a plain ``f(conversation[, tools])``. Inspected once."""
    if hasattr(obj, "respond") and not inspect.isclass(obj):
        return lambda ctx: obj
    if inspect.isclass(obj):
        cls: Any = obj
        if not hasattr(cls, "respond"):
            raise SpecError(f"{spec}: {cls.__name__} has no respond(conversation, tools) method")
        return (lambda ctx: cls(ctx)) if _accepts_arg(cls.__init__, skip_self=True) else (lambda ctx: cls())
    if not callable(obj):
        raise SpecError(f"{spec}: {obj!r} is not an agent, agent class or function")
    params = list(inspect.signature(obj).parameters.values())
    if len(params) == 1 and params[0].name in ("ctx", "context"):
        return lambda ctx: _agent_of(obj(ctx))
    if not params:
        return lambda ctx: _agent_of(obj())
    takes_tools = len(params) >= 2
    return lambda ctx: CallableAgent(obj, takes_tools)


def _agent_of(made: Any) -> Agent:
    return made if hasattr(made, "respond") else CallableAgent(made)


def _accepts_arg(fn: Any, skip_self: bool) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if skip_self and params and params[0].name == "self":
        params = params[1:]
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def agent_factory(spec: str) -> AgentFactory:
    """Resolve a spec string to a factory making a fresh Agent per trial.

    Raises :class:`SpecError` with a one-sentence explanation when it cannot.
    """
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise SpecError(
            f"agent spec {spec!r} must look like builtin:NAME, python:module:factory or openai:MODEL"
        )
    if kind == "builtin":
        try:
            obj = AGENTS.get(rest)
        except KeyError as exc:
            raise SpecError(f"agent spec {spec!r}: {exc.args[0]}") from None
        return _factory_for(obj, spec)
    if kind == "recorded":  # a recorded conversation replayed; MODEL names who recorded it
        from .oracle import RecordedAgent

        return _factory_for(RecordedAgent, spec)
    if kind == "python":
        if ":" not in rest:
            raise SpecError(f"agent spec {spec!r} must be python:module:factory")
        try:
            obj = import_object(rest)
        except (ImportError, AttributeError) as exc:
            raise SpecError(f"agent spec {spec!r}: cannot import {rest} ({exc})") from None
        return _factory_for(obj, spec)
    if kind in PREFIXES:
        return PREFIXES[kind](rest)
    if kind in PROVIDERS:
        from .llm import llm_agent_factory

        return llm_agent_factory(spec)
    known = ", ".join(["builtin", "python", "recorded", *PROVIDERS, *sorted(PREFIXES)])
    raise SpecError(f"agent spec {spec!r}: unknown kind {kind!r}; known kinds: {known}")
