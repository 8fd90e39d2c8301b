"""``run_probe(config)``: characterise one model endpoint and return a :class:`ProbeResult`."""

from __future__ import annotations

import re
import time
import uuid
from datetime import datetime, timezone
from typing import Any

from assay.core.messages import Message

from ..model import LLMModel
from ..spec import get_model
from ..types import GenerateConfig
from .guard import Guard, worst_case_cost
from .modes import Session, Sleep, run_availability, run_latency, run_ramp
from .schema import AvailabilitySummary, ProbeConfig, ProbeConfigError, ProbeResult, RampSummary
from .summary import metrics

#: ``get_model`` options a probe honours (no cache, cassette, retries or client-side limits:
#: the probe measures the endpoint itself).
PROBE_MODEL_OPTIONS = (
    "base_url",
    "api_key",
    "pricing",
    "max_tokens_field",
    "stream_usage",
    "default_max_tokens",
)


def new_probe_id(model: str, now: datetime | None = None) -> str:
    """``probe-openai-gpt-4o-mini-20261201-101500-3fa2b1``."""
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", model).strip("-")[:60]
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%d-%H%M%S")
    return f"probe-{slug}-{stamp}-{uuid.uuid4().hex[:6]}"


def _iso(dt: datetime) -> str:
    return dt.isoformat(timespec="milliseconds")


async def run_probe(
    config: ProbeConfig,
    *,
    model: LLMModel | None = None,
    sleep: Sleep | None = None,
    **model_options: Any,
) -> ProbeResult:
    """Probe ``config.model`` (or the given ``model``) as ``config.mode`` says.

    The requests go straight to the provider adapter: no cache, no cassette, no retries
    of the model layer (the probe counts every attempt and honours ``Retry-After``
    itself). ``model_options`` go to :func:`assay.llm.get_model` (``base_url``,
    ``api_key``, ``pricing``, ...)."""
    unknown = sorted(set(model_options) - set(PROBE_MODEL_OPTIONS))
    if unknown:
        raise ProbeConfigError(
            f"model option {unknown[0]!r} does not apply to a probe (it talks to the endpoint "
            f"directly); allowed: {', '.join(PROBE_MODEL_OPTIONS)}"
        )
    owned = model is None
    llm = model if model is not None else get_model(config.model, **model_options)
    provider = llm.provider
    request = provider.build_request(
        [Message("user", config.prompt)], [], GenerateConfig(max_tokens=config.max_tokens, stream=True)
    )
    per_request = worst_case_cost(llm.pricing, request, config.max_tokens)
    guard = Guard(config.max_requests, config.max_cost_usd, per_request)
    warm = getattr(provider, "warm", None)
    if callable(warm):
        warm()  # SDK imports and client set-up now, not inside the first timed request
    session = Session(provider, request, config, llm.pricing, guard)
    if sleep is not None:
        session.sleep = sleep
    notes: list[str] = []
    if llm.pricing is None:
        notes.append(
            f"no price for {llm.spec}: cost is unknown and --max-cost-usd cannot apply; only "
            f"--max-requests ({config.max_requests}) bounds this probe"
        )
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    ramp: RampSummary | None = None
    availability: AvailabilitySummary | None = None
    try:
        if config.mode == "latency":
            await run_latency(session)
        elif config.mode == "ramp":
            ramp = await run_ramp(session)
        else:
            availability = await run_availability(session)
    finally:
        if owned:
            await llm.aclose()
    counted = session.counted()
    m = metrics(counted, config.confidence)
    if m.ok and m.tokens_from_usage < m.ok:
        notes.append(
            f"{m.ok - m.tokens_from_usage} of {m.ok} answers carried no usage: their output tokens "
            "are the streamed chunks counted (an approximation) and their cost is unknown"
        )
    priced = llm.pricing is not None
    answered = [x for x in session.measured if x.ok]
    known = [x.cost_usd for x in answered if x.cost_usd is not None]
    return ProbeResult(
        probe_id=new_probe_id(llm.spec, started),
        model=llm.spec,
        provider=provider.name,
        endpoint=provider.endpoint,
        mode=config.mode,
        created_at=_iso(started),
        finished_at=_iso(datetime.now(timezone.utc)),
        duration_s=time.perf_counter() - t0,
        config=config,
        stopped_by=guard.stopped_by or "completed",
        stop_message=guard.message,
        requests_sent=guard.sent,
        cost_usd=sum(known) if priced else None,
        cost_complete=priced and len(known) == len(answered),
        priced=priced,
        metrics=m,
        ramp=ramp,
        availability=availability,
        notes=notes,
        samples=[x.to_sample() for x in session.measured],
    )
