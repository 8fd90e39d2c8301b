"""Figures from measured requests: distributions with order-statistic intervals, error
rates with Wilson intervals, ramp-level rates, incidents."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from assay.stats import quantile_interval, wilson_interval

from .call import Measured
from .schema import Distribution, Incident, Metrics, Quantile, RampLevel


def distribution(values: Sequence[float], confidence: float) -> Distribution | None:
    """n, mean, min, max and p50/p95/p99 with distribution-free intervals; None if empty."""
    data = [float(v) for v in values]
    if not data:
        return None

    def q(p: float) -> Quantile:
        ci = quantile_interval(data, p, confidence)
        return Quantile(p=p, value=ci.estimate, low=ci.low, high=ci.high)

    return Distribution(
        n=len(data),
        mean=float(np.mean(data)),
        min=min(data),
        max=max(data),
        p50=q(0.5),
        p95=q(0.95),
        p99=q(0.99),
    )


def metrics(measured: Sequence[Measured], confidence: float) -> Metrics:
    ok = [m for m in measured if m.ok]
    failed = [m for m in measured if not m.ok]
    n = len(measured)

    def present(values: Sequence[float | None]) -> list[float]:
        return [v for v in values if v is not None]

    return Metrics(
        requests=n,
        ok=len(ok),
        errors=len(failed),
        error_rate=len(failed) / n if n else None,
        error_rate_ci=wilson_interval(len(failed), n, confidence) if n else None,
        errors_by_kind=dict(Counter(m.kind or "other" for m in failed)),
        ttft_s=distribution(present([m.ttft_s for m in ok]), confidence),
        tpot_s=distribution(present([m.tpot_s for m in ok]), confidence),
        itl_s=distribution([g for m in ok for g in m.gaps()], confidence),
        output_tokens_per_s=distribution(present([m.output_tokens_per_s for m in ok]), confidence),
        e2e_s=distribution(present([m.e2e_s for m in ok]), confidence),
        input_tokens=sum(m.input_tokens or 0 for m in ok),
        output_tokens=sum(m.output_tokens or 0 for m in ok),
        tokens_from_usage=sum(m.tokens_from_usage for m in ok),
        retry_after_s=distribution(present([m.retry_after_s for m in failed]), confidence),
    )


def success_rate_per_s(level: Sequence[Measured]) -> float | None:
    """Rate (per second) at which requests that succeeded were sent.

    When 429s came after the last success, the server named the next free slot
    (their send time + Retry-After): the rate is then ``k / (slot − first success)``, which
    stays right for bursty window limits. Otherwise it is ``(k − 1) / (last − first)``
    over the successes' send times (workers start staggered, so these are spread)."""
    sends = sorted(m.at_s for m in level if m.ok)
    if not sends:
        return None
    last = sends[-1]
    slots = [
        m.at_s + m.retry_after_s
        for m in level
        if m.kind == "rate_limited" and m.retry_after_s is not None and m.at_s > last
    ]
    if slots and min(slots) > sends[0]:
        return len(sends) / (min(slots) - sends[0])
    if len(sends) < 2 or last <= sends[0]:
        return None
    return (len(sends) - 1) / (last - sends[0])


def ramp_level(concurrency: int, duration_s: float, level: Sequence[Measured]) -> RampLevel:
    ok = [m for m in level if m.ok]
    per_s = success_rate_per_s(level)
    tokens = [(m.input_tokens or 0) + (m.output_tokens or 0) for m in ok]
    outputs = [m.output_tokens or 0 for m in ok]
    ttfts = [m.ttft_s for m in ok if m.ttft_s is not None]
    e2es = [m.e2e_s for m in ok if m.e2e_s is not None]
    return RampLevel(
        concurrency=concurrency,
        duration_s=duration_s,
        sent=len(level),
        ok=len(ok),
        rate_limited=sum(m.kind == "rate_limited" for m in level),
        errors_by_kind=dict(Counter(m.kind or "other" for m in level if not m.ok)),
        success_rpm=None if per_s is None else 60.0 * per_s,
        demand_rpm=60.0 * concurrency / float(np.median(e2es)) if e2es else None,
        tokens_per_min=None if per_s is None or not tokens else 60.0 * per_s * float(np.mean(tokens)),
        output_tokens_per_min=None
        if per_s is None or not outputs
        else 60.0 * per_s * float(np.mean(outputs)),
        ttft_p50_s=float(np.median(ttfts)) if ttfts else None,
        e2e_p50_s=float(np.median(e2es)) if e2es else None,
    )


def incidents(checks: Sequence[Measured], end_s: float) -> tuple[list[Incident], float]:
    """Runs of consecutive failed checks (in send order) and their summed length."""
    out: list[Incident] = []
    current: list[Measured] = []
    downtime = 0.0
    for m in sorted(checks, key=lambda c: c.at_s):
        if not m.ok:
            current.append(m)
            continue
        if current:
            out.append(_incident(current, m.at_s))
            downtime += m.at_s - current[0].at_s
            current = []
    if current:
        out.append(_incident(current, None))
        downtime += end_s - current[0].at_s
    return out, downtime


def _incident(failed: list[Measured], ended: float | None) -> Incident:
    return Incident(
        started_at_s=failed[0].at_s,
        ended_at_s=ended,
        failed_checks=len(failed),
        kinds=dict(Counter(m.kind or "other" for m in failed)),
    )
