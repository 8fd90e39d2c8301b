"""Tasks and suites: the versioned golden set, as data."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    field_validator,
    model_validator,
)

Stratum = Literal["normal", "edge", "adversarial", "high_risk"]
Requestor = Literal["agent", "user"]
Speaker = Literal["user", "agent"]
Split = Literal["regression", "capability", "holdout"]
STRATA: tuple[str, ...] = ("normal", "edge", "adversarial", "high_risk")
SPLITS: tuple[str, ...] = ("regression", "capability", "holdout")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


@lru_cache(maxsize=256)
def _timezone(name: str) -> str:
    """``name`` if it is an IANA time zone (``Europe/Paris``, ``UTC``): agents are told
    the task's zone, and a misspelt one would be passed on without a word. Where the
    system has no time zone database, only ``UTC`` can be checked, and others are taken."""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        if name == "UTC" or not _have_zone_database():
            return name
        message = f"unknown time zone {name!r}; use an IANA name such as UTC or Europe/Paris"
        raise ValueError(message) from None
    return name


@lru_cache(maxsize=1)
def _have_zone_database() -> bool:
    return bool(available_timezones())


TimezoneName = Annotated[str, AfterValidator(_timezone)]


class Limits(_Strict):
    """Per-trial limits. A trial that reaches one ends with that termination reason."""

    max_turns: int = Field(30, ge=1, description="agent + user messages in the conversation")
    max_tool_calls: int = Field(40, ge=0)
    timeout_s: float = Field(120.0, gt=0)
    max_tokens: int | None = Field(None, ge=1, description="total model tokens per trial")
    max_cost_usd: float | None = Field(None, gt=0)

    def merged(self, override: dict[str, Any] | None) -> Limits:
        """These limits with ``override``'s, validated (``"1e3"`` becomes a number)."""
        if not override:
            return self
        return Limits.model_validate({**self.model_dump(), **override})


class Action(_Strict):
    """A tool call in a reference solution or a grader's expectation. ``requestor`` says
    who makes it: the agent, or (dual control) the user on their own tools.
    ``compare_args`` names the arguments that identify the call (None: all of them)."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    requestor: Requestor = "agent"
    compare_args: list[str] | None = None


class UserScenario(_Strict):
    """What the simulated user wants and knows. Facts in ``known`` are disclosed only
    when the agent asks for them; anything else the user does not know. ``actions`` are
    what the user does on their own tools (dual control) when the agent asks: the
    scripted user performs the next one when the agent's message names its tool; they
    are never shown to an LLM user (they are the solution, not the scenario)."""

    opening: str = "Hi, I need some help."
    goal: str = ""
    known: dict[str, str | int | float] = Field(default_factory=dict)
    confirm: bool = True
    pushback: list[str] = Field(default_factory=list)
    follow_ups: list[str] = Field(default_factory=list)
    instructions: str = ""
    actions: list[Action] = Field(default_factory=list)


class GraderSpec(_Strict):
    """One grader of a task: a registered kind plus its parameters.

    In files it is written short, ``{state: gold}``, or long,
    ``{kind: state, params: gold, gating: false, name: end-state}``.
    """

    kind: str
    params: Any = None
    gating: bool = True
    name: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, data: Any) -> Any:
        if isinstance(data, dict) and "kind" not in data:
            meta = {k: data[k] for k in ("gating", "name") if k in data}
            rest = [k for k in data if k not in meta]
            if len(rest) == 1:
                return {"kind": rest[0], "params": data[rest[0]], **meta}
        if isinstance(data, str):
            return {"kind": data}
        return data

    @property
    def label(self) -> str:
        return self.name or self.kind


class Reference(_Strict):
    """The task's reference solution: the actions that solve it (the user's own, dual
    control, with ``requestor: user``) and, optionally, the expected answer and the
    tools the agent needs (default: those of its actions)."""

    actions: list[Action] = Field(default_factory=list)
    answer: str | None = None
    tools: list[str] | None = None

    def necessary_tools(self) -> set[str]:
        return (
            set(self.tools)
            if self.tools is not None
            else {a.name for a in self.actions if a.requestor == "agent"}
        )


class HistoryCall(_Strict):
    """A tool call of a prior conversation (``id`` answered by a ``tool`` message)."""

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    requestor: Requestor = "agent"


class HistoryMessage(_Strict):
    """One message of a prior conversation the task starts from."""

    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[HistoryCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    error: bool = False


class InitialState(_Strict):
    """How the environment starts, in this order: the domain's data generator seed;
    ``records`` upserted over the generated data (keyed by each table's primary key);
    ``data``, updates deep-merged into records (``{table: {key: {field: value}}}``; a
    domain may define its own form: tau2 domains take ``{agent: ..., user: ...}``);
    ``actions``, tool (or domain function) calls run before the conversation; and
    ``history``, a prior conversation: its state-changing calls are replayed and its
    messages open the transcript."""

    seed: int = 0
    records: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    data: dict[str, Any] = Field(default_factory=dict)
    actions: list[Action] = Field(default_factory=list)
    history: list[HistoryMessage] = Field(default_factory=list)


class RecordedCall(_Strict):
    """A tool call as it was recorded in a conversation, with the output it got."""

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    output: str = ""
    error: bool = False
    caller: Literal["agent", "user"] = "agent"


class Replay(_Strict):
    """A recorded conversation to run again (``assay import traces``, docs/traces.md):
    the user's lines in order, the tool calls with their recorded outputs, and how a new
    run's calls are matched to them.

    ``match``: ``exact`` (name and arguments, after dropping ``ignore_arguments``) or
    ``name`` (the name only). ``unrecorded``: what a call that matches no recorded one
    gets: ``error`` (an error message, the divergence recorded) or ``live`` (the suite's
    live domain answers it). ``shadow``: also apply recorded calls to the live domain,
    when the suite has one, so its state follows the conversation (state graders)."""

    user_turns: list[str] = Field(default_factory=list)
    calls: list[RecordedCall] = Field(default_factory=list)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    """Tool definitions as recorded (``{name, description, parameters}``): what the agent
    sees when the suite has no live domain (default: inferred from the calls)."""
    match: Literal["exact", "name"] = "exact"
    ignore_arguments: list[str] = Field(default_factory=list)
    unrecorded: Literal["error", "live"] = "error"
    shadow: bool = True
    source: dict[str, Any] = Field(default_factory=dict)
    """Where the conversation was recorded: trace id, run id, task id, trial, reward."""


class Evidence(_Strict):
    """A fact a task depends on that changes over time, as it was retrieved: where it
    came from, when, and the value. The snapshot track evaluates against this frozen
    value; the probe track re-checks it at run time (docs/lifecycle.md)."""

    id: str = Field(min_length=1)
    source: str = Field(min_length=1)
    """Where the value came from: a URL, an API, a document."""
    retrieved_at: datetime
    value: Any
    fact: str = ""
    """What the value says, in one line."""
    query: dict[str, Any] = Field(default_factory=dict)
    """What a probe needs to look the fact up again (endpoint parameters, a key...)."""
    max_age_days: float | None = Field(None, gt=0)
    """How old the evidence may be before the snapshot track calls it out of date."""
    binds: list[str] = Field(default_factory=list)
    """Dotted paths of the task where the value appears (``initial_state.records.orders.0.status``,
    ``graders.1.params.0``): the probe track rewrites them with the current value."""


class Task(_Strict):
    """One verifiable problem. Templated tasks name a ``template`` and are made
    concrete (ids, names, amounts, reference) by the suite loader for a given seed."""

    id: str = Field(min_length=1)
    description: str = ""
    stratum: Stratum = "normal"
    split: Split = "regression"
    tags: list[str] = Field(default_factory=list)
    difficulty: int = Field(1, ge=1, le=3)
    limits: dict[str, Any] | None = None
    as_of: datetime | None = None
    timezone: TimezoneName | None = None
    initial_state: InitialState = Field(default_factory=InitialState)
    user: UserScenario = Field(default_factory=UserScenario)
    graders: list[GraderSpec] = Field(default_factory=list)
    reference: Reference = Field(default_factory=Reference)
    evidence: list[Evidence] = Field(default_factory=list)
    """Time-sensitive facts the task depends on (snapshot vs probe tracks)."""
    user_tools: list[str] | None = None
    """The user tools (dual control) this task offers the user; None: all the domain's."""
    first_speaker: Speaker = "user"
    """Who opens the conversation (default: the suite's ``defaults.first_speaker``)."""
    greeting: str | None = None
    """When the agent speaks first: its fixed first message (None: the agent writes it)."""
    template: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    instances: int = Field(1, ge=1, le=100_000)
    replay: Replay | None = None
    """A recorded conversation: the scripted user says its lines, the environment serves
    its recorded tool outputs (docs/traces.md)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    _input_hash: str | None = PrivateAttr(default=None)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Task:
        """A copy; with ``update`` its input may differ, so its hash is computed again
        (a cached hash used to travel with the copy: an instance of a spec whose hash had
        been asked for carried the spec's)."""
        copied = super().model_copy(update=update, deep=deep)
        if update:
            copied._input_hash = None
        return copied

    @field_validator("limits")
    @classmethod
    def _check_limits(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            Limits.model_validate(value)
        return value

    def meta(self) -> Any:
        """This task's :class:`~assay.core.results.TaskMeta`."""
        from .results import TaskMeta

        return TaskMeta(
            self.id,
            self.stratum,
            self.split,
            tuple(self.tags),
            self.difficulty,
            self.input_hash(),
            self.template,
            self.description,
        )

    def input_hash(self) -> str:
        """Hash of everything that defines the task's input (not its metadata): the
        identity recorded with every trial as ``task_hash``. Fields left at their
        defaults are not hashed, so a new optional field leaves existing tasks' hashes
        as they were."""
        private = self.__pydantic_private__  # read directly: the attribute costs 2.6 us a look
        cached: str | None = private["_input_hash"]  # type: ignore[index]
        if cached is None:
            from .hashing import stable_hash

            cached = private["_input_hash"] = stable_hash(self.hashed_data())  # type: ignore[index]
        return cached

    def hashed_data(self) -> dict[str, Any]:
        """What :meth:`input_hash` hashes: the task as JSON data, without its metadata
        and the fields left at their defaults."""
        return self.model_dump(mode="json", exclude={"metadata"}, exclude_defaults=True)

    def renamed(self, task_id: str, input_hash: str | None = None) -> Task:
        """This task under another id (the instances of a spec), with its own metadata
        dict; ``input_hash``, when the caller has computed it (see
        :func:`~assay.core.hashing.stable_hashes`), is taken as the copy's hash."""
        copied = super().model_copy(update={"id": task_id, "metadata": dict(self.metadata)})
        copied.__pydantic_private__["_input_hash"] = input_hash  # type: ignore[index]
        return copied


class SuiteDefaults(_Strict):
    trials: int = Field(4, ge=1, le=10_000)  # as --trials
    agent: str | None = None
    """The agent a run uses when none is given (e.g. the domain's reference agent)."""
    user: str = "scripted"
    limits: Limits = Field(default_factory=Limits)
    as_of: datetime | None = None
    timezone: TimezoneName = "UTC"
    data_seed: int = 0
    first_speaker: Speaker = "user"
    greeting: str | None = None
    faults: dict[str, Any] | list[Any] | None = None
    """A fault plan (assay.envs.faults.FaultPlan) injected into every run of the suite."""


class DomainSource(_Strict):
    """A suite's own world (``domain:`` as a mapping in ``suite.yaml``): a tools module
    of the suite folder, or a factory, plus its policy and data files. Paths are
    relative to the suite folder; every file named here is part of the suite's hash."""

    module: str | None = None
    """A Python file of the suite (``tools.py``): its ``@tool`` functions (user tools with
    ``for_="user"``), ``@assertion`` functions and ``POLICY``; or a ``make_domain(ctx)``."""
    factory: str | None = None
    """Instead of ``module``: ``package.module:function`` building the domain from this spec."""
    name: str | None = None
    policy: str | None = None
    """A policy file (default: the module's ``POLICY`` text)."""
    data: list[str] = Field(default_factory=list)
    """Data files or folders: ``*.jsonl`` (one record per line; table = file name) or
    JSON/YAML/TOML files mapping table names to records."""
    keys: dict[str, str] = Field(default_factory=dict)
    """Primary-key field of each table (default ``id``)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Passed to a factory or ``make_domain``."""

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, data: Any) -> Any:
        return {"module": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _one_source(self) -> DomainSource:
        if (self.module is None) == (self.factory is None):
            raise ValueError(
                "give exactly one of module (a .py file of the suite) or factory (pkg.mod:function)"
            )
        return self


def _domain_kind(value: Any) -> str:
    return "registered" if isinstance(value, str) else "own-world"


class Suite(_Strict):
    """A versioned golden set, as written. Loading it (``assay.suites.load_suite``)
    gives a :class:`~assay.suites.LoadedSuite`: the same data plus its folder and
    content hash (its identity)."""

    name: str = Field(min_length=1)
    version: str = "1"
    domain: (
        Annotated[
            Annotated[str, Tag("registered")] | Annotated[DomainSource, Tag("own-world")],
            Discriminator(_domain_kind),
        ]
        | None
    ) = None
    """A registered domain's name, or the suite's own world (a ``.py`` file of the
    suite, or a :class:`DomainSource` mapping)."""
    description: str = ""
    canary: str | None = None
    defaults: SuiteDefaults = Field(default_factory=SuiteDefaults)
    tasks: list[Task] = Field(default_factory=list)
    task_files: list[str] = Field(default_factory=list)
    templates: str | None = None

    @field_validator("domain", mode="before")
    @classmethod
    def _domain_module(cls, value: Any) -> Any:
        if isinstance(value, str) and value.endswith(".py"):
            return DomainSource(module=value)
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _version_str(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) else value

    def task(self, task_id: str) -> Task:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    def limits_for(self, task: Task) -> Limits:
        return self.defaults.limits.merged(task.limits)
