"""The probe's configuration and its typed result (JSON schema name ``assay.probe/1``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from assay.errors import AssayError

PROBE_SCHEMA = "assay.probe/1"
COMPARISON_SCHEMA = "assay.probe-comparison/1"

Mode = Literal["latency", "ramp", "availability"]
StopReason = Literal["completed", "request_ceiling", "spend_ceiling", "rejected"]
ErrorKind = Literal["rate_limited", "server_error", "timeout", "connection", "rejected", "other"]

DEFAULT_PROMPT = "Count from 1 to 1000, one number per line, with no other text."


class ProbeConfigError(AssayError):
    """A probe setting that is out of range (one sentence naming the field)."""


class ProbeConfig(BaseModel):
    """What to probe and how far to go. Every mode is bounded: ``max_requests`` HTTP
    requests (warm-up and 429s included) and ``max_cost_usd`` of spend (priced with the
    model's price; a request is only sent if its worst case still fits)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    mode: Mode = "latency"
    prompt: str = DEFAULT_PROMPT
    max_tokens: int = Field(64, ge=1, le=32768)
    timeout_s: float = Field(60.0, gt=0)
    warmup: int = Field(1, ge=0, le=10)
    """Requests sent first and left out of every figure (connection set-up, cold caches)."""
    max_requests: int = Field(200, ge=1)
    max_cost_usd: float = Field(1.0, ge=0)
    confidence: float = Field(0.95, gt=0, lt=1)
    seed: int = 0
    """Seed of the backoff jitter when a 429 carries no Retry-After."""
    max_retry_after_s: float = Field(60.0, gt=0)
    # latency
    requests: int = Field(20, ge=1)
    concurrency: int = Field(1, ge=1, le=1024)
    # ramp
    ramp_start: int = Field(1, ge=1)
    ramp_factor: int = Field(2, ge=2)
    max_concurrency: int = Field(32, ge=1, le=1024)
    step_s: float = Field(15.0, gt=0)
    max_error_rate: float = Field(0.1, ge=0, le=1)
    """A ramp level whose share of errors other than 429 exceeds this ends the ramp."""
    # availability
    interval_s: float = Field(10.0, gt=0)
    duration_s: float = Field(300.0, gt=0)

    @model_validator(mode="after")
    def _ramp_bounds(self) -> ProbeConfig:
        if self.ramp_start > self.max_concurrency:
            raise ValueError("ramp_start must not exceed max_concurrency")
        return self

    @classmethod
    def make(cls, **fields: object) -> ProbeConfig:
        """Validated config; a bad value raises :class:`ProbeConfigError` naming it."""
        try:
            return cls.model_validate(fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "config"
            raise ProbeConfigError(f"probe setting {where}: {first['msg']}") from None


class Quantile(BaseModel):
    """A quantile with its distribution-free order-statistic interval (None: too few
    observations for that side)."""

    p: float
    value: float
    low: float | None
    high: float | None


class Distribution(BaseModel):
    """One metric over the measured requests; seconds or tokens/s."""

    n: int
    mean: float
    min: float
    max: float
    p50: Quantile
    p95: Quantile
    p99: Quantile


class Metrics(BaseModel):
    """Figures over every measured request of the probe (warm-up excluded).

    ``ttft_s`` time to first token; ``tpot_s`` time per output token after the first, per
    request, and ``output_tokens_per_s`` its inverse (decode speed); ``itl_s`` the gaps
    between streamed chunks, pooled; ``e2e_s`` request sent → stream complete."""

    requests: int
    ok: int
    errors: int
    error_rate: float | None
    error_rate_ci: tuple[float, float] | None
    errors_by_kind: dict[str, int]
    ttft_s: Distribution | None
    tpot_s: Distribution | None
    itl_s: Distribution | None
    output_tokens_per_s: Distribution | None
    e2e_s: Distribution | None
    input_tokens: int
    output_tokens: int
    tokens_from_usage: int
    """Successful requests whose token counts came from the server's usage report; the
    others counted streamed chunks (a server that reports no usage)."""
    retry_after_s: Distribution | None
    """The waits 429 answers asked for."""


class Sample(BaseModel):
    """One measured request, as stored (seconds are since the probe started)."""

    at_s: float
    phase: str
    """``warmup``, ``latency``, ``c=N`` (a ramp level) or ``check``."""
    ok: bool
    kind: str | None = None
    status: int | None = None
    ttft_s: float | None = None
    e2e_s: float | None = None
    output_tokens: int | None = None
    output_tokens_per_s: float | None = None
    retry_after_s: float | None = None


class RampLevel(BaseModel):
    """One step of the concurrency ramp. ``success_rpm`` is the rate at which requests
    that succeeded were sent (see docs/probe.md); ``tokens_per_min`` counts their input
    and output tokens at that rate."""

    concurrency: int
    duration_s: float
    sent: int
    ok: int
    rate_limited: int
    errors_by_kind: dict[str, int]
    success_rpm: float | None
    demand_rpm: float | None
    """What the workers would send if never refused: concurrency × 60 / median e2e."""
    tokens_per_min: float | None
    output_tokens_per_min: float | None
    ttft_p50_s: float | None
    e2e_p50_s: float | None


class RampSummary(BaseModel):
    levels: list[RampLevel]
    ended_by: Literal["rate_limit", "errors", "max_concurrency", "ceiling", "rejected"]
    sustainable_rpm: float | None
    """The highest rate of successful requests any level reached."""
    sustainable_tpm: float | None
    clean_rpm: float | None
    """The highest rate of a level without any error (a lower bound of the capacity)."""
    rate_limit_rpm: float | None
    """The rate served once 429s began (Retry-After respected): the limit's estimate."""
    first_429_concurrency: int | None
    first_429_at_s: float | None
    demand_rpm_at_first_429: float | None
    """The load (``demand_rpm``) of the level where 429s began."""


class Incident(BaseModel):
    """Consecutive failed checks. ``ended_at_s`` is the first good check after them
    (None: still failing when the probe ended)."""

    started_at_s: float
    ended_at_s: float | None
    failed_checks: int
    kinds: dict[str, int]


class AvailabilitySummary(BaseModel):
    interval_s: float
    duration_s: float
    checks: int
    up: int
    uptime: float | None
    uptime_ci: tuple[float, float] | None
    incidents: list[Incident]
    downtime_s: float
    """Summed length of the incidents (an open one counts until the probe ended)."""


class ProbeResult(BaseModel):
    """A probe of one model endpoint (schema ``assay.probe/1``)."""

    model_config = ConfigDict(populate_by_name=True)

    schema_: str = Field(PROBE_SCHEMA, alias="schema")
    probe_id: str
    model: str
    provider: str
    endpoint: str
    mode: Mode
    created_at: str
    finished_at: str
    duration_s: float
    config: ProbeConfig
    stopped_by: StopReason
    stop_message: str | None
    requests_sent: int
    cost_usd: float | None
    """Known spend; None when the model has no price."""
    cost_complete: bool
    """False when some answers carried no usage (their worst case was charged to the
    spend ceiling, not to ``cost_usd``)."""
    priced: bool
    metrics: Metrics
    ramp: RampSummary | None = None
    availability: AvailabilitySummary | None = None
    notes: list[str] = Field(default_factory=list)
    samples: list[Sample] = Field(default_factory=list)

    def to_json_dict(self) -> dict[str, Any]:
        """The stored / ``--json`` form (``"schema"`` key, JSON-ready values)."""
        return self.model_dump(mode="json", by_alias=True)
