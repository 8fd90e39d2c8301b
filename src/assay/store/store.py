"""The results store: SQLite by default (``.assay/assay.db``), any SQLAlchemy URL.

Finished trials are written in batches, one transaction each and every trial whole (its
row, grades and transcript), so a run interrupted at any moment - even by SIGKILL -
holds only whole trials, and resuming it runs exactly the missing ones.

:class:`Store` opens the database and keeps the runs; its trial methods come from
:mod:`.trials`, its retried-trial methods from :mod:`.attempts`, its column and
aggregate reads from :mod:`.columns`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any, TypeVar

from sqlalchemy import Engine, create_engine, delete, event, func, inspect, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.pool import StaticPool

from ..core.results import RunInfo, TaskMeta
from ..errors import ResumeError, RunNotFound, SpecError
from . import migrations, reserve, runcache, schema
from .attempts import RetriedTrials
from .columns import ColumnReads
from .engine import DEFAULT_STORE as DEFAULT_STORE  # re-exported: assay.store.store.DEFAULT_STORE
from .engine import _busy_timeout, _shown, _sqlite_pragmas, resolve_url
from .faults import QUICK_CHECK_MAX_BYTES, StoreFault, header_problem, read_only_reason, sqlite_path
from .faults import install as install_faults
from .trials import TrialRecords

_LATEST = re.compile(r"latest(?:~(\d+))?")

T = TypeVar("T")


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class Store(RetriedTrials, TrialRecords, ColumnReads):
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
        made = self.path is not None and not self.read_only and migrations.make_sqlite_file(self.path)
        self.fresh = made
        """This object has just written the store's file whole, from the image of a new
        store, and created no run in it yet: no header to check, no schema to create, and
        no run in it but one another process may be creating at this moment."""
        if self.path is not None and not made:
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
        self._checked = made  # made here whole: nothing to check, create or migrate
        found = schema.SCHEMA_VERSION if made else self._retry_locked(self._check_version, timeout)
        if not self.read_only and not made:
            self._retry_locked(self._create_schema, timeout)
            found = schema.SCHEMA_VERSION
        self.metric_columns = found is not None and found >= 5
        """Whether the store keeps the process metrics as columns of the trials (schema
        5): a read-only store of an older schema, which cannot be migrated, is read
        from its rows of metrics."""
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

    def _check_version(self) -> int | None:
        return migrations.check_version(self.engine, self.url)

    def _create_schema(self) -> None:
        migrations.create_schema(self.engine)

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
        self.fresh = False
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

    def set_status(self, run_id: str, status: str, info: RunInfo | None = None) -> None:
        """Record a run's status; a run that stopped (finished or interrupted) is
        checkpointed into the database file. ``info``: the run's info as the caller
        holds it (the process running it), updated in place, instead of read back."""
        info = info if info is not None else self.get_run(run_id)
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
