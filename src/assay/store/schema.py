"""The store's tables (SQLAlchemy Core). One row per run, per task of a run, per trial,
per grade, per transcript."""

from __future__ import annotations

from functools import lru_cache

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)
from sqlalchemy.dialects import sqlite
from sqlalchemy.schema import CreateIndex, CreateTable

SCHEMA_VERSION = 5
"""The version of the tables below, written in ``assay_meta`` and checked on open.
1: runs kept their options in ``info.settings``; 2: runs keep their spec (``info.spec``)
and failed attempts of retried trials are kept in ``attempts``; 3: per-task sums of the
process metrics and grader scores (``task_sums``), kept as trials are written (an
older assay, which would not keep them, refuses a store of version 3); 4: transcripts
and attempts are written as Zstandard frames (zlib before; both read), which an older
assay could not read back; 5: the process metrics every trial gets are columns of its
row (:data:`METRIC_COLUMNS`; other metrics stay rows of ``trial_metrics``) and the
per-task sums are gone (summaries add the columns up instead), which an older assay
would not read."""

METRIC_COLUMNS = (
    "turns",
    "user_turns",
    "agent_messages",
    "tool_calls",
    "invalid_calls",
    "tool_errors",
    "redundant_calls",
    "user_tool_calls",
    "tool_precision",
    "tool_recall",
)
"""The process metrics every trial gets (:func:`assay.graders.process_metrics`), kept as
columns of the trial's row (NULL: the trial has none of it) and in its covering index:
a trial writes one row where it wrote one per metric, and a summary adds them up from
the index. A metric of another name (an imported record's) is a row of
``trial_metrics``."""

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
    Column("seed", BigInteger, nullable=False),  # 64-bit seeds
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
    Column("seed", BigInteger, nullable=False),  # 64-bit seeds
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
    *[Column(name, Float) for name in METRIC_COLUMNS],
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
"""Metrics of a trial other than the :data:`METRIC_COLUMNS` (an imported record's own;
before schema 5, every metric)."""

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

trial_calls = Table(
    "trial_calls",
    metadata,
    Column("run_id", String(128), primary_key=True),
    Column("task_id", String(300), primary_key=True),
    Column("trial_index", Integer, primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("role", String(50), nullable=False),
    Column("model", String(500), nullable=False),
    Column("source", String(20), nullable=False),  # network | cache | cassette
    Column("latency_s", Float),
    Column("ttft_s", Float),
    Column("failed", Boolean, nullable=False),
    _of_trial(),
)
"""One row per model call of a trial (from its ``llm`` spans): latency and time to first
token per model for the summary's percentiles. Added to schema 3, created on open (runs
stored before it have no rows, and no per-model figures)."""

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

cache_metadata = MetaData()
"""Tables made when first needed, not when a store is opened (see ``run_cache``)."""

run_cache = Table(
    "run_cache",
    cache_metadata,
    Column("run_id", String(128), primary_key=True),
    Column("part", String(50), primary_key=True),  # frame | aggregates | graded_scores | value_sums
    Column("stamp", Text, nullable=False),
    Column("data", LargeBinary, nullable=False),
)
"""Columns and aggregates of finished runs, kept for the next reader (see store/runcache.py):
each part with the run's stamp when it was made, used only while the stamp is current.
Made by the first part kept (a store whose runs are all small never has it); an older
assay ignores it. Deleting a run deletes its rows."""
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
    Column("action", String(20), nullable=False),  # run|show|report|compare|gate|badcase|view|view-api
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

# Covering indexes: what summaries and comparisons read comes from these alone, without
# visiting the table rows (a trial's row holds its whole record). Created on open when
# missing, so stores of this schema version written before them gain them; a store is
# readable without them (only slower), so they need no new schema version.
INDEXES = (
    Index(
        "ix_trials_columns",
        trials.c.run_id,
        trials.c.task_id,
        trials.c.trial_index,
        trials.c.reward,
        trials.c.termination,
        trials.c.root_cause,
        trials.c.error_category,
        trials.c.latency_s,
        trials.c.cost_usd,
        trials.c.input_tokens,
        trials.c.output_tokens,
        *[trials.c[name] for name in METRIC_COLUMNS],
    ),
    Index(
        "ix_trial_metrics_by_name",
        trial_metrics.c.run_id,
        trial_metrics.c.name,
        trial_metrics.c.task_id,
        trial_metrics.c.trial_index,
        trial_metrics.c.value,
    ),
    Index(
        "ix_grades_by_grader",
        grades.c.run_id,
        grades.c.grader,
        grades.c.task_id,
        grades.c.trial_index,
        grades.c.position,
        grades.c.passed,
        grades.c.score,
        grades.c.skipped,
        grades.c.gating,
        grades.c.needs_review,
    ),
    # The summary reads the few grades of some kinds (RAG stages, safety); without this
    # it visits every grade row of the run (with its reason and metrics) to find none.
    Index("ix_grades_by_kind", grades.c.run_id, grades.c.kind),
    Index(
        "ix_trial_usage_by_role",
        trial_usage.c.run_id,
        trial_usage.c.role,
        trial_usage.c.calls,
        trial_usage.c.input_tokens,
        trial_usage.c.output_tokens,
        trial_usage.c.cache_read_tokens,
        trial_usage.c.cost_usd,
        trial_usage.c.retries,
        trial_usage.c.cached_calls,
        trial_usage.c.missing_usage,
    ),
)

OBJECT_NAMES = frozenset(
    {table.name for table in metadata.sorted_tables} | {index.name for index in INDEXES if index.name}
)
"""The tables and covering indexes a store of this version has (a store that has them
all is not asked for each again on open)."""


@lru_cache(maxsize=1)
def sqlite_ddl() -> tuple[str, ...]:
    """Every ``CREATE`` statement of a new SQLite store, compiled once per process (each
    new store compiled them all again: most of the 18 ms it took to make one)."""
    dialect = sqlite.dialect()
    statements = []
    for table in metadata.sorted_tables:
        statements.append(str(CreateTable(table).compile(dialect=dialect)))
        for index in sorted(table.indexes, key=lambda i: str(i.name)):
            statements.append(str(CreateIndex(index).compile(dialect=dialect)))
    return tuple(statements)
