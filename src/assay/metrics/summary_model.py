"""The run summary as a typed, versioned document: what ``assay run --json`` and
``assay show --json`` print, and the one source that the console, HTML report, viewer,
gate and compare read.

Every proportion carries a 95% interval computed one way (task-clustered Wilson for a
run's success rate, Wilson over tasks for pass^k / pass@k, Wilson per task): an interval
is never zero-width, even at 0% or 100%.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..core.results import Config
from ..core.spec import RunSpec

SUMMARY_SCHEMA = "assay.run-summary/2"

Interval = tuple[float | None, float | None]
NO_INTERVAL: Interval = (None, None)


def task_outcome(rewards: list[int | None]) -> str:
    """A task's outcome over its trials: pass (every counted trial passed), fail (none
    did), flaky (some did), excluded (no counted trial)."""
    counted = [r for r in rewards if r is not None]
    if not counted:
        return "excluded"
    if all(counted):
        return "pass"
    return "fail" if not any(counted) else "flaky"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class GroupStats(_Model):
    """Rates of a group of tasks (the whole run, a stratum, a split, a tag)."""

    tasks: int
    trials: int
    excluded: int
    successes: int
    success_rate: float | None
    success_rate_ci: Interval = NO_INTERVAL
    pass_hat_k: dict[str, float | None] = Field(default_factory=dict)
    pass_at_k: dict[str, float | None] = Field(default_factory=dict)
    pass_hat_k_ci: dict[str, Interval] = Field(default_factory=dict)
    pass_at_k_ci: dict[str, Interval] = Field(default_factory=dict)


class Excluded(_Model):
    """Trials not counted in any rate: their failure was not the agent's doing."""

    trials: int
    share: float | None
    by_termination: dict[str, int] = Field(default_factory=dict)
    by_root_cause: dict[str, int] = Field(default_factory=dict)


class CapabilityCell(_Model):
    trials: int
    success_rate: float | None


class Latency(_Model):
    mean: float | None = None
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None


class Cost(_Model):
    total: float | None = None
    mean: float | None = None
    trials_with_cost: int = 0


class Tokens(_Model):
    input: int | None = None
    output: int | None = None
    trials_with_usage: int = 0


class RoleUsage(_Model):
    """Model usage of one role (agent, user, judge) summed over the run's trials."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    retries: int = 0
    cached_calls: int = 0
    missing_usage: int = 0
    cost_usd: float | None = 0.0
    unpriced_trials: int = 0


class ModelTiming(_Model):
    """How fast one model answered over the run's calls (cached answers left out)."""

    calls: int = 0
    failed: int = 0
    """Calls that ended in an error (after retries)."""
    latency_s: Latency = Field(default_factory=Latency)
    """Latency of the answered calls."""
    ttft_s: Latency = Field(default_factory=Latency)
    """Time to first token of the streamed calls that reported it."""
    calls_with_ttft: int = 0


class Usage(_Model):
    latency_s: Latency = Field(default_factory=Latency)
    cost_usd: Cost = Field(default_factory=Cost)
    tokens: Tokens = Field(default_factory=Tokens)
    by_role: dict[str, RoleUsage] = Field(default_factory=dict)
    by_model: dict[str, ModelTiming] = Field(default_factory=dict)
    """Latency and time to first token per model (``agent``, ``user`` and judge models
    alike); empty when the run made no model call."""


class TaskRow(_Model):
    """One task of the run: its trials' rewards, rates and failing graders."""

    task_id: str
    stratum: str
    split: str
    tags: list[str] = Field(default_factory=list)
    difficulty: int = 1
    trials: int = 0
    excluded: int = 0
    successes: int = 0
    success_rate: float | None = None
    success_rate_ci: Interval = NO_INTERVAL
    pass_hat_k: dict[str, float | None] = Field(default_factory=dict)
    rewards: list[int | None] = Field(default_factory=list)
    terminations: dict[str, int] = Field(default_factory=dict)
    failures: dict[str, int] = Field(default_factory=dict)

    @property
    def outcome(self) -> str:
        """See :func:`task_outcome`."""
        return task_outcome(self.rewards)


class SuiteRef(_Model):
    name: str
    version: str
    hash: str
    source: str


class ConfigView(_Model):
    """The configuration under test (:class:`~assay.core.Config`), with its hash."""

    agent: str
    user: str
    model: str | None = None
    prompt_version: str | None = None
    flags: dict[str, Any] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    hash: str

    @classmethod
    def of(cls, config: Config) -> ConfigView:
        return cls(**config.model_dump(), hash=config.hash)


class RunHeader(_Model):
    """Identity and provenance of the run the summary is about."""

    run_id: str
    status: str
    created_at: str
    finished_at: str | None = None
    suite: SuiteRef
    config: ConfigView
    seed: int
    trials_per_task: int
    planned_trials: int
    completed_trials: int
    retried_attempts: int = 0
    """Failed attempts of trials that ended in a harness error and ran again."""
    filters: dict[str, Any] = Field(default_factory=dict)
    spec: RunSpec
    git_commit: str | None = None
    versions: dict[str, str] = Field(default_factory=dict)


class ScoreStats(_Model):
    """A grader's scores over the run: their mean, and best@k (the expected best score
    of k attempts at a task; :mod:`assay.metrics.best_at_k`)."""

    mean: float
    scored: int
    tasks: int
    best_at_k: dict[str, float | None] = Field(default_factory=dict)


class SafetySummary(_Model):
    """Skill routing and safety rates of a run (``skill_routing`` / ``safety`` graders),
    each with its 95% Wilson interval; see :mod:`assay.metrics.safety`."""

    trigger_recall: float | None = None
    trigger_recall_ci: Interval = NO_INTERVAL
    false_trigger_rate: float | None = None
    false_trigger_rate_ci: Interval = NO_INTERVAL
    interception_recall: float | None = None
    interception_recall_ci: Interval = NO_INTERVAL
    false_refusal_rate: float | None = None
    false_refusal_rate_ci: Interval = NO_INTERVAL
    unauthorized_operation_rate: float | None = None
    unauthorized_operation_rate_ci: Interval = NO_INTERVAL
    should_trigger: int = 0
    should_not_trigger: int = 0
    should_refuse: int = 0
    normal: int = 0
    operations: int = 0
    unauthorized_calls: int = 0


class RunSummary(_Model):
    """Everything a run's report shows (schema ``assay.run-summary/2``)."""

    schema_: str = Field(SUMMARY_SCHEMA, alias="schema")
    run: RunHeader | None = None
    overall: GroupStats
    excluded: Excluded
    terminations: dict[str, int] = Field(default_factory=dict)
    by_stratum: dict[str, GroupStats] = Field(default_factory=dict)
    by_split: dict[str, GroupStats] = Field(default_factory=dict)
    by_tag: dict[str, GroupStats] = Field(default_factory=dict)
    capability_matrix: dict[str, dict[str, CapabilityCell]] = Field(default_factory=dict)
    graders: dict[str, dict[str, int]] = Field(default_factory=dict)
    scores: dict[str, ScoreStats] = Field(default_factory=dict)
    """Graders whose scores are not only 0/1 (judges, partial credit): mean and best@k."""
    process: dict[str, float | None] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)
    tasks: list[TaskRow] = Field(default_factory=list)
    rag: dict[str, Any] | None = None
    """Retrieval and generation figures of RAG graders (:mod:`assay.metrics.rag_summary`);
    None, and left out of :meth:`to_dict`, when the run has none."""

    safety: SafetySummary | None = None
    """Skill routing and safety rates; None, and left out of :meth:`to_dict`, when the
    run has no ``skill_routing`` or ``safety`` grader."""

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON-able data, as ``--json`` prints it."""
        absent = {name for name in ("rag", "safety") if getattr(self, name) is None}
        return self.model_dump(mode="json", by_alias=True, exclude=absent or None)

    def counted_trials(self) -> int:
        return self.overall.trials - self.overall.excluded

    def skipped_verdicts(self) -> dict[str, int]:
        """Grader name -> verdicts it skipped (it could not run), for graders that did."""
        return {name: g["skipped"] for name, g in self.graders.items() if g.get("skipped")}

    def trials_k(self) -> int:
        """The k that pass^k paths mean: the trials per task the run actually has (an
        adaptive or interrupted run may have fewer than it planned)."""
        planned = self.run.trials_per_task if self.run is not None else 1
        most = max((t.trials for t in self.tasks), default=planned)
        return max(1, min(planned, most))

    def value_at(self, path: str) -> tuple[Any, str | None]:
        """The value at a dotted ``path`` (``by_split.regression.pass_hat_k.k``; ``k``
        after pass_hat_k / pass_at_k means :meth:`trials_k`), or ``(None, why)``. A key
        with dots in it (a model name such as ``openai:gpt-4.1``) is matched whole."""
        node: Any = self.to_dict()
        walked: list[str] = []
        k = str(self.trials_k())
        parts = path.split(".")
        i = 0
        while i < len(parts):
            part = parts[i]
            key = k if part == "k" and walked and walked[-1] in ("pass_hat_k", "pass_at_k") else part
            if isinstance(node, dict) and key not in node:  # the longest dotted key that exists
                joined = (".".join(parts[i:j]) for j in range(len(parts), i + 1, -1))
                key, i = next(((c, i + c.count(".")) for c in joined if c in node), (key, i))
            if not isinstance(node, dict) or key not in node:
                where = ".".join(walked) or "the summary"
                if walked and walked[0] in ("by_stratum", "by_split", "by_tag") and len(walked) == 1:
                    return None, f"the run has no task in {walked[0].removeprefix('by_')} {key!r}"
                return None, f"{where} has no {key!r} in this run"
            node = node[key]
            walked.append(key)
            i += 1
        if node is None:
            return None, f"{path} has no value in this run (nothing measured it)"
        return node, None
