"""Scoring profiles: the versioned definition of the box (τ, direction, k, λ per metric).

A profile is written in YAML::

    name: support-agent
    version: 3
    description: Budget from finance, latency from the UX study.
    metrics:
      cost_usd:   {tau: 0.10, direction: lower, k: 2, weight: 1}
      latency_s:  {tau: 5.0,  direction: lower, k: 2, weight: 1}
      accuracy:   {tau: 0.80, direction: higher, k: 4, weight: 2, note: "below this humans redo it"}

Its :attr:`ScoringProfile.hash` covers the name, the version and every τ, direction, k
and weight (not the free-text ``description``/``note``), and is recorded with every
score so a change of score can be traced to a change of agent or of policy.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.core.hashing import stable_hash
from assay.core.sources import ProblemError, parse_yaml, read_text, validation_problems
from assay.errors import SuiteError

from .loss import Direction, canonical_direction


class MetricSpec(BaseModel):
    """One side of the box: threshold ``tau``, ``direction``, penalty slope ``k``, ``weight``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tau: float
    direction: Direction
    k: float = Field(default=2.0, gt=0)
    weight: float = Field(default=1.0, ge=0)
    note: str | None = None

    @field_validator("direction", mode="before")
    @classmethod
    def _alias_direction(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return canonical_direction(value)
            except ValueError as exc:
                raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _check_tau(self) -> MetricSpec:
        if not math.isfinite(self.tau):
            raise ValueError("tau must be a finite number")
        if self.direction == "lower" and self.tau <= 0:
            raise ValueError(f"tau must be > 0 for a lower-is-better metric, got {self.tau}")
        if self.direction == "higher" and self.tau >= 1:
            raise ValueError(
                f"tau must be < 1 for a higher-is-better metric (a share in [0, 1]), got {self.tau}"
            )
        if not (math.isfinite(self.k) and math.isfinite(self.weight)):
            raise ValueError("k and weight must be finite numbers")
        return self


class ScoringProfile(BaseModel):
    """A named, versioned box: one :class:`MetricSpec` per metric."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    version: str
    description: str | None = None
    metrics: dict[str, MetricSpec] = Field(min_length=1)

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        return value

    @model_validator(mode="after")
    def _some_weight(self) -> ScoringProfile:
        if all(m.weight == 0 for m in self.metrics.values()):
            raise ValueError("at least one metric needs a weight > 0")
        return self

    def content(self) -> dict[str, Any]:
        """What the hash covers: name, version and each metric's tau, direction, k, weight."""
        return {
            "name": self.name,
            "version": self.version,
            "metrics": {
                key: {"tau": m.tau, "direction": m.direction, "k": m.k, "weight": m.weight}
                for key, m in sorted(self.metrics.items())
            },
        }

    @property
    def hash(self) -> str:
        """Stable content hash (see :meth:`content`); equal profiles hash equally anywhere."""
        return stable_hash(self.content())

    def with_metric(self, metric: str, **changes: float) -> ScoringProfile:
        """A copy with some fields of one metric changed (validated again)."""
        if metric not in self.metrics:
            raise KeyError(metric)
        metrics = dict(self.metrics)
        metrics[metric] = MetricSpec(**{**metrics[metric].model_dump(), **changes})
        return ScoringProfile(**{**self.model_dump(exclude={"metrics"}), "metrics": metrics})


def profile_from_yaml(text: str, file: str = "<profile>") -> ScoringProfile:
    """Parse and validate a profile from YAML text.

    Raises :class:`assay.errors.SuiteError` listing every problem as ``file:line: field:
    message``.
    """
    try:
        data, located = parse_yaml(text, file)
    except ProblemError as exc:
        raise SuiteError(exc.problems) from None
    if not isinstance(data, dict):
        raise SuiteError([located.problem((), "a scoring profile must be a YAML mapping")])
    try:
        return ScoringProfile.model_validate(data)
    except ValidationError as exc:
        raise SuiteError(validation_problems(exc, located)) from None


def load_profile(path: str | Path) -> ScoringProfile:
    """Load a scoring profile from a YAML file (errors name the file and line)."""
    p = Path(path)
    try:
        text = read_text(p, str(p))  # at most MAX_FILE_BYTES, UTF-8
    except ProblemError as exc:
        raise SuiteError(exc.problems) from None
    return profile_from_yaml(text, file=str(p))
