"""The results store: SQLite by default (``.assay/assay.db``), any SQLAlchemy URL.

A finished trial is written in one transaction (trial row, its grades and its
transcript), so a run interrupted at any moment - even by SIGKILL - holds only whole
trials, and resuming it runs exactly the missing ones.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from operator import itemgetter
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import (
    Engine,
    and_,
    create_engine,
    delete,
    event,
    exists,
    func,
    insert,
    inspect,
    make_url,
    or_,
    select,
    tuple_,
    update,
)
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError
from sqlalchemy.pool import StaticPool

from ..core.results import USAGE_FIELDS, RunInfo, TaskMeta, TrialResult
from ..core.transcript import Transcript
from ..errors import ResumeError, RunNotFound, SpecError, StoreError
from . import reserve, runcache, schema, sums
from .codec import (
    decode_record,
    decode_transcript,
    encode_record,
    encode_transcript,
    grade_from_row,
    grade_row,
    pack_line,
    unpack_line,
)
from .faults import QUICK_CHECK_MAX_BYTES, StoreFault, header_problem, read_only_reason, sqlite_path
from .faults import install as install_faults
from .frames import (
    GradeTuple,
    failed_grader_rows,
    frame_aggregates,
    frame_columns,
    grade_rows,
    graded_scores,
    value_rows,
    value_sums,
)

DEFAULT_STORE = ".assay/assay.db"
_LATEST = re.compile(r"latest(?:~(\d+))?")


def resolve_url(store: str | os.PathLike[str] | None = None) -> str:
    """``store`` (a path, a SQLAlchemy URL, ``:memory:``), else ``$ASSAY_STORE``, else
    ``.assay/assay.db`` in the working directory."""
    value = str(store) if store is not None else os.environ.get("ASSAY_STORE") or DEFAULT_STORE
    if value == ":memory:":
        return "sqlite://"
    if "://" in value:
        return value
    path = Path(value).expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreFault(f"cannot create the folder of store {path}: {exc.strerror or exc}") from None
    return f"sqlite:///{path}"


def _shown(url: str) -> str:
    """``url`` with its password masked (``postgresql://me:***@db/assay``)."""
    if "://" not in url or "@" not in url:
        return url
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return url.split("://", 1)[0] + "://***"


T = TypeVar("T")


def _busy_timeout() -> float:
    """Seconds a write waits for another process's lock ($ASSAY_STORE_TIMEOUT, default 30)."""
    try:
        return max(0.0, float(os.environ.get("ASSAY_STORE_TIMEOUT", "30")))
    except ValueError:
        raise SpecError(
            f"$ASSAY_STORE_TIMEOUT must be a number of seconds, not {os.environ['ASSAY_STORE_TIMEOUT']!r}"
        ) from None


def _sqlite_pragmas(timeout_ms: int, writable: bool) -> Any:
    def apply(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        if writable:
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute(f"PRAGMA busy_timeout={timeout_ms}")
        cur.close()

    return apply


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class Store:
    """Runs, tasks, trials, grades and transcripts.

    A SQLite file that this process cannot write (a read-only file system, another
    user's file) is opened read-only: reading works, writing raises
    :class:`~assay.store.faults.StoreFault` (see :attr:`read_only`). Database errors that
    mean the store cannot be used (read-only, corrupt, full, locked, unreachable) are
    raised as that one-sentence fault."""

    def __init__(self, store: str | os.PathLike[str] | None = None):
        raw = resolve_url(store)
        self.url = _shown(raw)
        """The store's URL as shown to people: its password, if any, masked."""
        self.path = sqlite_path(raw)
        self.read_only: str | None = read_only_reason(self.path) if self.path is not None else None
        timeout = _busy_timeout()
        kwargs: dict[str, Any] = {}
        url = raw
        if raw == "sqlite://":
            kwargs = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
        elif self.path is not None:
            kwargs = {"connect_args": {"timeout": timeout}}
            if self.read_only:  # SQLite reads it without creating journal files
                immutable = "&immutable=1" if not os.access(self.path.parent, os.W_OK) else ""
                url = f"sqlite:///file:{self.path.resolve()}?mode=ro{immutable}&uri=true"
        if self.path is not None:
            problem = header_problem(self.path, timeout, read_only=self.read_only is not None)
            if problem is not None:
                raise StoreFault(
                    f"store {self.url} is corrupt or not an assay store: {problem}; restore it from a copy "
                    "or use another --store"
                )
        try:
            self.engine: Engine = create_engine(url, **kwargs)
        except Exception as exc:
            raise SpecError(f"store {self.url!r} is not a usable database URL ({exc})") from None
        install_faults(self.engine, self.url)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas(int(timeout * 1000), not self.read_only))
        self._checked = False
        found = self._retry_locked(self._check_version, timeout)
        if not self.read_only:
            self._retry_locked(self._create_schema, timeout)
            found = schema.SCHEMA_VERSION
        self.summed = found is not None and found >= 3
        """Whether the store keeps per-task sums (``task_sums``, schema 3): a read-only
        store of an older schema is read the slower way."""
        self.cache_min_trials = runcache.min_trials()
        """Finished runs of at least this many trials keep their columns and aggregates
        for the next reader (``run_cache``, see :mod:`.runcache`)."""

    @staticmethod
    def _retry_locked(step: Callable[[], T], timeout: float) -> T:
        """``step()``, tried again while the store is locked, up to the busy timeout.

        Several processes opening a new SQLite file at once: until one of them has switched
        it to write-ahead logging it is in rollback-journal mode, where SQLite refuses one
        side of a lock upgrade at once (SQLITE_BUSY without waiting, to avoid a deadlock)
        instead of letting it wait its busy timeout."""
        deadline = time.monotonic() + max(timeout, 1.0)
        attempt = 0
        while True:
            try:
                return step()
            except StoreFault as exc:
                attempt += 1
                if " is locked by another process" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(min(0.02 * attempt, 0.25))

    def _stored_version(self) -> int | None:
        """The schema version the store records (None: a new store, or one of schema 1,
        which wrote none)."""
        meta = schema.meta_table
        with self.engine.connect() as conn:
            if not inspect(conn).has_table(meta.name):
                return None  # no assay_meta table yet
            row = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).first()
        return int(row.value) if row is not None else None

    def _check_version(self) -> int | None:
        """Refuse a store written by a newer assay (its tables may mean other things);
        the version found."""
        found = self._stored_version()
        if found is not None and found > schema.SCHEMA_VERSION:
            raise StoreError(
                f"store {self.url} was written by a newer assay (store schema {found}; this assay reads "
                f"schema {schema.SCHEMA_VERSION} and older): upgrade assay, or use another --store"
            )
        return found

    def _create_schema(self) -> None:
        """Create missing tables and indexes (a store of an older schema gains the new
        ones: that is the migration, the rows stay readable; schema 3 also computes the
        per-task sums of the trials already stored) and record the schema version.
        Several processes may open a new store at once: the loser of a race retries."""
        for attempt in range(5):
            try:
                schema.metadata.create_all(self.engine)
                for index in schema.INDEXES:  # a store made before an index gains it
                    index.create(self.engine, checkfirst=True)
                if self._stored_version() != schema.SCHEMA_VERSION:
                    self._migrate()
                return
            except (OperationalError, IntegrityError, ProgrammingError) as exc:
                text = str(exc).lower()
                if ("already exists" not in text and "unique" not in text and "duplicate" not in text) or (
                    attempt == 4
                ):
                    raise
                time.sleep(0.05 * (attempt + 1))

    def _migrate(self) -> None:
        """Bring a store of an older schema (or a new one) to this version, in one
        transaction: per-task sums from the stored trials, then the version."""
        meta = schema.meta_table
        with self.engine.begin() as conn:
            sums.backfill(conn)
            conn.execute(delete(meta).where(meta.c.key == "schema_version"))
            conn.execute(insert(meta).values(key="schema_version", value=str(schema.SCHEMA_VERSION)))

    def check_writable(self) -> None:
        """Raise :class:`StoreFault` unless a run can be written here: not read-only, and
        (SQLite files up to ``QUICK_CHECK_MAX_BYTES``) ``PRAGMA quick_check`` finds no
        corruption. Once per Store; runs call it before they write anything."""
        if self.read_only:
            raise StoreFault(
                f"store {self.url} is read-only ({self.read_only}): point --store (or $ASSAY_STORE) at a "
                "writable location; reading commands (runs, show, report) work as they are"
            )
        if self._checked or self.path is None or not self.path.exists():
            return
        if self.path.stat().st_size <= QUICK_CHECK_MAX_BYTES:
            with self.engine.connect() as conn:
                rows = [str(r[0]) for r in conn.exec_driver_sql("PRAGMA quick_check(5)")]
            if rows != ["ok"]:
                found = "; ".join(line.strip() for row in rows for line in row.splitlines())
                raise StoreFault(
                    f"store {self.url} is corrupt (PRAGMA quick_check: {found}); restore it from a "
                    "copy or use another --store (assay export RUN saves a run that can still be read)"
                )
        self._checked = True

    def checkpoint(self) -> None:
        """Move SQLite's write-ahead log into the database file, so that the ``.db`` file
        alone holds every committed trial (copy it, attach it to a bug report)."""
        if self.engine.dialect.name == "sqlite" and self.url != "sqlite://" and not self.read_only:
            with self.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        self.checkpoint()
        self.engine.dispose()

    # runs ---------------------------------------------------------------------------
    def create_run(self, info: RunInfo, tasks: Iterable[TaskMeta]) -> None:
        """Store a new run and its tasks; :class:`ResumeError` if the run id is taken
        (two processes starting the same ``--run-id``: one wins, the other is told)."""
        try:
            self._create_run(info, tasks)
            if info.status == "running":
                self._hold_reserve(info.run_id)
        except IntegrityError:
            if not self.has_run(info.run_id):
                raise
            raise ResumeError(
                f"run {info.run_id} already exists in {self.url} (another process created it); resume "
                f"it with --resume {info.run_id}, or give another --run-id"
            ) from None

    def _create_run(self, info: RunInfo, tasks: Iterable[TaskMeta]) -> None:
        with self.engine.begin() as conn:
            conn.execute(schema.runs.insert().values(**self._run_row(info)))
            rows = [
                {
                    "run_id": info.run_id,
                    "task_id": t.task_id,
                    "stratum": t.stratum,
                    "split": t.split,
                    "tags": json.dumps(list(t.tags)),
                    "difficulty": t.difficulty,
                    "task_hash": t.task_hash,
                    "template": t.template,
                    "description": t.description,
                }
                for t in tasks
            ]
            self._insert(conn, schema.run_tasks, rows)

    @staticmethod
    def _run_row(info: RunInfo) -> dict[str, Any]:
        return {
            "run_id": info.run_id,
            "created_at": info.created_at,
            "finished_at": info.finished_at,
            "status": info.status,
            "suite_name": info.suite_name,
            "suite_version": info.suite_version,
            "suite_hash": info.suite_hash,
            "config_hash": info.config_hash,
            "agent": info.config.agent,
            "seed": info.seed,
            "trials_per_task": info.trials_per_task,
            "planned_trials": info.planned_trials,
            "info": info.model_dump_json(),
        }

    def has_run(self, run_id: str) -> bool:
        with self.engine.connect() as conn:
            return (
                conn.execute(select(schema.runs.c.run_id).where(schema.runs.c.run_id == run_id)).first()
                is not None
            )

    def resolve(self, ref: str) -> str:
        """The run id ``ref`` names: itself, or ``latest`` (the newest run), ``latest~1``
        (the one before it)... RunNotFound when there is no such run."""
        match = _LATEST.fullmatch(ref)
        if match is None:
            return ref
        back = int(match.group(1) or 0)
        r = schema.runs
        query = select(r.c.run_id).order_by(r.c.created_at.desc(), r.c.run_id.desc()).offset(back).limit(1)
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        if row is None:
            raise RunNotFound(f"{ref}: the store {self.url} has {'no run' if not back else 'fewer runs'}")
        return str(row.run_id)

    def get_run(self, run_id: str) -> RunInfo:
        with self.engine.connect() as conn:
            row = conn.execute(select(schema.runs.c.info).where(schema.runs.c.run_id == run_id)).first()
        if row is None:
            raise RunNotFound(f"no run {run_id!r} in store {self.url}; `assay runs` lists the runs there")
        return RunInfo.model_validate_json(row.info)

    def set_status(self, run_id: str, status: str) -> None:
        """Record a run's status; a run that stopped (finished or interrupted) is
        checkpointed into the database file."""
        info = self.get_run(run_id)
        if status == "running":
            self._hold_reserve(run_id)
        elif self.path is not None:
            reserve.release(self.path, run_id)  # the room this update needs on a full disk
        info.status = status  # type: ignore[assignment]
        info.finished_at = now_iso() if status == "finished" else None
        with self.engine.begin() as conn:
            conn.execute(
                update(schema.runs)
                .where(schema.runs.c.run_id == run_id)
                .values(status=status, finished_at=info.finished_at, info=info.model_dump_json())
            )
        if status != "running":
            with contextlib.suppress(StoreFault):  # committed; a full disk keeps the log beside the file
                self.checkpoint()

    def _hold_reserve(self, run_id: str) -> None:
        """Keep room on the disk for the run's final status (:mod:`.reserve`)."""
        if self.path is not None and not self.read_only:
            reserve.hold(self.path, run_id)

    def list_runs(self) -> list[dict[str, Any]]:
        """One dict per run, newest first, with its completed trial count and mean reward."""
        t = schema.trials
        done = (
            select(t.c.run_id, func.count().label("completed"), func.avg(t.c.reward).label("mean_reward"))
            .group_by(t.c.run_id)
            .subquery()
        )
        r = schema.runs
        query = (
            select(
                r.c.run_id,
                r.c.created_at,
                r.c.status,
                r.c.suite_name,
                r.c.suite_version,
                r.c.suite_hash,
                r.c.agent,
                r.c.seed,
                r.c.trials_per_task,
                r.c.planned_trials,
                done.c.completed,
                done.c.mean_reward,
            )
            .select_from(r.outerjoin(done, done.c.run_id == r.c.run_id))
            .order_by(r.c.created_at.desc())
        )
        with self.engine.connect() as conn:
            return [{**dict(row._mapping), "completed": row.completed or 0} for row in conn.execute(query)]

    def update_info(self, info: RunInfo) -> None:
        """Replace a stored run's metadata (same run id)."""
        with self.engine.begin() as conn:
            conn.execute(
                update(schema.runs).where(schema.runs.c.run_id == info.run_id).values(**self._run_row(info))
            )

    def delete_run(self, run_id: str) -> None:
        """Remove a run and everything of it (trials, grades, transcripts, attempts)."""
        if self.path is not None:
            reserve.release(self.path, run_id)
        with self.engine.begin() as conn:
            if inspect(conn).has_table(schema.run_cache.name):  # made when a run is first kept
                conn.execute(delete(schema.run_cache).where(schema.run_cache.c.run_id == run_id))
            for table in (
                schema.task_sums,
                schema.grades,
                schema.trial_metrics,
                schema.trial_usage,
                schema.trial_calls,
                schema.transcripts,
                schema.labels,
                schema.attempts,
                schema.trials,
                schema.run_tasks,
                schema.runs,
            ):
                conn.execute(delete(table).where(table.c.run_id == run_id))

    def task_ids(self, run_id: str) -> list[str]:
        """Ids of the tasks that have trials in the run, sorted."""
        t = schema.trials
        with self.engine.connect() as conn:
            query = select(t.c.task_id).where(t.c.run_id == run_id).distinct().order_by(t.c.task_id)
            return [row.task_id for row in conn.execute(query)]

    def load_tasks(self, run_id: str) -> list[TaskMeta]:
        rt = schema.run_tasks
        with self.engine.connect() as conn:
            rows = conn.execute(select(rt).where(rt.c.run_id == run_id)).all()
        return [
            TaskMeta(
                r.task_id,
                r.stratum,
                r.split,
                tuple(json.loads(r.tags)),
                r.difficulty,
                r.task_hash,
                r.template,
                r.description,
            )
            for r in rows
        ]

    # trials -------------------------------------------------------------------------
    def completed_keys(self, run_id: str) -> set[tuple[str, int]]:
        t = schema.trials
        with self.engine.connect() as conn:
            rows = conn.execute(select(t.c.task_id, t.c.trial_index).where(t.c.run_id == run_id))
            return {(r.task_id, r.trial_index) for r in rows}

    def write_trial(self, result: TrialResult) -> bool:
        """Write one finished trial atomically. False if it was already there."""
        return self.write_trials([result]) == 1

    def write_trials(self, results: list[TrialResult]) -> int:
        """Write finished trials in one transaction (each trial whole: its row, grades
        and transcript). A trial already stored is skipped, never duplicated. Returns
        how many were written."""
        if not results:
            return 0
        rows = [_rows(r) for r in results]
        try:
            with self.engine.begin() as conn:
                self._insert(conn, schema.trials, [r[0] for r in rows])
                self._insert(conn, schema.grades, [g for r in rows for g in r[1]])
                self._insert(conn, schema.transcripts, [r[2] for r in rows if r[2] is not None])
                self._insert(conn, schema.trial_metrics, [m for r in rows for m in r[3]])
                self._insert(conn, schema.trial_usage, [u for r in rows for u in r[4]])
                self._insert(conn, schema.trial_calls, [c for r in rows for c in r[5]])
                sums.add(conn, self.engine, sums.of_results(results))
            return len(results)
        except IntegrityError:
            if len(results) == 1:
                return 0
        # some were already there (another writer): write the others one by one
        return sum(self.write_trials([r]) for r in results)

    def _insert(self, conn: Any, table: Any, rows: list[dict[str, Any]]) -> None:
        """Insert many rows. With positional DBAPI placeholders (SQLite, psycopg) the
        statement goes straight to ``executemany``: per-row work stays in C."""
        if not rows:
            return
        mark = {"qmark": "?", "format": "%s"}.get(self.engine.dialect.paramstyle)
        if mark is None:
            conn.execute(table.insert(), rows)
            return
        columns = list(rows[0])
        sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join([mark] * len(columns))})"
        pick = itemgetter(*columns)
        values = list(map(pick, rows)) if len(columns) > 1 else [(pick(row),) for row in rows]
        conn.exec_driver_sql(sql, values)

    def load_results(self, run_id: str, task_id: str | None = None) -> list[TrialResult]:
        """Trial results of a run (without transcripts), in task and trial order."""
        t, g = schema.trials, schema.grades
        trial_q = select(t.c.task_id, t.c.trial_index, t.c.record).where(t.c.run_id == run_id)
        grade_q = select(g).where(g.c.run_id == run_id)
        if task_id is not None:
            trial_q = trial_q.where(t.c.task_id == task_id)
            grade_q = grade_q.where(g.c.task_id == task_id)
        with self.engine.connect() as conn:
            grades_by_key: dict[tuple[str, int], list[Any]] = {}
            for row in conn.execute(grade_q.order_by(g.c.task_id, g.c.trial_index, g.c.position)):
                grades_by_key.setdefault((row.task_id, row.trial_index), []).append(grade_from_row(row))
            rows = conn.execute(trial_q.order_by(t.c.task_id, t.c.trial_index)).all()
        return [decode_record(r.record, grades_by_key.get((r.task_id, r.trial_index), [])) for r in rows]

    def load_trials(self, run_id: str, keys: list[tuple[str, int]]) -> list[TrialResult]:
        """The trials with these (task id, trial index) keys (without transcripts), in the
        order given; keys the run does not have are left out."""
        t, g = schema.trials, schema.grades
        found: dict[tuple[str, int], TrialResult] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                grades: dict[tuple[str, int], list[Any]] = {}
                grade_q = select(g).where(_of_keys(g, run_id, chunk))
                for row in conn.execute(grade_q.order_by(g.c.task_id, g.c.trial_index, g.c.position)):
                    grades.setdefault((row.task_id, row.trial_index), []).append(grade_from_row(row))
                trial_q = select(t.c.task_id, t.c.trial_index, t.c.record).where(_of_keys(t, run_id, chunk))
                for r in conn.execute(trial_q):
                    k = (r.task_id, r.trial_index)
                    found[k] = decode_record(r.record, grades.get(k, []))
        return [found[k] for k in keys if k in found]

    def failed_graders(
        self, run_id: str, keys: list[tuple[str, int]] | None = None
    ) -> dict[tuple[str, int], list[str]]:
        """The gating graders that failed each trial (only trials some gating grader
        failed), by (task id, trial index); of the trials ``keys`` only, when given."""
        out: dict[tuple[str, int], list[str]] = {}
        if keys is None:
            rows = failed_grader_rows(self.engine, run_id)
        else:
            g = schema.grades
            rows = []
            with self.engine.connect() as conn:
                for start in range(0, len(keys), 500):
                    # gating failures are picked here, and kind (not in the covering index by
                    # grader) is read: otherwise SQLite, with no statistics, walks that index
                    # over every grade of the run instead of seeking the few trials' rows
                    columns = (g.c.task_id, g.c.trial_index, g.c.grader, g.c.position, g.c.gating, g.c.passed)
                    query = select(*columns, g.c.kind).where(_of_keys(g, run_id, keys[start : start + 500]))
                    rows.extend(r[:4] for r in conn.execute(query) if r.gating and r.passed is False)
            rows.sort(key=lambda r: (r[0], r[1], r[3]))
        for task_id, index, grader, _ in rows:
            out.setdefault((task_id, index), []).append(grader)
        return out

    def _cached(self, run_id: str, part: str, compute: Any, encode: Any, decode: Any) -> Any:
        """``compute()``, kept for the next reader when the run is finished (see :mod:`.runcache`)."""
        return runcache.cached(
            self.engine,
            run_id,
            part,
            compute,
            encode,
            decode,
            min_trials=self.cache_min_trials,
            writable=not self.read_only,
        )

    def frame_columns(self, run_id: str) -> dict[str, Any]:
        """A run's trials as columns (one query; for summaries of any size): the fields
        of a :class:`assay.metrics.TrialFrame`."""
        return self._cached(
            run_id,
            "frame",
            lambda: frame_columns(self.engine, run_id),
            runcache.encode_frame,
            runcache.decode_frame,
        )

    def grade_rows(self, run_id: str, kinds: Iterable[str]) -> list[GradeTuple]:
        """A run's grades of the given kinds with their metrics (for the RAG summary):
        the fields of :class:`assay.metrics.GradeRow`."""
        return grade_rows(self.engine, run_id, kinds)

    def graded_scores(self, run_id: str) -> list[tuple[str, str, float]]:
        """Scores of the run's graders that score beyond 0/1 (see :func:`.frames.graded_scores`)."""
        return self._cached(
            run_id,
            "graded_scores",
            lambda: graded_scores(self.engine, run_id),
            runcache.encode_scores,
            runcache.decode_scores,
        )

    def frame_aggregates(self, run_id: str) -> dict[str, Any]:
        """Grader, process-metric, usage and failure aggregates of a run (SQL): the
        fields of a :class:`assay.metrics.FrameExtras`."""
        return self._cached(
            run_id,
            "aggregates",
            lambda: frame_aggregates(self.engine, run_id, self.summed),
            runcache.encode_aggregates,
            runcache.decode_aggregates,
        )

    def value_sums(self, run_id: str) -> list[tuple[str, str, float, int]]:
        """Per task and name, sum and count of the process metrics and grader scores
        (``score.<grader>``) of the run's counted trials (see :func:`frames.value_sums`)."""
        return self._cached(
            run_id,
            "value_sums",
            lambda: value_sums(self.engine, run_id, self.summed),
            runcache.encode_value_sums,
            runcache.decode_value_sums,
        )

    def value_rows(self, run_id: str, name: str) -> list[tuple[str, int, float]]:
        """``(task id, trial index, value)`` of every trial of the run that carries a
        process metric or a grader score (``score.<grader>``)."""
        return value_rows(self.engine, run_id, name)

    # retried trials -----------------------------------------------------------------
    def _retryable(self, run_id: str) -> Any:
        """Trials that ended in an error that is not the agent's and may pass on another
        attempt: a harness or environment error, or a gating grader that crashed."""
        t, g = schema.trials, schema.grades
        crashed = exists().where(
            g.c.run_id == t.c.run_id,
            g.c.task_id == t.c.task_id,
            g.c.trial_index == t.c.trial_index,
            g.c.gating,
            g.c.category == "grader_error",
        )
        return (t.c.run_id == run_id) & or_(
            t.c.termination.in_(("harness_error", "environment_error")), t.c.reward.is_(None) & crashed
        )

    def count_retryable(self, run_id: str) -> int:
        with self.engine.connect() as conn:
            query = select(func.count()).select_from(schema.trials).where(self._retryable(run_id))
            return int(conn.execute(query).scalar_one())

    def count_attempts(self, run_id: str) -> int:
        a = schema.attempts
        with self.engine.connect() as conn:
            return int(
                conn.execute(select(func.count()).select_from(a).where(a.c.run_id == run_id)).scalar_one()
            )

    def retry_errors(self, run_id: str) -> int:
        """Move the run's retryable trials (see :meth:`_retryable`) to its attempts, so
        they run again; in one transaction. Returns how many were moved."""
        t = schema.trials
        with self.engine.connect() as conn:
            keys: list[tuple[str, int]] = [
                (r.task_id, r.trial_index)
                for r in conn.execute(select(t.c.task_id, t.c.trial_index).where(self._retryable(run_id)))
            ]
        lines = {key: line for key in keys if (line := self._line(run_id, *key)) is not None}
        if not lines:
            return 0
        try:
            with self.engine.begin() as conn:
                self._move_to_attempts(conn, run_id, lines)
        except IntegrityError:  # another process moved them first (two resumes at once)
            return 0
        return len(lines)

    def _move_to_attempts(self, conn: Any, run_id: str, lines: dict[tuple[str, int], bytes]) -> None:
        t, a = schema.trials, schema.attempts
        gone: dict[sums.Key, list[float]] = {}
        for line in lines.values():
            for key, cell in sums.of_line(run_id, unpack_line(line)).items():
                acc = gone.setdefault(key, [0.0, 0.0, 0.0, 0.0])
                acc[:] = [x + y for x, y in zip(acc, cell, strict=True)]
        sums.add(conn, self.engine, gone)
        for (task_id, index), line in lines.items():
            previous = conn.execute(
                select(func.count())
                .select_from(a)
                .where(a.c.run_id == run_id, a.c.task_id == task_id, a.c.trial_index == index)
            ).scalar_one()
            conn.execute(
                insert(a).values(
                    run_id=run_id, task_id=task_id, trial_index=index, attempt=previous + 1, data=line
                )
            )
            conn.execute(
                delete(t).where(t.c.run_id == run_id, t.c.task_id == task_id, t.c.trial_index == index)
            )

    def _line(self, run_id: str, task_id: str, index: int) -> bytes | None:
        """A stored trial, packed whole (None if it is gone: another process moved it)."""
        result = next((r for r in self.load_results(run_id, task_id) if r.trial_index == index), None)
        return None if result is None else pack_line(result, self.load_transcript(run_id, task_id, index))

    def load_attempts(self, run_id: str) -> list[tuple[int, bytes]]:
        """The run's failed attempts: (attempt number, packed trial line), in order."""
        a = schema.attempts
        query = (
            select(a.c.attempt, a.c.data)
            .where(a.c.run_id == run_id)
            .order_by(a.c.task_id, a.c.trial_index, a.c.attempt)
        )
        with self.engine.connect() as conn:
            return [(int(r.attempt), bytes(r.data)) for r in conn.execute(query)]

    def add_attempts(self, run_id: str, attempts: Iterable[tuple[str, int, int, bytes]]) -> None:
        """Store failed attempts (task id, trial index, attempt, packed line), as an import does."""
        rows = [
            {"run_id": run_id, "task_id": task, "trial_index": index, "attempt": n, "data": data}
            for task, index, n, data in attempts
        ]
        if rows:
            with self.engine.begin() as conn:
                conn.execute(insert(schema.attempts), rows)

    def load_transcripts(self, run_id: str, task_id: str) -> dict[int, Transcript]:
        """Every stored transcript of one task of a run, by trial index."""
        tr = schema.transcripts
        query = select(tr.c.trial_index, tr.c.data).where(tr.c.run_id == run_id, tr.c.task_id == task_id)
        with self.engine.connect() as conn:
            return {row.trial_index: decode_transcript(row.data) for row in conn.execute(query)}

    def load_transcripts_of(
        self, run_id: str, keys: list[tuple[str, int]]
    ) -> dict[tuple[str, int], Transcript]:
        """The stored transcripts of these (task id, trial index) trials, by key (a few
        queries of 500 keys, not one per trial); trials without one are left out."""
        tr = schema.transcripts
        out: dict[tuple[str, int], Transcript] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                query = select(tr.c.task_id, tr.c.trial_index, tr.c.data).where(_of_keys(tr, run_id, chunk))
                for row in conn.execute(query):
                    out[(row.task_id, row.trial_index)] = decode_transcript(row.data)
        return out

    def load_transcript(self, run_id: str, task_id: str, trial_index: int) -> Transcript | None:
        tr = schema.transcripts
        with self.engine.connect() as conn:
            row = conn.execute(
                select(tr.c.data).where(
                    tr.c.run_id == run_id, tr.c.task_id == task_id, tr.c.trial_index == trial_index
                )
            ).first()
        return None if row is None else decode_transcript(row.data)


Row = dict[str, Any]


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
    """The trial row, grade rows, transcript row, metric rows, usage rows and model-call
    rows of a result."""
    key = {"run_id": result.run_id, "task_id": result.task_id, "trial_index": result.trial_index}
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
    }
    grade_rows = [{**key, "position": i, **grade_row(g)} for i, g in enumerate(result.grades)]
    transcript = None if result.transcript is None else {**key, "data": encode_transcript(result.transcript)}
    metrics = [{**key, "name": name, "value": value} for name, value in result.metrics.items()]
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
    return trial_row, grade_rows, transcript, metrics, usage, calls
