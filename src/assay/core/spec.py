"""The run spec: the one typed description of a run.

Every entry point builds one — the shared options of the run-like commands (``assay
run``, ``run --until-decided``, ``robustness``), :func:`assay.run` and a YAML file
(``assay run --spec run.yaml``) — and the run stores it verbatim, secrets redacted.
What the spec says about the system under test (agent, user, prompt version, params,
flags) makes the configuration and its hash; the rest (budgets, concurrency, caches,
cassettes, the store) says how the run is carried out.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .secrets import MASK, mask_options, secret_values

SPEC_SCHEMA = "assay.run-spec/1"
#: Run ids: a letter, digit or underscore, then letters, digits and ``_ . : -``; at most
#: 128 characters (the store's column). They are printed, stored and used in URLs.
SAFE_RUN_ID = re.compile(r"\w[\w.:-]{0,127}")


def run_id_problem(run_id: str) -> str | None:
    """Why ``run_id`` cannot name a new run (None: it can). Checked where a run is made
    or imported, not by :class:`RunSpec` itself: runs stored before the rule keep their
    ids and still load."""
    if run_id == "latest":
        return "run id 'latest' names the newest run wherever a run is named; choose another"
    if SAFE_RUN_ID.fullmatch(run_id):
        return None
    return (
        f"run id {run_id[:140]!r}: use letters, digits and _ . : - (starting with a letter, "
        "digit or _), at most 128 characters"
    )


#: What a stored spec holds in place of a credential's value.
REDACTED = MASK


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DecideSpec(_Strict):
    """Adaptive trials (``assay run --until-decided``): run in rounds until a sequential
    test decides. Exactly one of ``against`` (a baseline run: paired test) or
    ``threshold`` (a success rate to beat)."""

    against: str | None = None
    threshold: float | None = Field(None, gt=0, lt=1)
    mde: float = Field(0.05, gt=0, lt=1)
    alpha: float = Field(0.05, gt=0, lt=0.5)
    power: float = Field(0.8, gt=0, lt=1)
    method: Literal["sprt", "msprt"] = "sprt"
    discordance: float | None = Field(None, gt=0, le=1)
    """Paired: design the SPRT for this share of disagreeing pairs (default: the share
    the data show, with exact alpha spending)."""
    max_trials: int | None = Field(None, ge=1)
    round_size: int | None = Field(None, ge=1)
    """Most trials run past the decision (default: the concurrency, at most 5% of the
    fixed design's trials)."""

    @model_validator(mode="after")
    def _one_target(self) -> DecideSpec:
        if (self.against is None) == (self.threshold is None):
            raise ValueError("give exactly one of against (--against RUN_ID) or threshold (--threshold RATE)")
        if self.method == "msprt" and self.against is None:
            raise ValueError("method msprt needs against (--against RUN_ID: it is a paired test)")
        return self


class RunSpec(_Strict):
    """Everything that defines a run. ``None`` fields take the suite's default
    (``agent``, ``user``, ``trials``) when the run is resolved."""

    suite: str = Field(min_length=1)
    """Suite folder, ``suite.yaml`` path or built-in name."""
    agent: str | None = None
    user: str | None = None
    prompt_version: str | None = None
    """Label of the agent's prompt; default: what the agent itself declares."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Config parameters of the system under test (temperature, agent options)."""
    flags: dict[str, Any] = Field(default_factory=dict)
    """Feature flags of the system under test."""
    flag_matrix: dict[str, list[Any]] = Field(default_factory=dict)
    """Flags crossed into a factorial experiment: one run (arm) per combination of
    levels, each its own configuration (``assay run --flag name=off/on``, or its alias
    ``--flag-matrix name=off,on``)."""
    judges: list[str] = Field(default_factory=list)
    model_options: dict[str, Any] = Field(default_factory=dict)
    """Settings of the agent's and user's model clients (base_url, rpm...): not under test."""
    judge_options: dict[str, Any] = Field(default_factory=dict)
    trials: int | None = Field(None, ge=1, le=10_000)
    seed: int | None = Field(None, ge=0, lt=2**63)
    """Run seed (default 0; a paired adaptive run defaults to its baseline's)."""
    split: str | None = None
    tags: list[str] = Field(default_factory=list)
    task_ids: list[str] = Field(default_factory=list)
    limits: dict[str, Any] = Field(default_factory=dict)
    """Overrides of the suite's per-trial limits (max_cost_usd, max_tokens, timeout_s...)."""
    faults: str | dict[str, Any] | list[Any] | None = None
    """Tool faults: a plan file, ``TOOL:KIND@RATE,...``, a plan mapping, or ``none``."""
    perturb: str | dict[str, Any] | list[Any] | None = None
    """Perturbations of the tasks' user turns and tool outputs (a plan file,
    ``KIND[:STYLE][@RATE],...``, a plan mapping or a list; docs/lifecycle.md)."""
    probe: str | None = None
    """The probe track: ``module:function`` or ``file.py:function`` that re-checks each
    task's time-sensitive evidence at run time (none: the snapshot track)."""
    cache: bool = False
    pricing: str | None = None
    record: str | None = None
    replay: str | None = None
    unsafe_no_sandbox: bool = False
    """Run untrusted code (code tasks) on the host, without the bubblewrap sandbox."""
    concurrency: int = Field(8, ge=1, le=10_000)
    check_models: bool = True
    """Probe every model endpoint (agent, user, judges) before the first trial."""
    breaker: int = Field(3, ge=0, le=10_000)
    """Stop the run after this many trials in a row ended because the model endpoint
    failed (0: never); the trials not run stay missing, for ``--resume``."""
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    store: str | None = None
    run_id: str | None = None
    otel_endpoint: str | None = None
    """Export each trial as an OpenTelemetry trace to this OTLP/HTTP endpoint as the run
    goes (e.g. Arize Phoenix at ``http://127.0.0.1:6006``; redacted; docs/traces.md)."""
    decide: DecideSpec | None = None

    @field_validator("limits")
    @classmethod
    def _known_limits(cls, value: dict[str, Any]) -> dict[str, Any]:
        from .task import Limits

        unknown = sorted(set(value) - set(Limits.model_fields))
        if unknown:
            raise ValueError(f"unknown limit {unknown[0]!r}; limits: {', '.join(Limits.model_fields)}")
        Limits.model_validate(value)
        return value

    @field_validator("flag_matrix")
    @classmethod
    def _factors(cls, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for name, levels in value.items():
            if len(levels) < 2:
                raise ValueError(f"flag {name!r} needs at least two levels to cross, got {levels}")
            if len({repr(v) for v in levels}) != len(levels):
                raise ValueError(f"flag {name!r} lists a level twice: {levels}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> RunSpec:
        if self.record and self.replay:
            raise ValueError("record and replay exclude each other")
        if self.ray_address and self.executor != "ray":
            raise ValueError("ray_address needs executor ray")
        crossed = sorted(set(self.flags) & set(self.flag_matrix))
        if crossed:
            raise ValueError(f"flag {crossed[0]!r} is both fixed (flags) and crossed (flag_matrix)")
        if self.otel_endpoint is not None and not self.otel_endpoint.startswith(("http://", "https://")):
            raise ValueError("otel_endpoint must be an http:// or https:// URL (OTLP over HTTP)")
        return self

    def model_option_values(self) -> dict[str, Any]:
        """The model clients' settings, with ``cache`` and ``pricing`` folded in."""
        options = dict(self.model_options)
        if self.cache:
            options["cache"] = True
        if self.pricing:
            options["pricing"] = self.pricing
        return options

    def redacted(self) -> RunSpec:
        """This spec as it is stored: credential values replaced by a marker."""
        return self.model_copy(
            update={
                "model_options": mask_options(self.model_options),
                "judge_options": mask_options(self.judge_options),
            }
        )

    def secrets(self) -> list[str]:
        """Credential values the spec carries (to scrub from anything a run writes)."""
        return secret_values({"model": self.model_options, "judge": self.judge_options})
