"""Reading a run as columns and SQL aggregates: summaries of huge runs without
materialising one object per trial. Plain arrays and dicts come out; the metrics layer
turns them into its frames (:class:`assay.metrics.TrialFrame`, ``FrameExtras``)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
import re
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine, and_, case, func, select, text

from ..core.results import USAGE_FIELDS
from . import schema

_FRAME_SQL = """
SELECT task_id, trial_index, reward, termination, root_cause, error_category, latency_s, cost_usd,
       input_tokens, output_tokens
FROM trials WHERE run_id = :run_id ORDER BY task_id, trial_index
"""


def _fetch(engine: Engine, sql: str, run_id: str, *extra: Any) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` (with ``:run_id`` and then ``:p1``, ``:p2``... parameters) through
    the raw DBAPI cursor: no per-row wrapping, a million rows in about a second."""
    statement, params = _positional(sql, engine.dialect.paramstyle, run_id, *extra)
    with engine.connect() as conn:
        cursor = conn.exec_driver_sql(statement, params).cursor
        return cursor.fetchall() if cursor is not None else []


def _task_codes(task_ids: Sequence[str]) -> tuple[list[str], npt.NDArray[np.intp]]:
    """Integer codes of task ids that come sorted (equal ids adjacent): the distinct ids
    in order, and each row's code."""
    if not task_ids:
        return [], np.zeros(0, dtype=np.intp)
    array = np.asarray(task_ids, dtype=object)
    starts = np.ones(array.size, dtype=bool)
    starts[1:] = array[1:] != array[:-1]
    return array[starts].tolist(), (np.cumsum(starts) - 1).astype(np.intp)


def frame_columns(engine: Engine, run_id: str) -> dict[str, Any]:
    """The scalar columns of a run's trials, in (task id, trial index) order, as the
    fields of a ``TrialFrame``; task ids come back as integer codes into ``task_ids``."""
    rows = _fetch(engine, _FRAME_SQL, run_id)
    columns: Sequence[Sequence[Any]] = list(zip(*rows, strict=True)) if rows else [()] * 10
    task_id, trial_index, reward, termination, root_cause, category, latency, cost, t_in, t_out = columns
    task_ids, codes = _task_codes(task_id)
    return dict(
        task_ids=task_ids,
        task=codes,
        trial_index=np.asarray(trial_index, dtype=np.int64),
        reward=np.array(reward, dtype=np.float64),  # None -> nan
        termination=np.asarray(termination, dtype=object),
        root_cause=np.asarray(root_cause, dtype=object),
        latency_s=np.asarray(latency, dtype=np.float64),
        cost_usd=np.array(cost, dtype=np.float64),
        input_tokens=np.array(t_in, dtype=np.float64),
        output_tokens=np.array(t_out, dtype=np.float64),
        error_category=np.asarray(category, dtype=object),
    )


def _positional(sql: str, paramstyle: str, *values: Any) -> tuple[str, Any]:
    """The statement with the DBAPI's own placeholders (raw cursor: no per-row wrapping).
    ``:run_id`` is the first value, ``:p1``, ``:p2``... the next ones."""
    names = ["run_id", *[f"p{i}" for i in range(1, len(values))]]
    pattern = re.compile(":(" + "|".join(names) + r")\b")
    if paramstyle in ("named", "pyformat"):
        style = "%({})s" if paramstyle == "pyformat" else ":{}"
        return pattern.sub(lambda m: style.format(m.group(1)), sql), dict(zip(names, values, strict=True))
    order: list[Any] = []

    def mark(match: re.Match[str]) -> str:
        order.append(values[names.index(match.group(1))])
        return {"qmark": "?", "format": "%s"}.get(paramstyle) or f":{len(order)}"

    return pattern.sub(mark, sql), tuple(order)


# Counted trials only (reward not None): sums over all of a run's rows (read from the
# covering indexes, in index order), minus the few rows of excluded trials.
_METRIC_SUMS_SQL = """
SELECT name, task_id, SUM(value), COUNT(*) FROM trial_metrics WHERE run_id = :run_id GROUP BY name, task_id
"""
_EXCLUDED_KEYS = "(task_id, trial_index) IN (SELECT task_id, trial_index FROM trials WHERE run_id = :run_id AND reward IS NULL)"
_METRIC_EXCLUDED_SQL = f"""
SELECT name, task_id, SUM(value), COUNT(*) FROM trial_metrics
WHERE run_id = :run_id AND {_EXCLUDED_KEYS} GROUP BY name, task_id
"""
_SCORE_SUMS_SQL = """
SELECT grader, task_id, SUM(score), COUNT(score) FROM grades
WHERE run_id = :run_id AND NOT skipped GROUP BY grader, task_id
"""
_SCORE_EXCLUDED_SQL = f"""
SELECT grader, task_id, SUM(score), COUNT(score) FROM grades
WHERE run_id = :run_id AND NOT skipped AND {_EXCLUDED_KEYS} GROUP BY grader, task_id
"""


def _minus(
    total: list[tuple[Any, ...]], excluded: list[tuple[Any, ...]], prefix: str = ""
) -> list[tuple[str, str, float, int]]:
    gone = {(name, task): (float(s or 0.0), int(n)) for name, task, s, n in excluded}
    out = []
    for name, task, s, n in total:
        less_s, less_n = gone.get((name, task), (0.0, 0))
        if int(n) - less_n > 0:
            out.append((task, prefix + name, float(s or 0.0) - less_s, int(n) - less_n))
    return out


def value_sums(engine: Engine, run_id: str) -> list[tuple[str, str, float, int]]:
    """Per task and name, the sum and count of the process metrics (``turns``...) and
    grader scores (``score.<grader>``, every scored verdict) of the run's counted
    trials (reward not None): ``(task id, name, sum, count)`` rows."""
    metrics = _minus(_fetch(engine, _METRIC_SUMS_SQL, run_id), _fetch(engine, _METRIC_EXCLUDED_SQL, run_id))
    scores = _minus(
        _fetch(engine, _SCORE_SUMS_SQL, run_id), _fetch(engine, _SCORE_EXCLUDED_SQL, run_id), "score."
    )
    return metrics + scores


_METRIC_VALUES_SQL = """
SELECT task_id, trial_index, value FROM trial_metrics WHERE run_id = :run_id AND name = :p1
"""
_SCORE_VALUES_SQL = """
SELECT task_id, trial_index, score FROM grades
WHERE run_id = :run_id AND grader = :p1 AND score IS NOT NULL AND NOT skipped ORDER BY position
"""


def value_rows(engine: Engine, run_id: str, name: str) -> list[tuple[str, int, float]]:
    """``(task id, trial index, value)`` of every trial of the run (counted or not) that
    carries a process metric or grader score (``score.<grader>``; a grader named twice
    in a trial: its last verdict comes last)."""
    if name.startswith("score."):
        return _fetch(engine, _SCORE_VALUES_SQL, run_id, name.removeprefix("score."))
    return _fetch(engine, _METRIC_VALUES_SQL, run_id, name)


# Failed trials (reward 0): the graders that failed them, and how the others ended.
_GRADER_FAILURES_SQL = """
SELECT task_id, grader, COUNT(*) FROM grades
WHERE run_id = :run_id AND gating AND passed = false
  AND (task_id, trial_index) IN (SELECT task_id, trial_index FROM trials WHERE run_id = :run_id AND reward = 0)
GROUP BY task_id, grader
"""
_OTHER_FAILURES_SQL = """
SELECT task_id, termination, COUNT(*) FROM trials
WHERE run_id = :run_id AND reward = 0
  AND (task_id, trial_index) NOT IN (
    SELECT task_id, trial_index FROM grades WHERE run_id = :run_id AND gating AND passed = false)
GROUP BY task_id, termination
"""


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
    means = (
        select(m.c.name, func.avg(m.c.value), func.sum(m.c.value))
        .where(m.c.run_id == run_id)
        .group_by(m.c.name)
    )
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
    with engine.connect() as conn:
        failed_trials = conn.execute(text(_GRADER_FAILURES_SQL), {"run_id": run_id}).all()
        n_grader_rows = len(failed_trials)
        failed_trials += conn.execute(text(_OTHER_FAILURES_SQL), {"run_id": run_id}).all()
        graders: dict[str, dict[str, int]] = {}
        for name, skipped, passed, failed, none, review in conn.execute(verdicts):
            counts = {"skipped": skipped, "passed": passed, "failed": failed, "no_verdict": none}
            graders[name] = dict(
                sorted({**{k: int(v) for k, v in counts.items() if v}, "needs_review": int(review)}.items())
            )
        process_rows = conn.execute(means).all()
        by_role: dict[str, dict[str, Any]] = {}
        for row in conn.execute(usage):
            role, *sums, cost, unpriced = row
            by_role[role] = {
                **{f: int(v or 0) for f, v in zip(USAGE_FIELDS, sums, strict=True)},
                "cost_usd": float(cost or 0.0),
                "unpriced_trials": int(unpriced),
            }
        failures: dict[str, Counter[str]] = defaultdict(Counter)
        for task_id, what, count in failed_trials:
            failures[task_id][what] += count
    failed_graders: Counter[str] = Counter()
    for _, grader, count in failed_trials[:n_grader_rows]:
        failed_graders[grader] += count
    return {
        "graders": dict(sorted(graders.items())),
        "process": {name: float(avg) for name, avg, _ in sorted(process_rows)},
        "process_totals": {name: float(total) for name, _, total in sorted(process_rows)},
        "failed_graders": dict(sorted(failed_graders.items(), key=lambda kv: (-kv[1], kv[0]))),
        "usage_by_role": dict(sorted(by_role.items())),
        "failures": {task: dict(c) for task, c in failures.items()},
    }
