"""``state``: the environment's end state against the gold state (the state reached by
replaying the task's reference actions on a fresh environment) and/or explicit field
assertions."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from pydantic import Field

from ..core.results import GradeResult, Outcome
from ..core.task import Task
from ..core.transcript import Transcript
from ..envs.state import Snapshot, State, diff
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
    ignore: list[str] = Field(default_factory=list, description="table.field paths not compared")
    assertions: list[Assertion] = Field(default_factory=list, alias="assert")


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


class StateGrader(Grader[StateParams]):
    kind = "state"
    Params = StateParams

    @classmethod
    def coerce(cls, raw: Any) -> Any:
        if raw in (None, "gold", True):
            return {"gold": True}
        if raw is False:
            return {"gold": False}
        return raw

    def gold_state(self, task: Task) -> State | Snapshot:
        """The state after replaying the reference actions (ToolError if one fails).
        Computed once per task and domain: the k trials of a task share it."""
        return _GOLD.get(task, self.domain, lambda: self._replay(task))

    def _replay(self, task: Task) -> State | Snapshot:
        env = self.domain.environment(task, task.as_of)  # type: ignore[arg-type]
        env.reset(task.initial_state.seed)
        for i, action in enumerate(task.reference.actions):
            try:
                env.call(action.name, dict(action.args))
            except ToolError as exc:
                raise ToolError(f"reference action {i} ({action.name}) failed: {exc}") from None
        return env.snapshot()

    def _ignored(self, change: dict[str, Any]) -> bool:
        """Is this difference in a field (``table.field``) or table the params ignore?"""
        ignore = self.params.ignore
        return change["table"] in ignore or (
            change["op"] == "change" and f"{change['table']}.{change['field']}" in ignore
        )

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        final = outcome.final_state
        if final is None:
            return self.skip("no final state was captured for this trial")
        problems: list[str] = []
        if self.params.gold:
            try:
                gold = self.gold_state(task)
            except ToolError as exc:
                return self.result(
                    None, f"cannot build the gold state: {exc}", skipped=True, category="grader_error"
                )
            changes = [c for c in diff(gold, final) if not self._ignored(c)]
            if changes:
                problems.append(f"end state differs from gold: {_describe(changes)}")
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
        if problems:
            return self.result(False, "; ".join(problems), category="wrong_end_state")
        what = "end state matches gold" if self.params.gold else "assertions hold"
        return self.result(True, what)


class _GoldCache:
    """Gold states by task object and domain, held weakly: an entry goes when its task
    does (a run's tasks live as long as the run), and a frozen state is shared safely."""

    def __init__(self) -> None:
        self._entries: dict[tuple[int, int], tuple[weakref.ref[Task], State | Snapshot]] = {}

    def get(self, task: Task, domain: object, build: Callable[[], State | Snapshot]) -> State | Snapshot:
        key = (id(task), id(domain))
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
