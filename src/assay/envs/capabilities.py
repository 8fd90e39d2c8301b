"""What a domain may add to the :class:`~assay.envs.environment.Domain` protocol. A
domain declares a capability by subclassing its class (explicitly, never probed):

- :class:`GoldStateDomain`: its own gold state and state comparison (tau2 domains: gold
  actions replayed without the phone's synchronisation, failures ignored, databases
  compared type for type and list order). Other domains get :func:`replay_gold` and
  assay's diff.
- :class:`AssertionDomain`: named assertion functions over a state (tau2's
  ``assert_*``, a suite module's ``@assertion`` functions), for the ``env_assert`` grader.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.messages import Requestor
from ..core.task import Task
from .environment import Domain
from .state import Snapshot, State
from .state_diff import diff
from .tools import ToolError


@dataclass
class GoldState:
    """The state a task's reference actions lead to, and the reference actions that
    failed on the way and were ignored (``(index, name, error)``)."""

    state: State | Snapshot
    ignored: list[tuple[int, str, str]] = field(default_factory=list)


@dataclass
class StateComparison:
    """An end state against the gold state: ``match``, the differences as diff entries
    (``assay.envs.diff``), and differences a diff cannot show (value types, order)."""

    match: bool
    changes: list[dict[str, Any]] = field(default_factory=list)
    other: list[str] = field(default_factory=list)


class GoldStateDomain(ABC):
    """A domain that defines its gold state and how an end state is compared with it."""

    @abstractmethod
    def gold_state(self, task: Task) -> GoldState:
        """The state after the task's initial state and reference actions."""

    @abstractmethod
    def compare_states(self, final: State | Snapshot, gold: State | Snapshot) -> StateComparison:
        """The domain's verdict on an end state against the gold state."""


class AssertionDomain(ABC):
    """A domain with named assertion functions over a state."""

    @abstractmethod
    def assertion_names(self, requestor: Requestor = "agent") -> list[str]:
        """The assertions of one side (``agent``: the agent's world; ``user``: the user's)."""

    @abstractmethod
    def check_assertion(
        self, state: State | Snapshot, name: str, args: Mapping[str, Any], requestor: Requestor = "agent"
    ) -> bool:
        """Whether assertion ``name`` holds on ``state`` (which it must not change);
        a call it refuses raises an exception saying why."""


def replay_gold(domain: Domain, task: Task, ignore_failures: bool = False) -> GoldState:
    """The default gold state: a fresh environment for ``task``, its reference actions
    replayed on it (each by its requestor). A failing action raises :class:`ToolError`
    naming it, or with ``ignore_failures`` is skipped and listed."""
    env = domain.environment(task, task.as_of)  # type: ignore[arg-type]
    env.reset(task.initial_state.seed)
    ignored: list[tuple[int, str, str]] = []
    for i, action in enumerate(task.reference.actions):
        try:
            env.call(action.name, dict(action.args), for_=action.requestor)
        except ToolError as exc:
            if not ignore_failures:
                raise ToolError(f"reference action {i} ({action.name}) failed: {exc}") from None
            ignored.append((i, action.name, str(exc)))
    return GoldState(env.snapshot(), ignored)


def compare_by_diff(final: State | Snapshot, gold: State | Snapshot) -> StateComparison:
    """The default comparison: equal when assay's diff is empty."""
    changes = diff(gold, final)
    return StateComparison(not changes, changes)


__all__ = [
    "AssertionDomain",
    "GoldState",
    "GoldStateDomain",
    "StateComparison",
    "compare_by_diff",
    "replay_gold",
]
