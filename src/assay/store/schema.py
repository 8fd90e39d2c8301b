"""The store's tables (SQLAlchemy Core). One row per run, per task of a run, per trial,
per grade, per transcript."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKeyConstraint,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)

SCHEMA_VERSION = 2
"""The version of the tables below, written in ``assay_meta`` and checked on open.
1: runs kept their options in ``info.settings``; 2: runs keep their spec (``info.spec``)
and failed attempts of retried trials are kept in ``attempts``."""

metadata = MetaData()


def _of_trial() -> ForeignKeyConstraint:
    """Rows that belong to one trial go when it goes."""
    return ForeignKeyConstraint(
        ["run_id", "task_id", "trial_index"],
        ["trials.run_id", "trials.task_id", "trials.trial_index"],
        ondelete="CASCADE",
    )


meta_table = Table(
    "assay_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("run_id", String(128), primary_key=True),
    Column("created_at", String(40), nullable=False),
    Column("finished_at", String(40)),
    Column("status", String(20), nullable=False),
    Column("suite_name", String(200), nullable=False),
    Column("suite_version", String(50), nullable=False),
    Column("suite_hash", String(64), nullable=False),
    Column("config_hash", String(64), nullable=False),
    Column("agent", String(500), nullable=False),
    Column("seed", Integer, nullable=False),
    Column("trials_per_task", Integer, nullable=False),
    Column("planned_trials", Integer, nullable=False),
    Column("info", Text, nullable=False),
)

run_tasks = Table(
    "run_tasks",
    metadata,
    Column("run_id", String(128), primary_key=True),
    Column("task_id", String(300), primary_key=True),
    Column("stratum", String(20), nullable=False),
    Column("split", String(20), nullable=False),
    Column("tags", Text, nullable=False),
    Column("difficulty", Integer, nullable=False),
    Column("task_hash", String(64), nullable=False),
    Column("template", String(200)),
    Column("description", Text, nullable=False, default=""),
    ForeignKeyConstraint(["run_id"], ["runs.run_id"], ondelete="CASCADE"),
)

trials = Table(
    "trials",
    metadata,
    Column("run_id", String(128), primary_key=True),
    Column("task_id", String(300), primary_key=True),
    Column("trial_index", Integer, primary_key=True),
    Column("seed", Integer, nullable=False),
    Column("reward", Integer),
    Column("termination", String(30), nullable=False),
    Column("root_cause", String(20)),
    Column("error_category", String(100)),
    Column("input_tokens", Integer),
    Column("output_tokens", Integer),
    Column("cost_usd", Float),
    Column("latency_s", Float, nullable=False),
    Column("started_at", String(40), nullable=False),
    Column("ended_at", String(40), nullable=False),
    Column("record", Text, nullable=False),
    ForeignKeyConstraint(["run_id"], ["runs.run_id"], ondelete="CASCADE"),
)

grades = Table(
    "grades",
    metadata,
    Column("run_id", String(128), primary_key=True),
    Column("task_id", String(300), primary_key=True),
    Column("trial_index", Integer, primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("grader", String(200), nullable=False),
    Column("kind", String(50), nullable=False),
    Column("passed", Boolean),
    Column("score", Float),
    Column("reason", Text, nullable=False),
    Column("category", String(100)),
    Column("confidence", Float),
    Column("needs_review", Boolean, nullable=False),
    Column("veto", Boolean, nullable=False),
    Column("skipped", Boolean, nullable=False),
    Column("gating", Boolean, nullable=False),
    Column("version", String(64), nullable=False),
    Column("judge_model", String(200)),
    Column("metrics", Text, nullable=False),
    _of_trial(),
)

trial_metrics = Table(
    "trial_metrics",
    metadata,
    Column("run_id", String(128), primary_key=True),
    Column("task_id", String(300), primary_key=True),
    Column("trial_index", Integer, primary_key=True),
    Column("name", String(100), primary_key=True),
    Column("value", Float, nullable=False),
    _of_trial(),
)

trial_usage = Table(
    "trial_usage",
    metadata,
    Column("run_id", String(128), primary_key=True),
    Column("task_id", String(300), primary_key=True),
    Column("trial_index", Integer, primary_key=True),
    Column("role", String(50), primary_key=True),
    Column("calls", Integer, nullable=False),
    Column("input_tokens", Integer, nullable=False),
    Column("output_tokens", Integer, nullable=False),
    Column("cache_read_tokens", Integer, nullable=False),
    Column("cost_usd", Float),
    Column("retries", Integer, nullable=False),
    Column("cached_calls", Integer, nullable=False),
    Column("missing_usage", Integer, nullable=False),
    _of_trial(),
)

attempts = Table(
    "attempts",
    metadata,
    Column("run_id", String(128), primary_key=True),
    Column("task_id", String(300), primary_key=True),
    Column("trial_index", Integer, primary_key=True),
    Column("attempt", Integer, primary_key=True),
    Column("data", LargeBinary, nullable=False),
    ForeignKeyConstraint(["run_id"], ["runs.run_id"], ondelete="CASCADE"),
)
"""Earlier attempts of trials that ended in a harness error and ran again (a trial line
of the portable run record, compressed: the trial, its grades and transcript)."""

transcripts = Table(
    "transcripts",
    metadata,
    Column("run_id", String(128), primary_key=True),
    Column("task_id", String(300), primary_key=True),
    Column("trial_index", Integer, primary_key=True),
    Column("data", LargeBinary, nullable=False),
    _of_trial(),
)

labels = Table(
    "labels",
    metadata,
    Column("run_id", String(128), primary_key=True),
    Column("task_id", String(300), primary_key=True),
    Column("trial_index", Integer, primary_key=True),
    Column("grader", String(200), primary_key=True),  # "" = the trial as a whole
    Column("dimension", String(200), primary_key=True),  # "" = the overall verdict
    Column("labeller", String(100), primary_key=True),
    Column("value", String(50), nullable=False),  # "pass" | "fail" | a level ("4")
    Column("comment", Text, nullable=False, default=""),
    Column("created_at", String(40), nullable=False),
    _of_trial(),
)
"""Human labels of trials or grades (pass/fail or per-dimension levels), see store/labels.py."""

probes = Table(
    "probes",
    metadata,
    Column("probe_id", String(200), primary_key=True),
    Column("created_at", String(40), nullable=False),
    Column("model", String(500), nullable=False),
    Column("mode", String(20), nullable=False),
    Column("schema", String(50), nullable=False),
    Column("stopped_by", String(30), nullable=False),
    Column("data", Text, nullable=False),
)
"""Model endpoint probes (``assay probe``): one JSON document each, see store/probes.py."""

# --- the golden-set lifecycle (docs/lifecycle.md): added tables, created on open ------------
badcases = Table(
    "badcases",
    metadata,
    Column("badcase_id", String(64), primary_key=True),
    Column("created_at", String(40), nullable=False),
    Column("updated_at", String(40), nullable=False),
    Column("source", String(20), nullable=False),  # trial | trace | manual
    Column("status", String(20), nullable=False),  # new | triaged | fixed | verified | golden
    Column("severity", String(20), nullable=False),
    Column("layer", String(30), nullable=False),
    Column("suite_name", String(200), nullable=False),
    Column("run_id", String(128)),
    Column("owner", String(200)),
    Column("trials", Integer, nullable=False),
    Column("phenomenon", Text, nullable=False),
    Column("data", Text, nullable=False),
)
"""Badcase records (one JSON document each, evidence redacted), see store/badcases.py."""

holdout_log = Table(
    "holdout_log",
    metadata,
    Column("entry", Integer, primary_key=True, autoincrement=True),
    Column("at", String(40), nullable=False),
    Column("action", String(20), nullable=False),  # run | show | report | compare | gate
    Column("suite_name", String(200), nullable=False),
    Column("suite_version", String(50), nullable=False),
    Column("suite_hash", String(64), nullable=False),
    Column("run_id", String(128), nullable=False),
    Column("config_hash", String(64), nullable=False),
    Column("agent", String(500), nullable=False),
    Column("tasks", Integer, nullable=False),
)
"""Every look at holdout tasks (kept when the run is deleted), see store/holdout.py."""

evidence_checks = Table(
    "evidence_checks",
    metadata,
    Column("run_id", String(128), primary_key=True),
    Column("task_id", String(300), primary_key=True),
    Column("evidence_id", String(200), primary_key=True),
    Column("status", String(20), nullable=False),  # current | stale | probe_error
    Column("checked_at", String(40), nullable=False),
    Column("data", Text, nullable=False),
    ForeignKeyConstraint(["run_id"], ["runs.run_id"], ondelete="CASCADE"),
)
"""What the probe track found for each evidence record of a run, see store/evidence.py."""

experiments = Table(
    "experiments",
    metadata,
    Column("experiment_id", String(128), primary_key=True),
    Column("created_at", String(40), nullable=False),
    Column("suite_name", String(200), nullable=False),
    Column("data", Text, nullable=False),
)
"""Flag-matrix experiments: their factors and the run of each arm, see store/experiments.py."""
