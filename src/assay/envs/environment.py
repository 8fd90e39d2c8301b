"""The Environment protocol, the domain protocol and a tool-backed environment."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..core.messages import ToolSpec
from ..core.task import Task
from .state import Database, Snapshot, State
from .tools import Caller, ToolContext, Toolkit, render_result


@runtime_checkable
class Environment(Protocol):
    """The world of one trial: state plus the tools the agent (and user) may call."""

    version: str

    def reset(self, seed: int) -> None:
        """Build the initial state. The same seed gives the same state, always."""

    def tools(self, for_: Caller = "agent") -> list[ToolSpec]:
        """Tools visible to the agent (or, dual control, to the user)."""

    def call(self, name: str, args: dict[str, Any], for_: Caller = "agent") -> str:
        """Run a tool; raise ``ToolError`` with an actionable message on misuse."""

    def snapshot(self) -> State | Snapshot:
        """The current state, frozen: a :class:`State` (cheap) or a plain dict of tables."""

    def write_tools(self) -> set[str]:
        """Names of the tools that change state."""


class ToolEnvironment:
    """An Environment made of a :class:`Database` and a :class:`Toolkit`.

    ``build`` makes the base database for a seed; ``records`` are upserted over it.
    Base databases are cached per seed and copied, so ``reset`` is cheap.
    """

    def __init__(
        self,
        toolkit: Toolkit,
        build: Callable[[int], Database],
        *,
        records: Mapping[str, list[dict[str, Any]]] | None = None,
        now: datetime,
        version: str = "1",
        cache: dict[int, Database] | None = None,
    ):
        self.toolkit = toolkit
        self._build = build
        self._records = records or {}
        self.now = now
        self.version = version
        self._cache = cache if cache is not None else {}
        self.db = Database({})
        self._seed = 0

    def reset(self, seed: int) -> None:
        base = self._cache.get(seed)
        if base is None:
            base = self._cache[seed] = self._build(seed)
        self.db = base.copy()
        self.db.apply_records(self._records)
        self._seed = seed

    def tools(self, for_: Caller = "agent") -> list[ToolSpec]:
        return self.toolkit.specs(for_)

    def call(self, name: str, args: dict[str, Any], for_: Caller = "agent") -> str:
        tool = self.toolkit.get(name, for_)
        ctx = ToolContext(self.db, self.now, None, for_, seed=self._seed)  # type: ignore[arg-type]
        return render_result(tool(ctx, args))

    def snapshot(self) -> State:
        return self.db.snapshot()

    def write_tools(self) -> set[str]:
        return self.toolkit.write_tools()


@runtime_checkable
class Domain(Protocol):
    """A family of tasks sharing one world: data generator, tools, policy, templates."""

    name: str
    version: str
    policy: str
    toolkit: Toolkit
    templates: Mapping[str, Callable[..., Any]]

    def base_state(self, seed: int) -> Database:
        """The generated database for ``seed`` (before a task's own records)."""

    def environment(self, task: Task, now: datetime) -> Environment:
        """A fresh, not yet reset environment for ``task``."""


@dataclass
class ToolDomain:
    """A :class:`Domain` from parts; most domains need nothing more."""

    name: str
    toolkit: Toolkit
    generate: Callable[[int], Database]
    policy: str = ""
    version: str = "1"
    templates: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    _cache: dict[int, Database] = field(default_factory=dict, repr=False)

    def base_state(self, seed: int) -> Database:
        base = self._cache.get(seed)
        if base is None:
            base = self._cache[seed] = self.generate(seed)
        return base.copy()

    def environment(self, task: Task, now: datetime) -> Environment:
        return ToolEnvironment(
            self.toolkit,
            self.generate,
            records=task.initial_state.records,
            now=now,
            version=f"{self.name}-{self.version}",
            cache=self._cache,
        )


def _empty_db(seed: int) -> Database:
    return Database({})


#: The domain of suites that name none: no tools, empty state (single-turn Q&A, RAG).
NO_DOMAIN = ToolDomain(name="none", toolkit=Toolkit([]), generate=_empty_db)
