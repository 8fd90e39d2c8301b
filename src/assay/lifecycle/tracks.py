"""Snapshot vs probe tracks: what a run says about time-sensitive facts.

The **snapshot track** (a run without ``--probe``) evaluates against the frozen
evidence of each task: reproducible, the right track for "did this change regress?".
The **probe track** (``--probe FN``) re-checks the evidence at run time
(:mod:`assay.runner.variants`) and answers "does the system still handle the real
world?". The two are never mixed into one score: :func:`track_report` keeps stale
evidence (content drift) and probe errors (a source down) apart from agent failures,
which are counted only on the tasks that ran.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import Any

from ..core.results import TrialResult
from ..core.task import Task
from ..stats import clustered_rate_interval

SCHEMA = "assay.tracks/1"


def _rate(results: Sequence[TrialResult]) -> dict[str, Any]:
    counted = [r for r in results if r.reward is not None]
    if not counted:
        return {"trials": 0, "success_rate": None, "ci": None, "agent_failures": 0}
    ci = clustered_rate_interval([float(r.reward or 0) for r in counted], [r.task_id for r in counted])
    return {
        "trials": len(counted),
        "success_rate": round(sum(r.reward or 0 for r in counted) / len(counted), 4),
        "ci": [round(ci.low, 4), round(ci.high, 4)],
        "agent_failures": sum(1 for r in counted if r.reward == 0),
    }


def track_report(
    checks: Sequence[dict[str, Any]], results: Sequence[TrialResult], *, track: str, run_id: str
) -> dict[str, Any]:
    """The run's track, its evidence checks by outcome and the agent's results on the
    tasks that ran (split by whether the task was refreshed with current facts)."""
    status = Counter(c["status"] for c in checks)
    refreshed = {c["task_id"] for c in checks if c["action"] == "refreshed"}
    skipped = sorted({c["task_id"] for c in checks if str(c["action"]).startswith("skipped")})
    return {
        "schema": SCHEMA,
        "run_id": run_id,
        "track": track,
        "evidence": {
            "checked": len(checks),
            "current": status.get("current", 0),
            "stale": status.get("stale", 0),
            "probe_errors": status.get("probe_error", 0),
        },
        "stale": [
            {
                k: c.get(k)
                for k in (
                    "task_id",
                    "evidence_id",
                    "source",
                    "fact",
                    "frozen",
                    "current",
                    "retrieved_at",
                    "checked_at",
                    "action",
                )
            }
            for c in checks
            if c["status"] == "stale"
        ],
        "probe_errors": [
            {k: c.get(k) for k in ("task_id", "evidence_id", "source", "error", "checked_at")}
            for c in checks
            if c["status"] == "probe_error"
        ],
        "tasks_not_run": skipped,
        "agent": {
            "all": _rate(results),
            "as_written": _rate([r for r in results if r.task_id not in refreshed]),
            "refreshed": _rate([r for r in results if r.task_id in refreshed]),
        },
        "note": "stale evidence and probe errors are not agent failures: counted here, never in the rates",
    }


def snapshot_evidence(tasks: Iterable[Task], now: datetime | None = None) -> list[dict[str, Any]]:
    """The frozen evidence of ``tasks`` with its age; ``out_of_date`` when older than the
    record's ``max_age_days`` (the snapshot still evaluates against it)."""
    now = now or datetime.now(timezone.utc)
    rows = []
    for task in tasks:
        for e in task.evidence:
            retrieved = (
                e.retrieved_at if e.retrieved_at.tzinfo else e.retrieved_at.replace(tzinfo=timezone.utc)
            )
            age = (now - retrieved).total_seconds() / 86400
            rows.append(
                {
                    "task_id": task.id,
                    "evidence_id": e.id,
                    "source": e.source,
                    "value": e.value,
                    "retrieved_at": e.retrieved_at.isoformat(),
                    "age_days": round(age, 1),
                    "out_of_date": e.max_age_days is not None and age > e.max_age_days,
                }
            )
    return rows
