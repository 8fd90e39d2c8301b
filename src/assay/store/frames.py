"""Reading a run as columns and SQL aggregates: summaries of huge runs without
materialising one object per trial. Plain arrays and dicts come out; the metrics layer
turns them into its frames (:class:`assay.metrics.TrialFrame`, ``FrameExtras``)."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine, and_, case, func, select, text

from ..core.results import USAGE_FIELDS
from . import schema
from .faults import raw_reads

# NULLs come back as sentinels (NaN has no SQL spelling) so that rows go straight into
# one typed numpy record array, with no list of tuples in between.
_FRAME_SQL = """
SELECT task_id, trial_index, COALESCE(reward, -1), termination, root_cause, error_category, latency_s,
       COALESCE(cost_usd, -1e308), COALESCE(input_tokens, -1), COALESCE(output_tokens, -1)
FROM trials WHERE run_id = :run_id ORDER BY {task_order}, trial_index
"""
_FRAME_DTYPE = np.dtype(
    [
        ("task_id", object),
        ("trial_index", np.int64),
        ("reward", np.float64),
        ("termination", object),
        ("root_cause", object),
        ("error_category", object),
        ("latency_s", np.float64),
        ("cost_usd", np.float64),
        ("input_tokens", np.float64),
        ("output_tokens", np.float64),
    ]
)


def _fetch(engine: Engine, sql: str, run_id: str, *extra: Any) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` (with ``:run_id`` and then ``:p1``, ``:p2``... parameters) through
    the raw DBAPI cursor: no per-row wrapping, a million rows in about a second."""
    statement, params = _positional(sql, engine.dialect.paramstyle, run_id, *extra)
    with engine.connect() as conn, raw_reads(engine):
        cursor = conn.exec_driver_sql(statement, params).cursor
        return list(cursor.fetchall()) if cursor is not None else []


def _rows(cursor: Any) -> Iterator[tuple[Any, ...]]:
    """A DBAPI cursor's rows, fetched in batches."""
    if cursor is None:
        return
    while batch := cursor.fetchmany(20_000):
        yield from batch


def _task_codes(task_ids: npt.ArrayLike) -> tuple[list[str], npt.NDArray[np.intp]]:
    """Integer codes of task ids that come sorted (equal ids adjacent): the distinct ids
    in order, and each row's code."""
    array = np.asarray(task_ids, dtype=object)
    if not array.size:
        return [], np.zeros(0, dtype=np.intp)
    starts = np.ones(array.size, dtype=bool)
    starts[1:] = array[1:] != array[:-1]
    return array[starts].tolist(), (np.cumsum(starts) - 1).astype(np.intp)


def frame_columns(engine: Engine, run_id: str) -> dict[str, Any]:
    """The scalar columns of a run's trials, in (task id, trial index) order, as the
    fields of a ``TrialFrame``; task ids come back as integer codes into ``task_ids``."""
    # PostgreSQL sorts text by its locale unless told; task ids are ordered as Python does
    order = 'task_id COLLATE "C"' if engine.dialect.name == "postgresql" else "task_id"
    statement, params = _positional(_FRAME_SQL.format(task_order=order), engine.dialect.paramstyle, run_id)
    with engine.connect() as conn, raw_reads(engine):
        cursor = conn.exec_driver_sql(statement, params).cursor
        rows = np.fromiter(_rows(cursor), dtype=_FRAME_DTYPE)
    task_ids, codes = _task_codes(rows["task_id"])

    def unknown(values: npt.NDArray[np.float64], sentinel: float) -> npt.NDArray[np.float64]:
        return np.where(values == sentinel, np.nan, values)

    return dict(
        task_ids=task_ids,
        task=codes,
        trial_index=rows["trial_index"].copy(),
        reward=unknown(rows["reward"], -1.0),
        termination=rows["termination"].copy(),
        root_cause=rows["root_cause"].copy(),
        latency_s=rows["latency_s"].copy(),
        cost_usd=unknown(rows["cost_usd"], -1e308),
        input_tokens=unknown(rows["input_tokens"], -1.0),
        output_tokens=unknown(rows["output_tokens"], -1.0),
        error_category=rows["error_category"].copy(),
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


# The process metrics kept as columns of the trials (schema 5), per task over the counted
# trials (reward not None), in one pass over the run's covering index in task order.
_COLUMN_SUMS_SQL = (
    "SELECT task_id, "
    + ", ".join(f"SUM({name}), COUNT({name})" for name in schema.METRIC_COLUMNS)
    + " FROM trials WHERE run_id = :run_id AND reward IS NOT NULL GROUP BY task_id"
)
# Their means and totals over all of the run's trials.
_COLUMN_MEANS_SQL = (
    "SELECT "
    + ", ".join(f"AVG({name}), SUM({name}), COUNT({name})" for name in schema.METRIC_COLUMNS)
    + " FROM trials WHERE run_id = :run_id"
)

# Counted trials only: sums over all of a run's rows (read from the covering indexes, in
# index order), minus the few rows of excluded trials.
_METRIC_SUMS_SQL = """
SELECT name, task_id, SUM(value), COUNT(*) FROM trial_metrics WHERE run_id = :run_id GROUP BY name, task_id
"""
# Excluded trials are few: they drive the join, probing the rows of each by primary key
# (SQLite is told which index: it would otherwise scan a covering index run-wide).
_METRIC_EXCLUDED_SQL = """
SELECT m.name, m.task_id, SUM(m.value), COUNT(*)
FROM trials AS t CROSS JOIN trial_metrics AS m {pk_trial_metrics}
WHERE t.run_id = :run_id AND t.reward IS NULL
  AND m.run_id = t.run_id AND m.task_id = t.task_id AND m.trial_index = t.trial_index
GROUP BY m.name, m.task_id
"""
_SCORE_SUMS_SQL = """
SELECT grader, task_id, SUM(score), COUNT(score) FROM grades
WHERE run_id = :run_id AND NOT skipped GROUP BY grader, task_id
"""
_SCORE_EXCLUDED_SQL = """
SELECT g.grader, g.task_id, SUM(g.score), COUNT(g.score)
FROM trials AS t CROSS JOIN grades AS g {pk_grades}
WHERE t.run_id = :run_id AND t.reward IS NULL
  AND g.run_id = t.run_id AND g.task_id = t.task_id AND g.trial_index = t.trial_index AND NOT g.skipped
GROUP BY g.grader, g.task_id
"""


def _sql(engine: Engine, template: str) -> str:
    """``template`` with SQLite's index hints filled in (nothing for other databases)."""
    sqlite = engine.dialect.name == "sqlite"
    return template.format(
        pk_trial_metrics="INDEXED BY sqlite_autoindex_trial_metrics_1" if sqlite else "",
        pk_grades="INDEXED BY sqlite_autoindex_grades_1" if sqlite else "",
    )


def _minus(
    total: list[tuple[Any, ...]], excluded: list[tuple[Any, ...]], prefix: str = ""
) -> list[tuple[str, str, float, int]]:
    if not excluded:
        return [(task, prefix + name, float(s or 0.0), int(n)) for name, task, s, n in total]
    gone = {(name, task): (float(s or 0.0), int(n)) for name, task, s, n in excluded}
    none = (0.0, 0)
    out = []
    for name, task, s, n in total:
        less_s, less_n = gone.get((name, task), none)
        if n - less_n > 0:
            out.append((task, prefix + name, float(s or 0.0) - less_s, int(n) - less_n))
    return out


def value_sums(engine: Engine, run_id: str, columns: bool = True) -> list[tuple[str, str, float, int]]:
    """Per task and name, the sum and count of the process metrics (``turns``...) and
    grader scores (``score.<grader>``, every scored verdict) of the run's counted
    trials (reward not None): ``(task id, name, sum, count)`` rows. ``columns``: the
    store keeps the process metrics as columns of the trials (schema 5), else every
    metric is a row of ``trial_metrics``."""
    sums: list[tuple[str, str, float, int]] = []
    if columns:
        for task_id, *cells in _fetch(engine, _COLUMN_SUMS_SQL, run_id):
            for i, name in enumerate(schema.METRIC_COLUMNS):
                if cells[2 * i + 1]:
                    sums.append((task_id, name, float(cells[2 * i]), int(cells[2 * i + 1])))
    excluded = _fetch(engine, _sql(engine, _METRIC_EXCLUDED_SQL), run_id)
    sums += _minus(_fetch(engine, _METRIC_SUMS_SQL, run_id), excluded)
    excluded = _fetch(engine, _sql(engine, _SCORE_EXCLUDED_SQL), run_id)
    return sums + _minus(_fetch(engine, _SCORE_SUMS_SQL, run_id), excluded, "score.")


_METRIC_VALUES_SQL = """
SELECT task_id, trial_index, value FROM trial_metrics WHERE run_id = :run_id AND name = :p1
"""
_COLUMN_VALUES_SQL = (
    "SELECT task_id, trial_index, {name} FROM trials WHERE run_id = :run_id AND {name} IS NOT NULL"
)
_SCORE_VALUES_SQL = """
SELECT task_id, trial_index, score FROM grades
WHERE run_id = :run_id AND grader = :p1 AND score IS NOT NULL AND NOT skipped ORDER BY position
"""


_FAILED_GRADERS_SQL = """
SELECT task_id, trial_index, grader, position FROM grades
WHERE run_id = :run_id AND gating AND passed = false ORDER BY task_id, trial_index, position
"""


def failed_grader_rows(engine: Engine, run_id: str) -> list[tuple[str, int, str, int]]:
    """(task id, trial index, grader, position) of every gating verdict that failed."""
    return [tuple(r) for r in _fetch(engine, _FAILED_GRADERS_SQL, run_id)]


def value_rows(engine: Engine, run_id: str, name: str, columns: bool = True) -> list[tuple[str, int, float]]:
    """``(task id, trial index, value)`` of every trial of the run (counted or not) that
    carries a process metric or grader score (``score.<grader>``; a grader named twice
    in a trial: its last verdict comes last). ``columns``: as for :func:`value_sums`."""
    if name.startswith("score."):
        return _fetch(engine, _SCORE_VALUES_SQL, run_id, name.removeprefix("score."))
    if columns and name in schema.METRIC_COLUMNS:
        return _fetch(engine, _COLUMN_VALUES_SQL.format(name=name), run_id)
    return _fetch(engine, _METRIC_VALUES_SQL, run_id, name)


# Failed trials (reward 0): the graders that failed them (grader set), and how the others
# ended (grader NULL: no gating grader failed them), in one pass over the failed trials.
_FAILURES_SQL = """
SELECT t.task_id, g.grader, t.termination, COUNT(*)
FROM trials AS t LEFT JOIN grades AS g {pk_grades}
  ON g.run_id = t.run_id AND g.task_id = t.task_id AND g.trial_index = t.trial_index
  AND g.gating AND g.passed = false
WHERE t.run_id = :run_id AND t.reward = 0
GROUP BY t.task_id, g.grader, t.termination
"""


T = TypeVar("T")


def concurrently(engine: Engine, reads: Sequence[Callable[[], T]]) -> list[T]:
    """Run independent reads of one store at the same time, in two threads (SQLite and
    the database drivers release the GIL while the database works), started in the
    order given (put the longest first); results in that order. An in-memory SQLite
    store has one connection: its reads run one after the other."""
    if engine.dialect.name == "sqlite" and engine.url.database in (None, "", ":memory:"):
        return [read() for read in reads]
    with ThreadPoolExecutor(2, thread_name_prefix="assay-read") as pool:
        futures = [pool.submit(read) for read in reads]
        return [future.result() for future in futures]


def frame_aggregates(engine: Engine, run_id: str, columns: bool = True) -> dict[str, Any]:
    """Grader verdict counts, process-metric means, usage by role and the graders that
    failed each task, as SQL aggregates (``columns``: as for :func:`value_sums`)."""
    g, m, u, c = schema.grades, schema.trial_metrics, schema.trial_usage, schema.trial_calls
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
    calls = select(c.c.model, c.c.latency_s, c.c.ttft_s, c.c.failed).where(
        c.c.run_id == run_id, c.c.source != "cache"
    )

    def rows(query: Any) -> Callable[[], list[Any]]:
        def read() -> list[Any]:
            with engine.connect() as conn:
                return list(conn.execute(query, {"run_id": run_id}))

        return read

    def column_means() -> list[Any]:
        if not columns:
            return []
        [cells] = _fetch(engine, _COLUMN_MEANS_SQL, run_id)
        return [
            (name, cells[3 * i], cells[3 * i + 1])
            for i, name in enumerate(schema.METRIC_COLUMNS)
            if cells[3 * i + 2]
        ]

    column_rows, failure_rows, process_rows, verdict_rows, usage_rows, call_rows = concurrently(
        engine,
        [
            column_means,  # the largest: every trial of the run
            rows(text(_sql(engine, _FAILURES_SQL))),
            rows(means),  # metrics that are not columns: few, or (before schema 5) every one
            rows(verdicts),
            rows(usage),
            rows(calls),
        ],
    )
    process_rows = [*column_rows, *process_rows]
    graders: dict[str, dict[str, int]] = {}
    for name, skipped, passed, failed, none, review in verdict_rows:
        counts = {"skipped": skipped, "passed": passed, "failed": failed, "no_verdict": none}
        graders[name] = dict(
            sorted({**{k: int(v) for k, v in counts.items() if v}, "needs_review": int(review)}.items())
        )
    by_role: dict[str, dict[str, Any]] = {}
    for row in usage_rows:
        role, *sums, cost, unpriced = row
        by_role[role] = {
            **{f: int(v or 0) for f, v in zip(USAGE_FIELDS, sums, strict=True)},
            "cost_usd": float(cost or 0.0),
            "unpriced_trials": int(unpriced),
        }
    failures: dict[str, Counter[str]] = defaultdict(Counter)
    failed_graders: Counter[str] = Counter()
    for task_id, grader, termination, count in failure_rows:
        failures[task_id][termination if grader is None else grader] += count
        if grader is not None:
            failed_graders[grader] += count
    return {
        "graders": dict(sorted(graders.items())),
        "process": {name: float(avg) for name, avg, _ in sorted(process_rows)},
        "process_totals": {name: float(total) for name, _, total in sorted(process_rows)},
        "failed_graders": dict(sorted(failed_graders.items(), key=lambda kv: (-kv[1], kv[0]))),
        "usage_by_role": dict(sorted(by_role.items())),
        "failures": {task: dict(c) for task, c in failures.items()},
        "model_calls": [
            (str(model), latency, ttft, bool(failed)) for model, latency, ttft, failed in call_rows
        ],
    }


GradeTuple = tuple[str, int, str, str, "bool | None", bool, dict[str, float]]


def grade_rows(engine: Engine, run_id: str, kinds: Iterable[str]) -> list[GradeTuple]:
    """The grades of the given kinds (e.g. the RAG kinds) with their metrics, in task and
    trial order, as ``(task_id, trial_index, grader, kind, passed, skipped, metrics)``:
    the fields of :class:`assay.metrics.GradeRow`, which the RAG summary reads."""
    g = schema.grades
    # no ORDER BY: the database then finds the rows by the index on kind (sorting by the
    # primary key would make it walk every grade of the run); they are few, sorted here
    query = select(
        g.c.task_id, g.c.trial_index, g.c.position, g.c.grader, g.c.kind, g.c.passed, g.c.skipped, g.c.metrics
    ).where(g.c.run_id == run_id, g.c.kind.in_(sorted(set(kinds))))
    with engine.connect() as conn:
        rows = sorted(conn.execute(query), key=lambda r: (r[0], r[1], r[2]))
    return [
        (task, trial, grader, kind, passed, bool(skipped), json.loads(metrics))
        for task, trial, _, grader, kind, passed, skipped, metrics in rows
    ]


# Ordered by grader first: the covering index ix_grades_by_grader gives the rows in
# that order, with no sort and no visit of the table's rows; each grader's rows come in
# task and trial order as before.
_GRADED_SCORES_SQL = """
SELECT task_id, grader, score FROM grades
WHERE run_id = :run_id AND NOT skipped AND score IS NOT NULL AND grader IN (
  SELECT DISTINCT grader FROM grades
  WHERE run_id = :run_id AND NOT skipped AND score IS NOT NULL AND score <> 0 AND score <> 1)
ORDER BY grader, task_id, trial_index, position
"""


def graded_scores(engine: Engine, run_id: str) -> list[tuple[str, str, float]]:
    """``(task_id, grader, score)`` of the not-skipped grades of graders whose scores are
    not all 0 or 1 (rubric judges, partial credit), by grader, each in task and trial
    order (raw cursor: no per-row wrapping)."""
    rows = _fetch(engine, _GRADED_SCORES_SQL, run_id)
    return [(task, grader, float(score)) for task, grader, score in rows]
