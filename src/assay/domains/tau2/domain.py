"""A ported tau2 domain as an assay :class:`~assay.envs.environment.Domain`.

A tau2 task's parts travel in assay's own (hashed) task fields: the initial state as
``initial_state.data`` (``{agent: ..., user: ...}``: tau2's ``initialization_data``),
``initial_state.actions`` (its ``initialization_actions``: toolkit functions by name, on
the ``requestor``'s side) and ``initial_state.history`` (its ``message_history``); the
user's tools as ``user_tools``; the gold actions as ``reference.actions`` (with
``requestor`` and ``compare_args``).

The domain declares two capabilities (:mod:`assay.envs.capabilities`): its gold state is
tau2's (the gold actions run without the phone's synchronisation, on a fresh
environment, failures ignored) and so is its comparison (agent and user databases
equal value for value and type for type, list-backed tables in order); its assertion
functions are tau2's toolkit functions (``assert_*``), for ``env_assert``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from ...core.messages import Requestor as AssayRequestor
from ...core.task import Task as AssayTask
from ...envs.capabilities import AssertionDomain, GoldState, GoldStateDomain, StateComparison
from ...envs.local import DomainContext
from ...envs.state import Database, Snapshot, State
from ...envs.state_diff import diff
from ...envs.tools import Toolkit
from .environment import Tau2Environment
from .loader import LoadedDomain, load_domain
from .store import Tau2DataError, table_order
from .tasks import (
    EnvAssertion,
    EnvFunctionCall,
    InitializationData,
    InitialState,
    Message,
    Requestor,
    Task,
    ToolCall,
)

_LOCK = threading.Lock()
_DOMAINS: dict[tuple[str, str], Tau2Domain] = {}
#: Seed of the gold environment (the live one is reset with the task's seed, 0): tau2
#: names a new telecom bill with a random uuid, so two environments never agree on one.
GOLD_SEED = 1


def _side(requestor: str) -> Requestor:
    return "user" if requestor == "user" else "assistant"


def tau2_initial_state(task: AssayTask) -> InitialState | None:
    """An assay task's initial state as tau2's ``InitialState`` (None when empty)."""
    initial = task.initial_state
    if initial.records:
        raise Tau2DataError(
            f"task {task.id}: initial_state.records is not used by tau2 domains; give tau2's "
            "initialization_data as initial_state.data {agent: ..., user: ...}"
        )
    unknown = sorted(set(initial.data) - {"agent", "user"})
    if unknown:
        raise Tau2DataError(
            f"task {task.id}: initial_state.data.{unknown[0]}: tau2 data has 'agent' and 'user'"
        )
    data = (
        InitializationData(agent_data=initial.data.get("agent"), user_data=initial.data.get("user"))
        if initial.data
        else None
    )
    actions = [
        EnvFunctionCall(env_type=_side(a.requestor), func_name=a.name, arguments=dict(a.args))
        for a in initial.actions
    ]
    history = [
        Message(
            role=h.role,
            content=h.content if (h.content or not h.tool_calls) else None,
            tool_calls=[
                ToolCall(id=c.id, name=c.name, arguments=dict(c.args), requestor=_side(c.requestor))
                for c in h.tool_calls
            ]
            or None,
            id=h.tool_call_id,
            error=h.error,
        )
        for h in initial.history
    ]
    state = InitialState(
        initialization_data=data, initialization_actions=actions or None, message_history=history or None
    )
    return None if state.is_empty() else state


class Tau2Domain(GoldStateDomain, AssertionDomain):
    """tau2 domain ``name`` read from a data folder: its policy, its tools (agent and
    user), its base state, and environments for its tasks."""

    templates: Mapping[str, Callable[..., Any]] = {}

    def __init__(self, loaded: LoadedDomain):
        self.loaded = loaded
        self.name = f"tau2-{loaded.name}"
        self.version = loaded.fingerprint
        self.policy = loaded.policy
        spec = loaded.spec
        tools = [*spec.tools.tools, *(spec.user_tools.tools if spec.user_tools is not None else [])]
        self.toolkit = Toolkit(tools)
        self._initial: dict[str, tuple[State, dict[str, Any]]] = {}

    def base_state(self, seed: int) -> Database:
        """The domain's database as the data folder holds it (the same for every seed)."""
        return Database(self.loaded.spec.keys, self.loaded.base)

    def environment(self, task: AssayTask, now: datetime) -> Tau2Environment:
        """A fresh, not yet reset environment for an assay task (its initial state and
        user tools from the task's own fields). tau2 domains keep their own fixed "now",
        so ``now`` is not used."""
        options = self.options_for((a.name, a.args) for a in task.reference.actions)
        return self.environment_for(tau2_initial_state(task), user_tools=task.user_tools, options=options)

    def environment_for(
        self,
        initial_state: InitialState | None = None,
        *,
        user_tools: list[str] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> Tau2Environment:
        """A fresh, not yet reset environment starting from ``initial_state``; the state
        after an initial state is computed once and shared by later environments.
        ``options``: what the task's gold actions imply (:meth:`options_for`)."""
        return Tau2Environment(
            self.loaded, initial_state, user_tools=user_tools, cache=self._initial, options=options
        )

    def options_for(self, gold_actions: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
        """The environment options a task's gold actions ``(name, arguments)`` imply, as
        tau2's runner derives them (banking: the ``read_log_allowlist``); none elsewhere."""
        derive = self.loaded.spec.options
        return derive(list(gold_actions)) if derive is not None else {}

    def task_options(self, task: Task) -> dict[str, Any]:
        """:meth:`options_for` a tau2 task's gold actions."""
        actions = task.evaluation_criteria.actions if task.evaluation_criteria is not None else None
        return self.options_for((a.name, a.arguments) for a in actions or [])

    def task_environment(self, task: Task, seed: int = 0) -> Tau2Environment:
        """A reset environment for a tau2 task (its ``initial_state`` applied)."""
        env = self.environment_for(
            task.initial_state, user_tools=task.user_tools, options=self.task_options(task)
        )
        env.reset(seed)
        return env

    # --- GoldStateDomain -------------------------------------------------------------------
    def gold_state(self, task: AssayTask) -> GoldState:
        """tau2's gold environment: the initial state (with its history), then the gold
        actions by their requestor without synchronising; failing ones are ignored."""
        env = self.environment(task, datetime(2000, 1, 1))
        env.reset(GOLD_SEED)
        ignored: list[tuple[int, str, str]] = []
        for i, action in enumerate(task.reference.actions):
            try:
                env.make_tool_call(action.name, dict(action.args), _side(action.requestor))
            except Exception as exc:  # tau2 logs a failing gold action and goes on
                ignored.append((i, action.name, str(exc)))
        return GoldState(env.snapshot(), ignored)

    def compare_states(self, final: State | Snapshot, gold: State | Snapshot) -> StateComparison:
        """tau2's database check: both sides equal value for value, type for type, and
        list-backed tables in the same order."""
        from .evaluate import compare_databases

        predicted, expected = self._state(final), self._state(gold)
        check = compare_databases(self, predicted, expected)
        changes = [] if check.match else diff(expected, predicted)
        other: list[str] = []
        if not check.match:
            spec = self.loaded.spec
            for side in (spec.db, spec.user_db):
                if side is None:
                    continue
                ours, theirs = table_order(predicted, side), table_order(expected, side)
                other += [f"table {t}: records in another order" for t in ours if ours[t] != theirs.get(t)]
            if not changes and not other:
                other.append("values equal but of another type (tau2 compares 1 and 1.0 as different)")
        where = (
            ""
            if check.match
            else (" (user side)" if check.agent_match else " (agent side)" if check.user_match else "")
        )
        if where:
            other = [o + where for o in other]
        return StateComparison(check.match, changes, other)

    def _state(self, state: State | Snapshot) -> State:
        return state if isinstance(state, State) else Database(self.loaded.spec.keys, state).snapshot()

    # --- AssertionDomain -------------------------------------------------------------------
    def assertion_names(self, requestor: AssayRequestor = "agent") -> list[str]:
        spec = self.loaded.spec
        toolkit = spec.user_tools if requestor == "user" else spec.tools
        return sorted(toolkit.functions) if toolkit is not None else []

    def check_assertion(
        self, state: State | Snapshot, name: str, args: Mapping[str, Any], requestor: AssayRequestor = "agent"
    ) -> bool:
        from .evaluate import assertion_holds

        assertion = EnvAssertion(env_type=_side(requestor), func_name=name, arguments=dict(args))
        return assertion_holds(self, self._state(state), assertion)


def tau2_domain(name: str, data_dir: Path | str) -> Tau2Domain:
    """The tau2 domain ``name`` (``airline``, ``retail``, ``telecom``,
    ``telecom-workflow``, ``mock`` or ``banking_knowledge``) with its data read from ``data_dir`` (a folder
    holding ``domains/``, a tau2 checkout, or the domain's own folder). Data are read
    once per process; later calls share them."""
    loaded = load_domain(name, data_dir)
    key = (name, loaded.fingerprint + str(loaded.folder))
    with _LOCK:
        domain = _DOMAINS.get(key)
        if domain is None or domain.loaded is not loaded:
            domain = _DOMAINS[key] = Tau2Domain(loaded)
    return domain


def suite_domain(ctx: DomainContext) -> Tau2Domain:
    """The factory an imported tau2 suite names (``domain: {factory:
    assay.domains.tau2:suite_domain, options: {domain: NAME}, data: [data]}``): the
    ported domain reading the suite's own copy of tau2's data."""
    name = ctx.options.get("domain")
    if not isinstance(name, str):
        raise Tau2DataError(
            f"{ctx.root / 'suite.yaml'}: domain.options.domain: name the tau2 domain (airline, ...)"
        )
    if not ctx.data_paths:
        raise Tau2DataError(f"{ctx.root / 'suite.yaml'}: domain.data: name the folder holding tau2's data")
    return tau2_domain(name, ctx.data_paths[0])


__all__ = ["GOLD_SEED", "Tau2Domain", "suite_domain", "tau2_domain", "tau2_initial_state"]
