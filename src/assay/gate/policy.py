"""Gate policies: the ``gate.yaml`` schema, its validation and located errors.

A policy lists checks; a run passes the gate when none fails::

    name: retail-release
    version: 1
    alpha: 0.05                 # one-sided level of relative checks
    adjust: holm                # multiplicity over relative checks: holm | bonferroni | bh | none
    absolute:                   # thresholds on the run summary (assay show RUN --json)
      - {metric: by_split.regression.pass_hat_k.k, min: 0.95}
      - {metric: usage.latency_s.p95, max: 2.0}
    relative:                   # against --baseline RUN_ID, paired by task
      - {metric: quality, margin: 0.05}                # fails only on a proven drop > 5 pts
      - {metric: latency_s, margin_pct: 20, test: noninferiority}
    high_risk:                  # tasks no average can dilute
      stratum: high_risk
      each_task_min_pass_hat_k: 1.0
    max_harness_error_share: 0.02

See docs/ci.md for every field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from ..core.hashing import stable_hash
from ..core.sources import ProblemError, parse_yaml, read_text, validation_problems
from ..errors import SuiteError

GROUP_SECTIONS = ("overall", "by_stratum", "by_split", "by_tag")
GROUP_LEAVES = ("success_rate", "successes", "trials", "tasks", "excluded", "pass_hat_k", "pass_at_k")
USAGE_LEAVES = {
    "latency_s": ("mean", "p50", "p95", "p99"),
    "cost_usd": ("total", "mean", "trials_with_cost"),
    "tokens": ("input", "output", "trials_with_usage"),
}
EXCLUDED_LEAVES = ("share", "trials")
SAFETY_RATES = (
    "trigger_recall",
    "false_trigger_rate",
    "interception_recall",
    "false_refusal_rate",
    "unauthorized_operation_rate",
)
RAG_FAILURES = ("retrieval_only", "generation_only", "both", "neither", "undecided")
RAG_HINT = (
    "rag.stages.<stage>.pass_rate, rag.stages.<stage>.graders.<grader>.pass_rate, "
    "rag.stages.<stage>.graders.<grader>.metrics.<metric>.mean or rag.failures.<where> (docs/rag.md)"
)


def rag_path_problem(parts: list[str]) -> str | None:
    """Why ``rag.…`` (split at dots) cannot name a number of a run's RAG summary."""
    if len(parts) == 3 and parts[1] == "failures" and parts[2] in RAG_FAILURES:
        return None
    if len(parts) >= 4 and parts[1] == "stages" and parts[2] in ("retrieval", "generation"):
        rest = parts[3:]
        if rest in (["pass_rate"], ["passed"], ["trials"]):
            return None
        if len(rest) == 3 and rest[0] == "graders" and rest[2] in ("pass_rate", "trials"):
            return None
        if len(rest) == 5 and rest[0] == "graders" and rest[2] == "metrics" and rest[4] in ("mean", "n"):
            return None
    return f"{'.'.join(parts)!r} is not a RAG summary number; use {RAG_HINT}"


class PolicyError(SuiteError):
    """A gate policy failed to load or validate (exit code 2); lists every problem."""


def summary_path_problem(path: str) -> str | None:
    """Why ``path`` cannot name a number of a run summary, or None when it can."""
    parts = path.split(".")
    head = parts[0]
    hint = (
        "use overall.<m>, by_stratum|by_split|by_tag.<group>.<m>, process.<name>, "
        "usage.latency_s.p95, usage.cost_usd.mean, usage.by_model.<model>.ttft_s.p95, "
        "excluded.share or safety.<rate> "
        f"({', '.join(SAFETY_RATES)})"
    )
    if head in GROUP_SECTIONS:
        rest = parts[1:] if head == "overall" else parts[2:]
        if head != "overall" and len(parts) < 3:
            return f"{head} needs a group and a metric, e.g. {head}.<group>.success_rate"
        if not rest or rest[0] not in GROUP_LEAVES:
            return f"unknown metric {'.'.join(rest) or '(none)'}; choose from {', '.join(GROUP_LEAVES)}"
        if rest[0] in ("pass_hat_k", "pass_at_k"):
            if len(rest) != 2 or not (rest[1] == "k" or rest[1].isdigit()):
                name = rest[0]
                return f"{name} needs a k: {name}.1, {name}.4 or {name}.k (the run's trials per task)"
        elif len(rest) != 1:
            return f"{rest[0]} takes no further part"
        return None
    if head == "process" and len(parts) == 2:
        return None
    if head == "usage" and len(parts) == 3 and parts[2] in USAGE_LEAVES.get(parts[1], ()):
        return None
    if head == "usage" and len(parts) >= 4 and parts[1] == "by_model":  # the model may hold dots
        if parts[-1] in ("calls", "failed", "calls_with_ttft") and len(parts) >= 4:
            return None
        if (
            parts[-2] in ("latency_s", "ttft_s")
            and parts[-1] in USAGE_LEAVES["latency_s"]
            and len(parts) >= 5
        ):
            return None
    if head == "excluded" and len(parts) == 2 and parts[1] in EXCLUDED_LEAVES:
        return None
    if head == "rag":
        return rag_path_problem(parts)
    if head == "safety" and len(parts) == 2 and parts[1] in SAFETY_RATES:
        return None
    return f"{path!r} is not a summary metric; {hint}"


class AbsoluteCheck(BaseModel):
    """A threshold on one number of the run summary."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: str
    min: float | None = Field(default=None, allow_inf_nan=False)
    max: float | None = Field(default=None, allow_inf_nan=False)
    name: str | None = None

    @field_validator("metric")
    @classmethod
    def _path(cls, value: str) -> str:
        problem = summary_path_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _bounds(self) -> AbsoluteCheck:
        if self.min is None and self.max is None:
            raise ValueError("give min, max or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is above max ({self.max})")
        return self


def metric_name(value: str) -> str:
    """``value`` when it can name a per-trial metric of a paired comparison."""
    if not re.fullmatch(r"[A-Za-z_][\w.\-]*", value):
        raise ValueError(
            f"{value!r} is not a metric name; use quality, success_rate, latency_s, cost_usd, "
            "a process metric (tool_errors, ...) or score.<grader>"
        )
    return value


class _PairedMetricCheck(BaseModel):
    """What every paired check against the baseline names: the metric, the one-sided
    test's alpha (the policy's when omitted), which way is better, a display name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: str
    alpha: float | None = Field(default=None, gt=0, lt=0.5)
    direction: Literal["higher", "lower"] | None = None
    name: str | None = None

    @field_validator("metric")
    @classmethod
    def _metric(cls, value: str) -> str:
        return metric_name(value)


class RelativeCheck(_PairedMetricCheck):
    """A paired check against the baseline run with an allowed margin.

    ``test: regression`` (default) fails only when a one-sided test shows the drop is
    larger than the margin; ``test: noninferiority`` fails unless a one-sided test shows
    the drop is smaller than the margin (the burden of proof is on the candidate).

    The margin is ``margin`` (in the metric's units), ``margin_pct`` (% of the
    baseline's mean) or, both given, the larger of the two: ``{metric: latency_s,
    margin_pct: 50, margin: 0.5}`` allows a slowdown of 50% or of half a second,
    whichever is more, so that milliseconds of noise never fail a fast agent.
    """

    margin: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    margin_pct: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    test: Literal["regression", "noninferiority"] = "regression"

    @model_validator(mode="after")
    def _one_margin(self) -> RelativeCheck:
        if self.margin is None and self.margin_pct is None:
            raise ValueError(
                "give margin (in the metric's units), margin_pct (% of baseline) or both (the larger applies)"
            )
        if self.metric == "quality" and self.margin is not None and self.margin >= 1:
            raise ValueError(f"a quality margin is a share of tasks in [0, 1), got {self.margin}")
        return self


class Guardrail(RelativeCheck):
    """A metric that must not get worse by more than its margin while the primary
    improves: a non-inferiority check (the candidate must show it)."""

    test: Literal["regression", "noninferiority"] = "noninferiority"

    @model_validator(mode="after")
    def _noninferiority(self) -> Guardrail:
        if self.test != "noninferiority":
            raise ValueError("a guardrail is a non-inferiority check; use relative: for a regression check")
        return self


class PrimaryCheck(_PairedMetricCheck):
    """The metric a change must improve: passes only when a one-sided test shows the
    candidate better than the baseline by more than ``min_improvement``."""

    min_improvement: float = Field(default=0.0, ge=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _quality_zero(self) -> PrimaryCheck:
        if self.metric == "quality" and self.min_improvement:
            raise ValueError("for quality the primary test is superiority (min_improvement 0)")
        return self


class HighRiskGate(BaseModel):
    """Tasks judged on their own: selected by stratum and/or tags."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stratum: str | None = "high_risk"
    tags: list[str] = Field(default_factory=list)
    each_task_min_pass_hat_k: float | None = Field(default=1.0, ge=0, le=1)
    min_success_rate: float | None = Field(default=None, ge=0, le=1)
    min_tasks: int = Field(default=1, ge=0)

    @model_validator(mode="after")
    def _something(self) -> HighRiskGate:
        if self.stratum is None and not self.tags:
            raise ValueError("select high-risk tasks by stratum, tags or both")
        if self.each_task_min_pass_hat_k is None and self.min_success_rate is None:
            raise ValueError("set each_task_min_pass_hat_k, min_success_rate or both")
        return self


class GatePolicy(BaseModel):
    """A CI gate: absolute thresholds, relative checks, a high-risk gate, an error cap."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "gate"
    version: str = "1"
    description: str | None = None
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    adjust: Literal["holm", "bonferroni", "bh", "none"] = "holm"
    match: Literal["task", "trial"] = "task"
    task_outcome: Literal["majority", "all", "any"] = "all"
    require_baseline: bool = False
    absolute: list[AbsoluteCheck] = Field(default_factory=list)
    relative: list[RelativeCheck] = Field(default_factory=list)
    high_risk: HighRiskGate | None = None
    max_harness_error_share: float | None = Field(default=None, ge=0, le=1)
    primary: PrimaryCheck | None = None
    """Rollouts: the metric the candidate must improve (against --baseline)."""
    guardrails: list[Guardrail] = Field(default_factory=list)
    """Rollouts: metrics that must not get worse beyond their margins (non-inferiority)."""
    common_only: bool = False
    """Baseline on another suite version: compare on the tasks both share (said in the notes)."""
    _file: str = PrivateAttr(default="<policy>")
    _lines: dict[str, int] = PrivateAttr(default_factory=dict)

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value

    @model_validator(mode="after")
    def _not_empty(self) -> GatePolicy:
        if not (
            self.absolute
            or self.relative
            or self.high_risk
            or self.max_harness_error_share is not None
            or self.primary
            or self.guardrails
        ):
            raise ValueError(
                "the policy has no check: add absolute, relative, high_risk, max_harness_error_share, "
                "primary or guardrails"
            )
        return self

    @property
    def hash(self) -> str:
        return stable_hash(self.model_dump(mode="json", exclude={"description"}))

    @property
    def file(self) -> str:
        return self._file

    def where(self, key: str) -> str:
        """``file:line`` of a check (``absolute[0]``, ``relative[1]``, ``high_risk``...)."""
        line = self._lines.get(key)
        return self._file if line is None else f"{self._file}:{line}"


def policy_from_yaml(text: str, file: str = "<policy>") -> GatePolicy:
    """Parse and validate a policy; :class:`PolicyError` lists ``file:line: field: message``."""
    try:
        data, located = parse_yaml(text, file)
    except ProblemError as exc:
        raise PolicyError(exc.problems) from None
    if not isinstance(data, dict):
        raise PolicyError([located.problem((), "a gate policy must be a YAML mapping of checks")])
    try:
        policy = GatePolicy.model_validate(data)
    except ValidationError as exc:
        raise PolicyError(validation_problems(exc, located)) from None
    policy._file = file
    for section in ("absolute", "relative", "guardrails"):
        for i in range(len(getattr(policy, section))):
            line = located.line((section, i))
            if line is not None:
                policy._lines[f"{section}[{i}]"] = line
    for key in ("high_risk", "max_harness_error_share", "primary"):
        if key in data:
            line = located.line((key,))
            if line is not None:
                policy._lines[key] = line
    return policy


def load_policy(path: str | Path) -> GatePolicy:
    """Load a policy file; errors name the file and line (exit code 2 in the CLI)."""
    p = Path(path)
    try:
        text = read_text(p, str(p))  # at most MAX_FILE_BYTES, UTF-8
    except ProblemError as exc:
        raise PolicyError(exc.problems) from None
    return policy_from_yaml(text, file=str(p))
