"""A tau2 domain's environment: assay's :class:`~assay.envs.environment.Environment`
protocol with tau2's semantics (``tau2.environment.Environment``).

- ``call`` is tau2's ``get_response``: run the tool for the agent or the user, then
  synchronise (telecom), then render the result as tau2 does; a failure is a
  :class:`ToolError` whose text follows ``"Error: "`` in the tool message.
- ``make_tool_call`` is tau2's ``make_tool_call``: no synchronisation, no rendering
  (gold actions are replayed this way).
- ``run_function`` / ``run_assertion`` call toolkit functions by name (a task's
  ``initialization_actions`` and ``env_assertions``), synchronising after each.
- ``set_state`` applies a task's initial state: data updates, initialization actions,
  and the state-changing calls of a message history (their outputs checked).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from typing import Any

from ...core.hashing import stable_hash
from ...core.messages import ToolSpec
from ...envs.state import Database, State
from ...envs.tools import Caller, InvalidToolCall, ToolError
from .loader import LoadedDomain
from .render import loads_or_text, to_json_str
from .store import Tau2DataError, apply_update
from .tasks import EnvAssertion, EnvFunctionCall, InitialState, Message, ToolCall, tool_call_pairs
from .toolkit import Tau2Context, Tau2Tool, caller_of


class Tau2Environment:
    """The world of one trial of a tau2 task."""

    def __init__(
        self,
        loaded: LoadedDomain,
        initial_state: InitialState | None = None,
        *,
        user_tools: list[str] | None = None,
        cache: dict[str, tuple[State, dict[str, Any]]] | None = None,
        options: Mapping[str, Any] | None = None,
    ):
        self.loaded = loaded
        self.spec = loaded.spec
        self.version = f"tau2-{loaded.name}-{loaded.fingerprint}"
        self.initial_state = initial_state
        self.user_tool_names = user_tools
        self._cache = cache if cache is not None else {}
        self.options: dict[str, Any] = {"folder": loaded.folder, **(options or {})}
        """What tau2 fixes when it builds the environment: the data folder, banking's
        ``read_log_allowlist``."""
        self.session: dict[str, Any] = {}
        """What tau2's toolkit objects remember outside the database (banking: the
        unlocked and given discoverable tools); reset with the environment."""
        self._agent: dict[str, Tau2Tool] = {t.name: t for t in self.spec.tools.tools}
        user = self.spec.user_tools
        self._user: dict[str, Tau2Tool] | None = {t.name: t for t in user.tools} if user is not None else None
        # discoverable tools: callable by name (tau2's use_tool finds them), never offered
        self._agent_all = {**self._agent, **self.spec.tools.discoverable}
        self._user_all = (
            {**self._user, **user.discoverable} if user is not None and self._user is not None else None
        )
        self.rng = random.Random(0)
        self.db = Database(self.spec.keys, loaded.base)

    # --- Environment protocol -----------------------------------------------------------
    def reset(self, seed: int) -> None:
        """The task's initial state (computed once per initial state, then shared)."""
        self.rng = random.Random(seed)
        state, session = self._start()
        self.db = Database(self.spec.keys, state)
        self.session = copy.deepcopy(session)

    def tools(self, for_: Caller = "agent") -> list[ToolSpec]:
        if for_ == "user":
            if self._user is None:
                return []
            names = self.user_tool_names
            return [t.spec() for t in self._user.values() if names is None or t.name in names]
        return [t.spec() for t in self._agent.values()]

    def call(self, name: str, args: dict[str, Any], for_: Caller = "agent") -> str:
        result = self.make_tool_call(name, args, "user" if for_ == "user" else "assistant")
        try:
            self.sync()
        except Exception as exc:
            raise ToolError(str(exc)) from exc
        return to_json_str(result)

    def snapshot(self) -> State:
        return self.db.snapshot()

    def write_tools(self) -> set[str]:
        tools = [*self._agent_all.values(), *(self._user_all or {}).values()]
        return {t.name for t in tools if t.write}

    def context(self, requestor: str = "assistant") -> Tau2Context:
        """A context for one call on ``requestor``'s side."""
        return Tau2Context(self.db, self.rng, caller_of(requestor), self.session, self.options)

    # --- tau2 semantics -----------------------------------------------------------------
    def make_tool_call(self, name: str, args: dict[str, Any], requestor: str = "assistant") -> Any:
        """Run a tool without synchronising or rendering (tau2's ``make_tool_call``)."""
        if requestor == "user":
            if self._user_all is None:
                raise ToolError("User tools not available")
            tool = self._user_all.get(name)
        else:
            tool = self._agent_all.get(name)
        if tool is None:
            raise InvalidToolCall(f"Tool '{name}' not found.")
        return tool.run(self.context(requestor), args)

    def response(self, call: ToolCall) -> tuple[str, bool]:
        """The tool message tau2 would write for ``call``: ``(content, error)``."""
        try:
            return self.call(call.name, call.arguments, caller_of(call.requestor)), False
        except ToolError as exc:
            return f"Error: {exc}", True

    def sync(self) -> None:
        """tau2's ``sync_tools`` (telecom: the phone follows the agent's database)."""
        if self.spec.sync is None:
            return
        ctx = self.context()
        try:
            self.spec.sync(ctx)
        finally:
            ctx.commit()

    def has_tool(self, name: str) -> bool:
        return name in self._agent_all or (self._user_all is not None and name in self._user_all)

    def mutates(self, name: str) -> bool:
        """tau2's ``mutates_state`` of a tool (True for unknown names, as tau2 assumes)."""
        tool = self._agent_all.get(name) or (self._user_all or {}).get(name)
        return True if tool is None else tool.write

    def run_function(self, call: EnvFunctionCall) -> Any:
        """Call a toolkit function by name on the agent or user side, then synchronise."""
        toolkit = self.spec.user_tools if call.env_type == "user" else self.spec.tools
        if toolkit is None:
            raise AttributeError(f"'NoneType' object has no attribute '{call.func_name}'")
        result = toolkit.call_function(self.context(call.env_type), call.func_name, call.arguments)
        self.sync()
        return result

    def run_assertion(self, assertion: EnvAssertion) -> bool:
        """Whether the assertion holds (its function returns ``assert_value``)."""
        result = self.run_function(assertion)
        if not isinstance(result, bool):
            raise ValueError(f"Function {assertion.func_name} returned {type(result)} instead of bool")
        return result == assertion.assert_value

    def set_state(
        self, initial: InitialState | None, history: list[Message] | None = None, source: str = ""
    ) -> None:
        """Apply an initial state and replay the state-changing calls of ``history``
        (tau2's ``set_state``; a replayed output that differs from the recorded one is
        an error, as in tau2's strict mode)."""
        where = source or "initial state"
        if initial is not None and initial.initialization_data is not None:
            data = initial.initialization_data
            if data.agent_data is not None:
                apply_update(self.db, self.spec.db, data.agent_data)
            if data.user_data is not None:
                user_db = self.spec.db if self.spec.shared_db else self.spec.user_db
                if user_db is None:
                    raise Tau2DataError(f"{where}: domain {self.loaded.name} has no user database to update")
                apply_update(self.db, user_db, data.user_data)
        for action in (initial.initialization_actions or []) if initial is not None else []:
            self.run_function(action)
        for index, call, recorded in tool_call_pairs(history or [], where):
            if not self.has_tool(call.name) or not self.mutates(call.name):
                continue
            content, _ = self.response(call)
            if loads_or_text(content) != loads_or_text(recorded.content):  # type: ignore[arg-type]
                raise Tau2DataError(
                    f"{where}: message {index}: replayed {call.name} returned {content!r}, "
                    f"the history says {recorded.content!r}"
                )
        self.sync()

    def _start(self) -> tuple[State, dict[str, Any]]:
        initial = self.initial_state or InitialState()
        if initial.is_empty() and self.spec.sync is None:
            return self.loaded.base, {}
        options = {k: v for k, v in self.options.items() if k != "folder"}  # the folder is the domain's
        key = stable_hash([initial.model_dump(mode="json"), options], 32)
        start = self._cache.get(key)
        if start is None:
            fresh = Tau2Environment(self.loaded, options=self.options)
            fresh.set_state(initial, initial.message_history)
            start = self._cache[key] = (fresh.db.snapshot(), fresh.session)
        return start


__all__ = ["Tau2Environment"]
