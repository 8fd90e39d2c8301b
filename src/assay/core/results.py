"""Outcomes, grades, trial results and run metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .hashing import stable_hash
from .spec import RunSpec
from .transcript import Transcript

Termination = Literal[
    "user_stop",
    "transfer",
    "max_turns",
    "max_tool_calls",
    "timeout",
    "budget",
    "agent_error",
    "environment_error",
    "harness_error",
]
TERMINATIONS: tuple[str, ...] = Termination.__args__  # type: ignore[attr-defined]
#: Terminations that are not the agent's doing: excluded from rates, reported apart.
EXCLUDED_TERMINATIONS = frozenset({"environment_error", "harness_error"})
#: The endings of a conversation that ran its course; any other ending scores 0.
NORMAL_TERMINATIONS = frozenset({"user_stop", "transfer"})

RootCause = Literal["DATA", "MODEL", "AGENT", "TOOL", "ENV", "GRADER", "HARNESS", "USER"]


@dataclass(slots=True)
class Outcome:
    """The end of a trial: why it stopped, the state hashes and the state diff."""

    termination: Termination
    initial_hash: str = ""
    final_hash: str = ""
    diff: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    final_state: Any = None
    """The end state (an ``assay.envs.State``) for graders; never stored."""


@dataclass(slots=True)
class GradeResult:
    """One grader's verdict. ``passed`` is None when the grader has no binary verdict
    (or was skipped); ``skipped`` graders never count as passes."""

    grader: str
    kind: str
    passed: bool | None
    score: float | None = None
    reason: str = ""
    category: str | None = None
    confidence: float | None = None
    needs_review: bool = False
    veto: bool = False
    skipped: bool = False
    gating: bool = True
    metrics: dict[str, float] = field(default_factory=dict)
    version: str = "1"
    judge_model: str | None = None

    @classmethod
    def skip(cls, grader: str, kind: str, reason: str, gating: bool = True) -> GradeResult:
        return cls(grader=grader, kind=kind, passed=None, reason=reason, skipped=True, gating=gating)


def reward_of(termination: str, grades: list[GradeResult]) -> int | None:
    """1 if the conversation ended normally (user stop or transfer), every gating
    grader passed and no veto fired; 0 otherwise; None when the trial ended on a
    harness or environment error, or a gating grader could not decide (its own error,
    or a judge answering "unknown", which waits for human review): none of that is
    the agent's doing, so such trials are excluded from rates and reported apart."""
    if termination in EXCLUDED_TERMINATIONS:
        return None
    if any(
        g.gating and (g.category == "grader_error" or (g.passed is None and not g.skipped)) for g in grades
    ):
        return None  # a gating grader could not decide (error, or "unknown": awaiting review)
    if termination not in NORMAL_TERMINATIONS or any(g.veto for g in grades):
        return 0
    gating = [g for g in grades if g.gating and not g.skipped]
    if not gating:
        return 0
    return int(all(g.passed for g in gating))


@dataclass(slots=True, frozen=True)
class TaskMeta:
    """What reports need to know of a task, stored with each run."""

    task_id: str
    stratum: str = "normal"
    split: str = "regression"
    tags: tuple[str, ...] = ()
    difficulty: int = 1
    task_hash: str = ""
    template: str | None = None
    description: str = ""


@dataclass(slots=True)
class Trial:
    """One planned run of one task: which task, which repetition, which seed."""

    task_id: str
    index: int
    seed: int


#: Counters of one role's model usage in a trial (``TrialResult.usage[role]``), besides its cost.
USAGE_FIELDS = (
    "calls",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "retries",
    "cached_calls",
    "missing_usage",
)


@dataclass(slots=True)
class TrialResult:
    """Everything recorded about one finished trial (the seeds' EvalRecord)."""

    run_id: str
    task_id: str
    trial_index: int
    seed: int
    config_hash: str
    reward: int | None
    termination: Termination
    grades: list[GradeResult] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    model_id: str | None = None
    prompt_version: str | None = None
    suite_name: str = ""
    suite_version: str = ""
    suite_hash: str = ""
    task_hash: str = ""
    as_of: str | None = None
    timezone: str | None = None
    env_version: str = ""
    error_category: str | None = None
    root_cause: RootCause | None = None
    confidence: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)
    latency_s: float = 0.0
    started_at: str = ""
    ended_at: str = ""
    git_commit: str | None = None
    transcript: Transcript | None = None
    outcome: Outcome | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.task_id, self.trial_index)

    @property
    def excluded(self) -> bool:
        """Not counted in rates: the trial failed for reasons that are not the agent's."""
        return self.reward is None


class Config(BaseModel):
    """What is under test. Its hash identifies the configuration across runs: two runs
    with the same agent, user, prompt version, flags and params share it."""

    model_config = ConfigDict(extra="forbid")

    agent: str
    user: str = "scripted"
    model: str | None = None
    prompt_version: str | None = None
    flags: dict[str, Any] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)

    @property
    def hash(self) -> str:
        return stable_hash(self.model_dump(mode="json"))


RunStatus = Literal["running", "finished", "interrupted"]


class RunInfo(BaseModel):
    """A run's identity and provenance: its spec (as given, secrets redacted) and what
    resolving it gave (suite version, configuration, tasks), plus what resuming needs."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    created_at: str
    suite_name: str
    suite_version: str
    suite_hash: str
    suite_source: str
    config: Config
    config_hash: str
    seed: int
    trials_per_task: int
    task_ids: list[str]
    spec: RunSpec
    fault_plan: dict[str, Any] | None = None
    """The fault plan the spec resolved to (a FaultPlan as JSON), for every trial."""
    status: RunStatus = "running"
    git_commit: str | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    finished_at: str | None = None

    @property
    def planned_trials(self) -> int:
        return len(self.task_ids) * self.trials_per_task

    @property
    def filters(self) -> dict[str, Any]:
        return {"split": self.spec.split, "tags": list(self.spec.tags), "task_ids": list(self.spec.task_ids)}

    @model_validator(mode="before")
    @classmethod
    def _from_schema_1(cls, data: Any) -> Any:
        """Runs stored by schema 1 kept their options in ``filters`` and ``settings``."""
        if not isinstance(data, dict) or "spec" in data or "settings" not in data:
            return data
        data = dict(data)
        settings, filters = data.pop("settings") or {}, data.pop("filters", None) or {}
        config = data.get("config") or {}
        if isinstance(config, BaseModel):
            config = config.model_dump()
        data["spec"] = {
            "suite": data.get("suite_source") or data.get("suite_name"),
            "agent": config.get("agent"),
            "user": config.get("user"),
            "params": config.get("params") or {},
            "trials": data.get("trials_per_task"),
            "seed": data.get("seed", 0),
            "split": filters.get("split"),
            "tags": list(filters.get("tags") or ()),
            "task_ids": list(filters.get("task_ids") or ()),
            "model_options": settings.get("model_options") or {},
            "judges": settings.get("judges") or [],
            "judge_options": settings.get("judge_options") or {},
            "limits": settings.get("limits") or {},
            "run_id": data.get("run_id"),
        }
        data["fault_plan"] = settings.get("faults")
        return data
