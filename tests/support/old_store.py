"""A store written by this assay turned back into the layout schema 4 kept (what an
older assay left on disk), so that tests can open it the way a user upgrading does:
every metric a row of ``trial_metrics``, per-task sums in ``task_sums``, the trials'
covering index without the metric columns, and no metric columns."""

from __future__ import annotations

from sqlalchemy import text

from assay.store import Store, schema

_TASK_SUMS = """
CREATE TABLE task_sums (
  run_id VARCHAR(128) NOT NULL, task_id VARCHAR(300) NOT NULL, name VARCHAR(300) NOT NULL,
  trials INTEGER NOT NULL, total FLOAT NOT NULL, counted_trials INTEGER NOT NULL,
  counted_total FLOAT NOT NULL,
  PRIMARY KEY (run_id, task_id, name),
  FOREIGN KEY(run_id) REFERENCES runs (run_id) ON DELETE CASCADE
)
"""
# schema 3's backfill: what its writer kept, trial by trial
_FILL_SUMS = """
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
_OLD_INDEX = """
CREATE INDEX ix_trials_columns ON trials (run_id, task_id, trial_index, reward, termination,
  root_cause, error_category, latency_s, cost_usd, input_tokens, output_tokens)
"""


def as_schema_4(store: Store, version: int = 4) -> None:
    """Rewrite ``store`` (SQLite or PostgreSQL) into schema 4's layout, recording
    ``version`` (3 and 4 kept the same tables), and close it."""
    with store.engine.begin() as conn:
        for name in schema.METRIC_COLUMNS:
            conn.execute(
                text(
                    "INSERT INTO trial_metrics (run_id, task_id, trial_index, name, value) "
                    f"SELECT run_id, task_id, trial_index, '{name}', {name} FROM trials "
                    f"WHERE {name} IS NOT NULL"
                )
            )
        conn.execute(text(_TASK_SUMS))
        conn.execute(text(_FILL_SUMS))
        conn.execute(text("DROP INDEX ix_trials_columns"))
        for name in schema.METRIC_COLUMNS:
            conn.execute(text(f"ALTER TABLE trials DROP COLUMN {name}"))
        conn.execute(text(_OLD_INDEX))
        conn.execute(schema.meta_table.update().values(value=str(version)))
    store.close()
