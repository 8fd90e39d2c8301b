"""A trial as table rows (its trial, grade, transcript, metric, usage and model-call
rows), and the rows of some trials of a run picked by key."""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy import and_, tuple_

from ..core.results import USAGE_FIELDS, TrialResult
from .codec import encode_record, encode_transcript, grade_row
from .schema import METRIC_COLUMNS

Row = dict[str, Any]
_COLUMNS = frozenset(METRIC_COLUMNS)


def _of_keys(table: Any, run_id: str, keys: list[tuple[str, int]]) -> Any:
    """The rows of ``table`` of these (task id, trial index) trials of a run. The task
    ids are named on their own too: SQLite then seeks each task's rows by the primary
    key; with the pairs alone it walks every row of the run (5 s for 500 trials' grades
    among a million)."""
    return and_(
        table.c.run_id == run_id,
        table.c.task_id.in_(sorted({task for task, _ in keys})),
        tuple_(table.c.task_id, table.c.trial_index).in_(keys),
    )


def _rows(result: TrialResult) -> tuple[Row, list[Row], Row | None, list[Row], list[Row], list[Row]]:
    """The trial row (with its process metrics, :data:`~.schema.METRIC_COLUMNS`), grade
    rows, transcript row, rows of its other metrics, usage rows and model-call rows of a
    result."""
    key = {"run_id": result.run_id, "task_id": result.task_id, "trial_index": result.trial_index}
    metrics = result.metrics
    trial_row = {
        **key,
        "seed": result.seed,
        "reward": result.reward,
        "termination": result.termination,
        "root_cause": result.root_cause,
        "error_category": result.error_category,
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "cost_usd": result.cost_usd,
        "latency_s": result.latency_s,
        "started_at": result.started_at,
        "ended_at": result.ended_at,
        "record": encode_record(result),
        **{name: metrics.get(name) for name in METRIC_COLUMNS},
    }
    grade_rows = [{**key, "position": i, **grade_row(g)} for i, g in enumerate(result.grades)]
    transcript = None if result.transcript is None else {**key, "data": encode_transcript(result.transcript)}
    others = [
        {**key, "name": name, "value": value} for name, value in metrics.items() if name not in _COLUMNS
    ]
    usage = [
        {**key, "role": role, "cost_usd": u.get("cost_usd"), **{f: u.get(f) or 0 for f in USAGE_FIELDS}}
        for role, u in result.usage.items()
    ]
    calls = (
        []
        if result.transcript is None
        else [
            {**key, "position": i, **dataclasses.asdict(call)}
            for i, call in enumerate(result.transcript.model_calls())
        ]
    )
    return trial_row, grade_rows, transcript, others, usage, calls
