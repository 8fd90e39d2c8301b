"""Synthesize large runs straight into a store (no agent runs): for viewer scale tests.

Trials get plausible rewards, terminations, grades, latencies, costs and a short
transcript; everything is written in one transaction per batch, so 10,000 trials take
a couple of seconds.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from assay.core import Message, ToolCall
from assay.core.results import Config, GradeResult, Outcome, RunInfo, TaskMeta, TrialResult
from assay.core.spec import RunSpec
from assay.core.transcript import Span, Transcript
from assay.store import Store

STRATA = ("normal", "edge", "adversarial", "high_risk")
SPLITS = ("regression", "capability", "holdout")
TAGS = ("refund", "cancel", "address", "identity-check", "policy-window", "injection", "lookup", "transfer")


def _transcript(rng: random.Random, task_id: str, fail: bool) -> tuple[Transcript, list[GradeResult]]:
    t = 0.0
    spans = [Span(0, "trial", task_id, 0.0)]
    messages = [Message("user", "Hi, I need help with my order #W1234567.")]
    spans.append(Span(1, "user", "user", t, t := t + 0.001, parent=0))
    messages.append(
        Message("assistant", "", tool_calls=[ToolCall("c1", "get_order_details", {"order_id": "#W1234567"})])
    )
    spans.append(
        Span(
            2,
            "agent",
            "respond",
            t,
            t := t + rng.uniform(0.2, 2.0),
            parent=0,
            attributes={"input_tokens": 900, "output_tokens": 40},
        )
    )
    error = fail and rng.random() < 0.3
    messages.append(
        Message(
            "tool",
            "Error: order #W1234567 does not exist" if error else '{"status": "delivered"}',
            tool_call_id="c1",
            name="get_order_details",
            error=error,
        )
    )
    spans.append(
        Span(3, "tool", "get_order_details", t, t := t + 0.01, parent=0, attributes={"caller": "agent"})
    )
    messages.append(Message("assistant", "Your order was delivered. Anything else?"))
    spans.append(Span(4, "agent", "respond", t, t := t + rng.uniform(0.2, 2.0), parent=0))
    messages.append(Message("user", "No, thanks. ###STOP###"))
    spans.append(Span(5, "user", "user", t, t := t + 0.001, parent=0))
    spans[0].end = t
    grades = [
        GradeResult("state", "state", True, 1.0, "end state matches gold"),
        GradeResult(
            "actions",
            "actions",
            not fail,
            0.0 if fail else 1.0,
            "required action not done: refund_order; no explicit confirmation before get_order_details"
            if fail
            else "process followed (1 tool calls)",
            category="missing_action" if fail else None,
        ),
    ]
    return Transcript(messages, spans, "2026-01-01T00:00:00+00:00"), grades


def synth_run(
    store: Store,
    run_id: str,
    *,
    tasks: int = 2500,
    k: int = 4,
    seed: int = 0,
    skill: float = 0.7,
    agent: str = "synthetic:agent",
    status: str = "finished",
    created: datetime | None = None,
    transcripts: bool = True,
    write_first: int | None = None,
) -> tuple[RunInfo, list[TrialResult]]:
    """Write a run of ``tasks`` × ``k`` trials; task i's pass probability varies around
    ``skill``. With ``write_first=N`` only the first N trials are written; the rest are
    returned (to be written later, as a run in progress would)."""
    rng = random.Random(seed)
    metas = [
        TaskMeta(
            f"task-{i:05d}",
            STRATA[i % 4],
            SPLITS[i % 3],
            tuple(sorted({TAGS[i % 8], TAGS[(i * 7 + 3) % 8]})),
            1 + i % 3,
            f"h{i:05d}",
        )
        for i in range(tasks)
    ]
    created = created or datetime(2026, 1, 1, tzinfo=timezone.utc)
    info = RunInfo(
        run_id=run_id,
        created_at=created.isoformat(timespec="milliseconds"),
        suite_name="synthetic",
        suite_version="1",
        suite_hash="synthhash00000001",
        suite_source="synthetic",
        spec=RunSpec(suite="synthetic"),
        config=Config(agent=agent),
        config_hash=f"cfg-{agent}",
        seed=0,
        trials_per_task=k,
        task_ids=[m.task_id for m in metas],
        status=status,  # type: ignore[arg-type]
    )
    store.create_run(info, metas)
    results: list[TrialResult] = []
    for i, meta in enumerate(metas):
        p = min(1.0, max(0.0, skill + 0.35 * ((i * 2654435761) % 1000 / 1000 - 0.5) * 2))
        for j in range(k):
            fail = rng.random() > p
            excluded = rng.random() < 0.005
            transcript, grades = _transcript(rng, meta.task_id, fail)
            results.append(
                TrialResult(
                    run_id=run_id,
                    task_id=meta.task_id,
                    trial_index=j,
                    seed=rng.getrandbits(32),
                    config_hash=info.config_hash,
                    reward=None if excluded else 0 if fail else 1,
                    termination="harness_error" if excluded else "user_stop",
                    grades=[] if excluded else grades,
                    metrics={
                        "turns": 4.0,
                        "tool_calls": 1.0,
                        "tool_errors": float(fail and rng.random() < 0.3),
                    },
                    suite_name="synthetic",
                    suite_version="1",
                    suite_hash=info.suite_hash,
                    error_category="missing_action" if fail else None,
                    root_cause=("HARNESS" if excluded else "AGENT" if fail else None),  # type: ignore[arg-type]
                    input_tokens=rng.randint(800, 4000),
                    output_tokens=rng.randint(30, 400),
                    cost_usd=round(rng.lognormvariate(-5.5, 0.6), 6),
                    latency_s=rng.lognormvariate(0.5, 0.5),
                    started_at=(created + timedelta(seconds=i)).isoformat(),
                    ended_at=(created + timedelta(seconds=i + 2)).isoformat(),
                    transcript=transcript if transcripts else None,
                    outcome=Outcome("user_stop", "a", "b", []),
                )
            )
    n = len(results) if write_first is None else write_first
    write_bulk(store, results[:n])
    if status == "finished":
        store.set_status(run_id, "finished")
    return info, results[n:]


def write_bulk(store: Store, results: list[TrialResult]) -> None:
    """Write trials in batches (one transaction per batch)."""
    for start in range(0, len(results), 1000):
        store.write_trials(results[start : start + 1000])
