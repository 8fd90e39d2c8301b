"""Reading a run as columns and SQL aggregates: summaries of huge runs without
materialising one object per trial. Plain arrays and dicts come out; the metrics layer
turns them into its frames (:class:`assay.metrics.TrialFrame`, ``FrameExtras``)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from sqlalchemy import Engine, and_, case, exists, func, select, text

from ..core.results import USAGE_FIELDS
from . import schema

_FRAME_SQL = """
SELECT codes.code, t.trial_index, t.reward, t.termination, t.root_cause, t.latency_s, t.cost_usd,
       t.input_tokens, t.output_tokens
FROM trials AS t
JOIN (SELECT task_id, ROW_NUMBER() OVER (ORDER BY task_id) - 1 AS code
      FROM (SELECT DISTINCT task_id FROM trials WHERE run_id = :run_id) AS ids) AS codes
  ON codes.task_id = t.task_id
WHERE t.run_id = :run_id
"""
_TASK_IDS_SQL = "SELECT DISTINCT task_id FROM trials WHERE run_id = :run_id ORDER BY task_id"


def frame_columns(engine: Engine, run_id: str) -> dict[str, Any]:
    """The scalar columns of a run's trials, as the fields of a ``TrialFrame``. Task ids
    come back as integer codes (a window function numbers them), so a million rows
    convert to arrays quickly."""
    with engine.connect() as conn:
        task_ids = [row[0] for row in conn.execute(text(_TASK_IDS_SQL), {"run_id": run_id})]
        cursor = conn.exec_driver_sql(*_positional(_FRAME_SQL, run_id, engine.dialect.paramstyle)).cursor
        rows = cursor.fetchall() if cursor is not None else []
    columns: Sequence[Sequence[Any]] = list(zip(*rows, strict=True)) if rows else [()] * 9
    code, trial_index, reward, termination, root_cause, latency, cost, t_in, t_out = columns
    return dict(
        task_ids=task_ids,
        task=np.asarray(code, dtype=np.intp),
        trial_index=np.asarray(trial_index, dtype=np.int64),
        reward=np.array(reward, dtype=np.float64),  # None -> nan
        termination=np.asarray(termination, dtype=object),
        root_cause=np.asarray(root_cause, dtype=object),
        latency_s=np.asarray(latency, dtype=np.float64),
        cost_usd=np.array(cost, dtype=np.float64),
        input_tokens=np.array(t_in, dtype=np.float64),
        output_tokens=np.array(t_out, dtype=np.float64),
    )


def _positional(sql: str, run_id: str, paramstyle: str) -> tuple[str, tuple[str, ...]]:
    """The statement with the DBAPI's own placeholders (raw cursor: no per-row wrapping)."""
    if paramstyle == "numeric":
        return sql.replace(":run_id", ":1"), (run_id,)
    mark = {"qmark": "?", "format": "%s", "pyformat": "%s"}.get(paramstyle)
    if mark is None:  # named styles: keep the name
        return sql, ({"run_id": run_id},)  # type: ignore[return-value]
    return sql.replace(":run_id", mark), (run_id, run_id)


def frame_aggregates(engine: Engine, run_id: str) -> dict[str, Any]:
    """Grader verdict counts, process-metric means, usage by role and the graders that
    failed each task, as SQL aggregates."""
    g, t, m, u = schema.grades, schema.trials, schema.trial_metrics, schema.trial_usage
    verdicts = (
        select(
            g.c.grader,
            func.sum(case((g.c.skipped, 1), else_=0)),
            func.sum(case((and_(~g.c.skipped, g.c.passed.is_(True)), 1), else_=0)),
            func.sum(case((and_(~g.c.skipped, g.c.passed.is_(False)), 1), else_=0)),
            func.sum(case((and_(~g.c.skipped, g.c.passed.is_(None)), 1), else_=0)),
            func.sum(case((g.c.needs_review, 1), else_=0)),
        )
        .where(g.c.run_id == run_id)
        .group_by(g.c.grader)
    )
    means = select(m.c.name, func.avg(m.c.value)).where(m.c.run_id == run_id).group_by(m.c.name)
    usage = (
        select(
            u.c.role,
            *[func.sum(getattr(u.c, f)) for f in USAGE_FIELDS],
            func.sum(u.c.cost_usd),
            func.sum(case((u.c.cost_usd.is_(None), 1), else_=0)),
        )
        .where(u.c.run_id == run_id)
        .group_by(u.c.role)
    )
    failed_by = and_(
        g.c.run_id == t.c.run_id,
        g.c.task_id == t.c.task_id,
        g.c.trial_index == t.c.trial_index,
        g.c.gating,
        g.c.passed.is_(False),
    )
    grader_failures = (
        select(g.c.task_id, g.c.grader, func.count())
        .select_from(
            g.join(
                t,
                and_(
                    g.c.run_id == t.c.run_id, g.c.task_id == t.c.task_id, g.c.trial_index == t.c.trial_index
                ),
            )
        )
        .where(t.c.run_id == run_id, t.c.reward == 0, g.c.gating, g.c.passed.is_(False))
        .group_by(g.c.task_id, g.c.grader)
    )
    other_failures = (
        select(t.c.task_id, t.c.termination, func.count())
        .where(t.c.run_id == run_id, t.c.reward == 0, ~exists().where(failed_by))
        .group_by(t.c.task_id, t.c.termination)
    )
    with engine.connect() as conn:
        graders: dict[str, dict[str, int]] = {}
        for name, skipped, passed, failed, none, review in conn.execute(verdicts):
            counts = {"skipped": skipped, "passed": passed, "failed": failed, "no_verdict": none}
            graders[name] = dict(
                sorted({**{k: int(v) for k, v in counts.items() if v}, "needs_review": int(review)}.items())
            )
        process = {name: float(avg) for name, avg in conn.execute(means)}
        by_role: dict[str, dict[str, Any]] = {}
        for row in conn.execute(usage):
            role, *sums, cost, unpriced = row
            by_role[role] = {
                **{f: int(v or 0) for f, v in zip(USAGE_FIELDS, sums, strict=True)},
                "cost_usd": float(cost or 0.0),
                "unpriced_trials": int(unpriced),
            }
        failures: dict[str, Counter[str]] = defaultdict(Counter)
        for task_id, what, count in [*conn.execute(grader_failures), *conn.execute(other_failures)]:
            failures[task_id][what] += count
    return {
        "graders": dict(sorted(graders.items())),
        "process": dict(sorted(process.items())),
        "usage_by_role": dict(sorted(by_role.items())),
        "failures": {task: dict(c) for task, c in failures.items()},
    }


GradeTuple = tuple[str, int, str, str, "bool | None", bool, dict[str, float]]


def grade_rows(engine: Engine, run_id: str, kinds: Iterable[str]) -> list[GradeTuple]:
    """The grades of the given kinds (e.g. the RAG kinds) with their metrics, in task and
    trial order, as ``(task_id, trial_index, grader, kind, passed, skipped, metrics)``:
    the fields of :class:`assay.metrics.GradeRow`, which the RAG summary reads."""
    g = schema.grades
    query = (
        select(g.c.task_id, g.c.trial_index, g.c.grader, g.c.kind, g.c.passed, g.c.skipped, g.c.metrics)
        .where(g.c.run_id == run_id, g.c.kind.in_(sorted(set(kinds))))
        .order_by(g.c.task_id, g.c.trial_index, g.c.position)
    )
    with engine.connect() as conn:
        return [
            (task, trial, grader, kind, passed, bool(skipped), json.loads(metrics))
            for task, trial, grader, kind, passed, skipped, metrics in conn.execute(query)
        ]


def graded_scores(engine: Engine, run_id: str) -> list[tuple[str, str, float]]:
    """``(task_id, grader, score)`` of the not-skipped grades of graders whose scores are
    not all 0 or 1 (rubric judges, partial credit), in task and trial order."""
    g = schema.grades
    scored = (g.c.run_id == run_id) & ~g.c.skipped & g.c.score.is_not(None)
    graders = select(g.c.grader).where(scored, g.c.score != 0, g.c.score != 1).distinct()
    query = (
        select(g.c.task_id, g.c.grader, g.c.score)
        .where(scored, g.c.grader.in_(graders.scalar_subquery()))
        .order_by(g.c.task_id, g.c.trial_index, g.c.position)
    )
    with engine.connect() as conn:
        return [(task, grader, float(score)) for task, grader, score in conn.execute(query)]
