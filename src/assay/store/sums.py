"""Per-task sums of process metrics and grader scores (the ``task_sums`` table), kept in
the same transactions that write and move trials, so that summaries and comparisons
read one row per task and name instead of one row per metric per trial.

A trial adds, for each process metric and each scored verdict (``score.<grader>``; a
skipped verdict or one without a score adds nothing): 1 trial and its value to
``trials``/``total``, and to ``counted_trials``/``counted_total`` when it is counted
(reward not None). Moving a trial to the attempts subtracts what it added.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Connection, Engine, text

from ..core.results import TrialResult
from . import bulk

Key = tuple[str, str, str]  # run id, task id, name

_COLUMNS = "run_id, task_id, name, trials, total, counted_trials, counted_total"
_HEAD = f"INSERT INTO task_sums ({_COLUMNS})"
_ON_CONFLICT = """
ON CONFLICT (run_id, task_id, name) DO UPDATE SET
  trials = task_sums.trials + excluded.trials,
  total = task_sums.total + excluded.total,
  counted_trials = task_sums.counted_trials + excluded.counted_trials,
  counted_total = task_sums.counted_total + excluded.counted_total
"""


def contributions(
    run_id: str,
    task_id: str,
    counted: bool,
    metrics: Mapping[str, float],
    scores: Iterable[tuple[str, float]],
    sign: float = 1.0,
    into: dict[Key, list[float]] | None = None,
) -> dict[Key, list[float]]:
    """What one trial adds (``sign`` -1: takes away) to each of its sums."""
    acc: dict[Key, list[float]] = {} if into is None else into
    items = [(name, float(value)) for name, value in metrics.items()]
    items += [(f"score.{grader}", float(score)) for grader, score in scores]
    for name, value in items:
        cell = acc.setdefault((run_id, task_id, name), [0.0, 0.0, 0.0, 0.0])
        cell[0] += sign
        cell[1] += sign * value
        if counted:
            cell[2] += sign
            cell[3] += sign * value
    return acc


def of_results(results: Iterable[TrialResult]) -> dict[Key, list[float]]:
    acc: dict[Key, list[float]] = {}
    for r in results:
        scores = [(g.grader, g.score) for g in r.grades if g.score is not None and not g.skipped]
        contributions(r.run_id, r.task_id, r.reward is not None, r.metrics, scores, into=acc)
    return acc


def of_line(run_id: str, line: Mapping[str, Any]) -> dict[Key, list[float]]:
    """What a stored trial (a packed trial line: record and grades) added, negated."""
    trial = line["trial"]
    scores = [
        (g["grader"], g["score"])
        for g in line.get("grades", [])
        if g.get("score") is not None and not g.get("skipped")
    ]
    return contributions(
        run_id,
        trial["task_id"],
        trial.get("reward") is not None,
        trial.get("metrics") or {},
        scores,
        sign=-1.0,
    )


def add(conn: Connection, engine: Engine, sums: Mapping[Key, list[float]]) -> None:
    """Upsert the sums (a few multi-row statements; rows in key order, so concurrent
    writers take row locks in one order)."""
    if not sums:
        return
    rows = [
        (run, task, name, int(c[0]), c[1], int(c[2]), c[3]) for (run, task, name), c in sorted(sums.items())
    ]
    mark = bulk.mark_of(engine.dialect.paramstyle)
    if mark is None:
        names = _COLUMNS.split(", ")
        sql = f"{_HEAD} VALUES ({', '.join(f':{n}' for n in names)}){_ON_CONFLICT}"
        conn.execute(text(sql), [dict(zip(names, row, strict=True)) for row in rows])
        return
    bulk.insert_many(conn, engine.dialect.name, mark, _HEAD, 7, rows, _ON_CONFLICT)


_BACKFILL = """
INSERT INTO task_sums (run_id, task_id, name, trials, total, counted_trials, counted_total)
SELECT v.run_id, v.task_id, v.name, COUNT(*), SUM(v.value),
       SUM(CASE WHEN t.reward IS NULL THEN 0 ELSE 1 END),
       SUM(CASE WHEN t.reward IS NULL THEN 0 ELSE v.value END)
FROM (
  SELECT run_id, task_id, trial_index, name, value FROM trial_metrics
  UNION ALL
  SELECT run_id, task_id, trial_index, 'score.' || grader, score FROM grades
  WHERE score IS NOT NULL AND NOT skipped
) AS v
JOIN trials AS t ON t.run_id = v.run_id AND t.task_id = v.task_id AND t.trial_index = v.trial_index
GROUP BY v.run_id, v.task_id, v.name
"""


def backfill(conn: Connection) -> None:
    """Compute every run's sums from its stored rows (a store of schema 2 becoming 3)."""
    conn.execute(text("DELETE FROM task_sums"))
    conn.execute(text(_BACKFILL))
