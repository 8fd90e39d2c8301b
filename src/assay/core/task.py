"""Tasks and suites: the versioned golden set, as data."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

Stratum = Literal["normal", "edge", "adversarial", "high_risk"]
Split = Literal["regression", "capability", "holdout"]
STRATA: tuple[str, ...] = ("normal", "edge", "adversarial", "high_risk")
SPLITS: tuple[str, ...] = ("regression", "capability", "holdout")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


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


class UserScenario(_Strict):
    """What the simulated user wants and knows. Facts in ``known`` are disclosed only
    when the agent asks for them; anything else the user does not know."""

    opening: str = "Hi, I need some help."
    goal: str = ""
    known: dict[str, str | int | float] = Field(default_factory=dict)
    confirm: bool = True
    pushback: list[str] = Field(default_factory=list)
    follow_ups: list[str] = Field(default_factory=list)
    instructions: str = ""


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


class Action(_Strict):
    """A tool call in a reference solution or a grader's expectation."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class Reference(_Strict):
    """The task's reference solution: the actions that solve it and, optionally,
    the expected answer and the tools a solution needs."""

    actions: list[Action] = Field(default_factory=list)
    answer: str | None = None
    tools: list[str] | None = None

    def necessary_tools(self) -> set[str]:
        return set(self.tools) if self.tools is not None else {a.name for a in self.actions}


class InitialState(_Strict):
    """How the environment starts: the domain's data generator seed plus records
    upserted over the generated data (keyed by each table's primary key)."""

    seed: int = 0
    records: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)


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
    timezone: str | None = None
    initial_state: InitialState = Field(default_factory=InitialState)
    user: UserScenario = Field(default_factory=UserScenario)
    graders: list[GraderSpec] = Field(default_factory=list)
    reference: Reference = Field(default_factory=Reference)
    template: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    instances: int = Field(1, ge=1, le=1_000)
    metadata: dict[str, Any] = Field(default_factory=dict)
    _input_hash: str | None = PrivateAttr(default=None)

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
        if self._input_hash is None:
            from .hashing import stable_hash

            data = self.model_dump(mode="json", exclude={"metadata"}, exclude_defaults=True)
            self._input_hash = stable_hash(data)
        return self._input_hash


class SuiteDefaults(_Strict):
    trials: int = Field(4, ge=1)
    agent: str | None = None
    """The agent a run uses when none is given (e.g. the domain's reference agent)."""
    user: str = "scripted"
    limits: Limits = Field(default_factory=Limits)
    as_of: datetime | None = None
    timezone: str = "UTC"
    data_seed: int = 0
    faults: dict[str, Any] | list[Any] | None = None
    """A fault plan (assay.envs.faults.FaultPlan) injected into every run of the suite."""


class Suite(_Strict):
    """A versioned golden set, as written. Loading it (``assay.suites.load_suite``)
    gives a :class:`~assay.suites.LoadedSuite`: the same data plus its folder and
    content hash (its identity)."""

    name: str = Field(min_length=1)
    version: str = "1"
    domain: str | None = None
    description: str = ""
    canary: str | None = None
    defaults: SuiteDefaults = Field(default_factory=SuiteDefaults)
    tasks: list[Task] = Field(default_factory=list)
    task_files: list[str] = Field(default_factory=list)
    templates: str | None = None

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
