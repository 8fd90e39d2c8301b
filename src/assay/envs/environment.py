"""The Environment protocol, the domain protocol and a tool-backed environment."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..core.messages import ToolSpec
from ..core.task import InitialState, Task
from .state import Database, Snapshot, State
from .tools import Caller, InvalidToolCall, ToolContext, ToolError, Toolkit, arguments_key, render_result

#: How many reads a frozen state memoises at most (see ``ToolEnvironment``).
MAX_READS = 4096


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


def _merge(base: Any, patch: Any) -> Any:
    """``patch`` deep-merged into ``base``: mappings key by key, anything else replaced."""
    if isinstance(base, dict) and isinstance(patch, dict):
        return {**base, **{k: _merge(base.get(k), v) if k in base else v for k, v in patch.items()}}
    return patch


class ToolEnvironment:
    """An Environment made of a :class:`Database` and a :class:`Toolkit`.

    ``build`` makes the base database for a seed; then the task's initial state is
    applied (:class:`~assay.core.task.InitialState`: ``records`` upserted, ``data``
    deep-merged into records, ``actions`` run, the ``history``'s state-changing calls
    replayed). Base databases are cached per seed and copied, so ``reset`` is cheap.
    ``user_tools`` limits the user's tools (dual control) to those named.

    ``memo_reads``: the toolkit's tools that are not marked ``write`` are pure functions
    of (state, arguments, caller, now, seed) that change nothing. Their results (and
    refusals) are then memoised on the frozen state a trial starts from, while the
    trial has not changed it: the k trials of a task read the same state. A call that
    wrote after all is not memoised.
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
        initial: InitialState | None = None,
        user_tools: list[str] | None = None,
        memo_reads: bool = False,
    ):
        self.toolkit = toolkit
        self._memo_reads = memo_reads
        self._build = build
        self._initial = initial or InitialState(records=dict(records or {}))
        self._user_tools = user_tools
        self.now = now
        self.version = version
        self._cache = cache if cache is not None else {}
        self.db = Database({})
        self._seed = 0

    def reset(self, seed: int) -> None:
        base = self._cache.get(seed)
        if base is None:
            base = self._cache[seed] = self._build(seed)
        initial = self._initial
        self.db = _with_records(base, initial).copy()
        self._seed = seed
        for action in initial.actions:
            self.call(action.name, dict(action.args), for_=action.requestor)
        writes = self.toolkit.write_tools()
        for message in initial.history:
            for call in message.tool_calls:
                if call.name in writes:
                    self.call(call.name, dict(call.args), for_=call.requestor)

    def tools(self, for_: Caller = "agent") -> list[ToolSpec]:
        specs = self.toolkit.specs(for_)
        if for_ == "user" and self._user_tools is not None:
            return [s for s in specs if s.name in self._user_tools]
        return specs

    def call(self, name: str, args: dict[str, Any], for_: Caller = "agent") -> str:
        if for_ == "user" and self._user_tools is not None and name not in self._user_tools:
            available = ", ".join(sorted(self._user_tools))
            raise InvalidToolCall(f"unknown tool {name!r}; available tools: {available}")
        tool = self.toolkit.get(name, for_)
        reads = self.db.reads() if self._memo_reads and not tool.write else None
        if reads is None:
            ctx = ToolContext(self.db, self.now, None, for_, seed=self._seed)  # type: ignore[arg-type]
            return render_result(tool(ctx, args))
        arguments = arguments_key(args)
        if arguments is None:
            ctx = ToolContext(self.db, self.now, None, for_, seed=self._seed)  # type: ignore[arg-type]
            return render_result(tool(ctx, args))
        key = (tool, arguments, for_, self.now, self._seed)
        hit = reads.get(key)
        if hit is not None:
            refused, text = hit
            if refused is not None:
                raise refused(text)
            return str(text)
        ctx = ToolContext(self.db, self.now, None, for_, seed=self._seed)  # type: ignore[arg-type]
        try:
            text = render_result(tool(ctx, args))
        except ToolError as exc:
            if (
                type(exc) in (ToolError, InvalidToolCall)
                and self.db.reads() is reads
                and len(reads) < MAX_READS
            ):
                reads[key] = (type(exc), str(exc))
            raise
        if self.db.reads() is reads and len(reads) < MAX_READS:  # it wrote nothing
            reads[key] = (None, text)
        return text

    def snapshot(self) -> State:
        return self.db.snapshot()

    def write_tools(self) -> set[str]:
        return self.toolkit.write_tools()


#: The base database with a task's records and data applied, by (base, initial state),
#: held weakly on the initial state: the same for every trial of the task (and frozen,
#: so each trial continues from it in a layer of its own).
_PREPARED: dict[tuple[int, int], tuple[weakref.ref[InitialState], Database, Database]] = {}


def _with_records(base: Database, initial: InitialState) -> Database:
    """``base`` with ``initial``'s records upserted and its data deep-merged, built once
    per (base, initial state) and shared read-only (copy it to write)."""
    if not initial.records and not initial.data:
        return base
    key = (id(base), id(initial))
    hit = _PREPARED.get(key)
    if hit is not None and hit[0]() is initial and hit[1] is base:
        return hit[2]
    db = base.copy()
    db.apply_records(initial.records)
    for table, rows in initial.data.items():
        for key_, patch in (rows or {}).items():
            db.put(table, str(key_), _merge(db.get(table, str(key_)) or {}, patch))
    db.snapshot()  # frozen: trials copy it

    def forget(_: object) -> None:
        _PREPARED.pop(key, None)

    _PREPARED[key] = (weakref.ref(initial, forget), base, db)
    return db


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
    memo_reads: bool = False
    """The tools not marked ``write`` are pure and change nothing: their results are
    memoised per state (see :class:`ToolEnvironment`)."""
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
            now=now,
            version=f"{self.name}-{self.version}",
            cache=self._cache,
            initial=task.initial_state,
            user_tools=task.user_tools,
            memo_reads=self.memo_reads,
        )


def _empty_db(seed: int) -> Database:
    return Database({})


#: The domain of suites that name none: no tools, empty state (single-turn Q&A, RAG).
NO_DOMAIN = ToolDomain(name="none", toolkit=Toolkit([]), generate=_empty_db)
