"""Agent spec strings: ``builtin:NAME``, ``python:module:factory`` (and, from the
models layer, ``openai:MODEL`` and friends)."""

from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path
from typing import Any

from ..core.registry import Registry, import_object
from ..errors import SpecError
from ..llm.spec import PROVIDERS
from .adapters import CallableAgent, SyncAgent
from .base import Agent, AgentFactory

#: Built-in agents: reference agents of the example domains, lazily imported.
AGENTS: Registry[Any] = Registry(
    "agent",
    "AGENTS",
    {
        "retail-careful": "assay.domains.retail.agents:CarefulAgent",
        "retail-hasty": "assay.domains.retail.agents:HastyAgent",
        "retail-flaky": "assay.domains.retail.agents:FlakyAgent",
        "retail-flagged": "assay.domains.retail.agents:FlaggedAgent",
        "kb-bm25": "assay.domains.tau2.kb_agents:KbBm25Agent",
        "kb-oracle": "assay.domains.tau2.kb_agents:KbOracleAgent",
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


def _positional(fn: Any) -> tuple[int, bool]:
    """(positional parameters, takes *args) of a callable."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return 2, True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional), any(p.kind == p.VAR_POSITIONAL for p in params)


def _check_respond(owner: Any, spec: str) -> None:
    """``respond`` must take (conversation, tools): a wrong signature is a setup error,
    found before the first trial, not an agent error in every trial."""
    respond = getattr(owner, "respond", None)
    if not callable(respond):
        name = getattr(owner, "__name__", type(owner).__name__)
        raise SpecError(f"{spec}: {name} has no respond(conversation, tools) method")
    count, star = _positional(respond)
    count -= 1 if inspect.isclass(owner) else 0  # self
    if count != 2 and not (star and count < 2):
        raise SpecError(
            f"{spec}: respond takes {count} argument(s) besides self; it must be "
            "respond(conversation, tools) (sync or async)"
        )


def _wrapped(agent: Any) -> Agent:
    """The agent, with a plain (sync) ``respond`` adapted to the async protocol."""
    return agent if inspect.iscoroutinefunction(agent.respond) else SyncAgent(agent)


def _make_factory(obj: Any, spec: str) -> AgentFactory:
    """A factory making a fresh Agent per trial from what ``spec`` names: an agent
    object, an agent class (taking the AgentContext or nothing), a factory function
    ``f(ctx)`` / ``f()``, or a plain ``f(conversation[, tools])``, sync or async.
    Inspected once; a wrong signature raises :class:`SpecError` now."""
    if hasattr(obj, "respond") and not inspect.isclass(obj):
        _check_respond(obj, spec)
        agent = _wrapped(obj)
        return lambda ctx: agent
    if inspect.isclass(obj):
        cls: Any = obj
        _check_respond(cls, spec)
        if _accepts_arg(cls.__init__, skip_self=True):
            return lambda ctx: _wrapped(cls(ctx))
        return lambda ctx: _wrapped(cls())
    if not callable(obj):
        raise SpecError(f"{spec}: {obj!r} is not an agent, agent class or function")
    params = list(inspect.signature(obj).parameters.values())
    if len(params) == 1 and params[0].name in ("ctx", "context"):
        return lambda ctx: _agent_of(obj(ctx))
    if not params:
        return lambda ctx: _agent_of(obj())
    count, star = _positional(obj)
    if count > 2 and not star:
        raise SpecError(
            f"{spec}: an agent function takes (conversation) or (conversation, tools), not {count} arguments"
        )
    takes_tools = count >= 2 or star
    return lambda ctx: CallableAgent(obj, takes_tools)


def _agent_of(made: Any) -> Agent:
    return _wrapped(made) if hasattr(made, "respond") else CallableAgent(made)


def _accepts_arg(fn: Any, skip_self: bool) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if skip_self and params and params[0].name == "self":
        params = params[1:]
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _import_from_cwd(path: str) -> Any:
    """Import ``module:attr`` with the working directory importable (``my_agent.py`` next
    to the user, as ``python my_agent.py`` would find it)."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    top = path.partition(":")[0].split(".")[0]
    here = Path(cwd, f"{top}.py")
    loaded = sys.modules.get(top)
    if loaded is not None and here.is_file() and Path(getattr(loaded, "__file__", "") or "") != here:
        del sys.modules[top]  # a module of that name from elsewhere (another folder, earlier)
    return import_object(path)


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
            obj = _import_from_cwd(rest)
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
