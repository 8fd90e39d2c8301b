"""``state``: the environment's end state against the gold state (the state reached by
replaying the task's reference actions on a fresh environment) and/or explicit field
assertions.

A domain that defines its own gold state and comparison
(:class:`~assay.envs.capabilities.GoldStateDomain`, e.g. the tau2 ports) gives its own
verdict; other domains get :func:`~assay.envs.capabilities.replay_gold` and assay's diff.
Reference actions that fail stop the grade (``failed_actions: error``, the default) or
are skipped (``ignore``, as tau2 does; a gold-state domain decides itself): the grade
says which were ignored.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from ..core.results import GradeResult, Outcome
from ..core.sources import PathKey
from ..core.task import Task
from ..core.transcript import Transcript
from ..envs.capabilities import GoldState, GoldStateDomain, StateComparison, compare_by_diff, replay_gold
from ..envs.environment import Domain
from ..envs.state import Snapshot, State
from ..envs.tools import ToolError
from .base import Grader, Params
from .matching import values_equal


class Assertion(Params):
    table: str
    key: str
    field: str | None = None
    equals: Any = None
    exists: bool = True


class StateParams(Params):
    gold: bool = True
    ignore: list[str] = Field(
        default_factory=list,
        description="tables or table.field paths not compared (a path covers what is below it)",
    )
    assertions: list[Assertion] = Field(default_factory=list, alias="assert")
    failed_actions: Literal["error", "ignore"] = "error"


def _describe(changes: list[dict[str, Any]], limit: int = 3) -> str:
    parts = []
    for c in changes[:limit]:
        if c["op"] == "change":
            parts.append(f"{c['table']} {c['key']}.{c['field']} is {c['new']!r}, expected {c['old']!r}")
        elif c["op"] == "add":
            parts.append(f"{c['table']} {c['key']} exists but should not")
        else:
            parts.append(f"{c['table']} {c['key']} is missing")
    more = f" (+{len(changes) - limit} more)" if len(changes) > limit else ""
    return "; ".join(parts) + more


def is_ignored(change: dict[str, Any], ignore: list[str]) -> bool:
    """Does an ignore entry cover this difference? An entry names a table
    (``orders``), a field (``orders.status``) or a nested path (``orders.items``,
    ``orders.items[0].price``); it covers the place it names and everything below it."""
    if change["table"] in ignore:
        return True
    if change["op"] != "change":
        return False
    place = f"{change['table']}.{change['field']}"
    return any(place == entry or place.startswith((entry + ".", entry + "[")) for entry in ignore)


class StateGrader(Grader[StateParams]):
    kind = "state"
    Params = StateParams
    shared = True

    @classmethod
    def coerce(cls, raw: Any) -> Any:
        if raw in (None, "gold", True):
            return {"gold": True}
        if raw is False:
            return {"gold": False}
        return raw

    @classmethod
    def check(cls, params: StateParams, domain: Domain, task: Task) -> list[tuple[PathKey, str]]:
        """A domain without tools has no state an agent could change: the grader would
        pass every trial, so it is a suite mistake."""
        if not domain.toolkit.names():
            return [
                ((), f"a state grader needs a domain with tools and state; domain {domain.name!r} has none")
            ]
        return []

    def gold(self, task: Task) -> GoldState:
        """The gold state: the domain's own, or the reference actions replayed. Built once
        per task, domain and ``failed_actions`` rule: the k trials of a task share it."""
        rule = self.params.failed_actions
        return _GOLD.get((id(task), id(self.domain), rule), task, lambda: self._build_gold(task))

    def _build_gold(self, task: Task) -> GoldState:
        if isinstance(self.domain, GoldStateDomain):
            return self.domain.gold_state(task)
        return replay_gold(self.domain, task, ignore_failures=self.params.failed_actions == "ignore")

    def compare(self, final: State | Snapshot, gold: State | Snapshot) -> StateComparison:
        if isinstance(self.domain, GoldStateDomain):
            return self.domain.compare_states(final, gold)
        return compare_by_diff(final, gold)

    def gold_state(self, task: Task) -> State | Snapshot:
        """The state after replaying the reference actions (ToolError if one fails)."""
        return self.gold(task).state

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        final = outcome.final_state
        if final is None:
            return self.skip("no final state was captured for this trial")
        problems: list[str] = []
        notes: list[str] = []
        if self.params.gold:
            try:
                gold = self.gold(task)
            except ToolError as exc:
                return self.result(
                    None, f"cannot build the gold state: {exc}", skipped=True, category="grader_error"
                )
            notes = [
                f"reference action {i} ({name}) failed and was ignored: {error}"
                for i, name, error in gold.ignored
            ]
            verdict = self.compare(final, gold.state)
            if not verdict.match:
                changes = [c for c in verdict.changes if not is_ignored(c, self.params.ignore)]
                if changes:
                    problems.append(f"end state differs from gold: {_describe(changes)}")
                elif verdict.other or not verdict.changes:  # else: every difference is ignored
                    problems.append(
                        "end state differs from gold: " + ("; ".join(verdict.other) or "(no detail)")
                    )
        for a in self.params.assertions:
            record = _record(final, a.table, a.key)
            if not a.exists:
                if record is not None:
                    problems.append(f"{a.table} {a.key} should not exist")
            elif record is None:
                problems.append(f"{a.table} {a.key} does not exist")
            elif a.field is not None and not values_equal(record.get(a.field), a.equals):
                problems.append(
                    f"{a.table} {a.key}.{a.field} is {record.get(a.field)!r}, expected {a.equals!r}"
                )
        metrics = {"ignored_gold_actions": float(len(notes))} if notes else {}
        if problems:
            return self.result(
                False, "; ".join(problems + notes), category="wrong_end_state", metrics=metrics
            )
        what = "end state matches gold" if self.params.gold else "assertions hold"
        return self.result(True, "; ".join([what, *notes]), metrics=metrics)


class _GoldCache:
    """Gold states by task object, domain and rule, held weakly: an entry goes when its
    task does (a run's tasks live as long as the run), and a frozen state is shared safely."""

    def __init__(self) -> None:
        self._entries: dict[tuple[int, int, str], tuple[weakref.ref[Task], GoldState]] = {}

    def get(self, key: tuple[int, int, str], task: Task, build: Callable[[], GoldState]) -> GoldState:
        hit = self._entries.get(key)
        if hit is not None and hit[0]() is task:
            return hit[1]
        value = build()  # a ToolError propagates and nothing is kept
        entries = self._entries

        def forget(_: object) -> None:
            entries.pop(key, None)

        self._entries[key] = (weakref.ref(task, forget), value)
        return value


_GOLD = _GoldCache()


def _record(state: State | Snapshot, table: str, key: str) -> dict[str, Any] | None:
    if isinstance(state, State):
        return state.record(table, key) if table in state else None
    return state.get(table, {}).get(key)
