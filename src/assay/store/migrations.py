"""A store's schema on open: the version it records, refusing a newer one, and creating
what is missing (a new store, or an older one gaining its new tables and indexes, and
its trials their process-metric columns)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from pathlib import Path

from sqlalchemy import Connection, Engine, delete, insert, inspect, select, text
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

from ..errors import StoreError
from . import schema


def sqlite_objects(engine: Engine) -> set[str] | None:
    """The names of a SQLite store's tables and indexes, in one query (None: another
    database, whose tables are looked for one by one)."""
    if engine.dialect.name != "sqlite":
        return None
    with engine.connect() as conn:
        rows = conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")
        return {row[0] for row in rows}


def stored_version(engine: Engine) -> int | None:
    """The schema version the store records (None: a new store, or one of schema 1,
    which wrote none)."""
    meta = schema.meta_table
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":  # one query, not the inspector's reflection
            query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
            present = conn.exec_driver_sql(query, (meta.name,)).first() is not None
        else:
            present = inspect(conn).has_table(meta.name)
        if not present:
            return None  # no assay_meta table yet
        row = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).first()
    return int(row.value) if row is not None else None


def check_version(engine: Engine, url: str) -> int | None:
    """Refuse a store written by a newer assay (its tables may mean other things);
    the version found."""
    found = stored_version(engine)
    if found is not None and found > schema.SCHEMA_VERSION:
        raise StoreError(
            f"store {url} was written by a newer assay (store schema {found}; this assay reads "
            f"schema {schema.SCHEMA_VERSION} and older): upgrade assay, or use another --store"
        )
    return found


def create_schema(engine: Engine) -> None:
    """Create missing tables and indexes (a store of an older schema gains the new
    ones, and its trials their process-metric columns, see :func:`migrate`) and record
    the schema version. Several processes may open a new store at once: the loser of
    a race retries."""
    for attempt in range(5):
        try:
            present = sqlite_objects(engine)
            if present == set():  # a new SQLite file (a racing creator: retried)
                with engine.begin() as conn:  # its tables and its version at once: no rows to migrate
                    for statement in schema.sqlite_ddl():
                        conn.exec_driver_sql(statement)
                    meta = schema.meta_table
                    conn.execute(insert(meta).values(key="schema_version", value=str(schema.SCHEMA_VERSION)))
                return
            found = stored_version(engine)
            if present is None or not present >= schema.OBJECT_NAMES or found != schema.SCHEMA_VERSION:
                schema.metadata.create_all(engine)
                if found != schema.SCHEMA_VERSION:
                    migrate(engine, found)
                for index in schema.INDEXES:  # a store made before an index gains it
                    index.create(engine, checkfirst=True)
            return
        except (OperationalError, IntegrityError, ProgrammingError) as exc:
            message = str(exc).lower()
            if (
                "already exists" not in message and "unique" not in message and "duplicate" not in message
            ) or (attempt == 4):
                raise
            time.sleep(0.05 * (attempt + 1))


_image: bytes | None = None
_image_lock = threading.Lock()


def new_sqlite_image() -> bytes:
    """The bytes of a new SQLite store: every table and index and the schema version,
    built once per process in memory (``sqlite3`` ``serialize``) and marked for
    write-ahead logging (file format 2). Writing them costs about 1 ms; running the
    same statements into a new file cost 4-8 ms, paid by every new store."""
    global _image
    with _image_lock:
        if _image is None:
            conn = sqlite3.connect(":memory:")
            try:
                for statement in schema.sqlite_ddl():
                    conn.execute(statement)
                conn.execute(
                    f"INSERT INTO {schema.meta_table.name} (key, value) VALUES ('schema_version', ?)",
                    (str(schema.SCHEMA_VERSION),),
                )
                conn.commit()
                image = bytearray(conn.serialize())
            finally:
                conn.close()
            image[18] = image[19] = 2  # the header's read and write versions: write-ahead log
            _image = bytes(image)
        return _image


def make_sqlite_file(path: Path) -> bool:
    """Create the SQLite store ``path`` whole, from :func:`new_sqlite_image`, or do
    nothing and return False: the file (or a journal or write-ahead log of an earlier
    one) is already there, or it could not be written here (the caller then opens the path
    the usual way, which creates the schema or says what is wrong). The image is
    written beside the path and linked to it, so another process opening the same new
    store at once finds either no file or a whole one, and neither overwrites the other."""
    if not path.name:  # "/": not a file name (the usual open says what is wrong)
        return False
    logs = [path.with_name(path.name + end) for end in ("-wal", "-journal")]
    if path.exists() or any(log.exists() for log in logs):
        return False
    partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.new")
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)  # SQLite's own mode
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(new_sqlite_image())
        os.link(partial, path)  # fails if the path appeared meanwhile
        return True
    except OSError:  # taken by another process, no hard links here, the disk is full...
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(partial)


def migrate(engine: Engine, found: int | None) -> None:
    """Bring a store of an older schema (or a new one) to this version, in one
    transaction: the process metrics become columns of the trials (schema 5, see
    :func:`_metrics_to_columns`), then the version. Schema 3's per-task sums are no
    longer kept; schema 4 changed how new transcripts are packed (nothing to convert)."""
    meta = schema.meta_table
    with engine.begin() as conn:
        _metrics_to_columns(conn)
        conn.execute(text("DROP TABLE IF EXISTS task_sums"))
        conn.execute(delete(meta).where(meta.c.key == "schema_version"))
        conn.execute(insert(meta).values(key="schema_version", value=str(schema.SCHEMA_VERSION)))


_FILL_COLUMNS = """
UPDATE trials SET {assign} FROM (
  SELECT run_id, task_id, trial_index, {pivot} FROM trial_metrics WHERE name IN ({names})
  GROUP BY run_id, task_id, trial_index
) AS m
WHERE trials.run_id = m.run_id AND trials.task_id = m.task_id AND trials.trial_index = m.trial_index
"""


def _metrics_to_columns(conn: Connection) -> None:
    """A store of schema 4 or older: its trials gain the :data:`~.schema.METRIC_COLUMNS`,
    filled from their rows of ``trial_metrics`` (which are then deleted), and the
    covering index of the trials is made again with them. Rewrites every trial row: a
    store of a million trials takes minutes, once."""
    present = {column["name"] for column in inspect(conn).get_columns(schema.trials.name)}
    missing = [name for name in schema.METRIC_COLUMNS if name not in present]
    if not missing:
        return
    for name in missing:
        kind = schema.trials.c[name].type.compile(dialect=conn.dialect)
        conn.execute(text(f"ALTER TABLE trials ADD COLUMN {name} {kind}"))
    names = ", ".join(f"'{name}'" for name in schema.METRIC_COLUMNS)
    pivot = ", ".join(f"MAX(CASE WHEN name = '{n}' THEN value END) AS {n}" for n in schema.METRIC_COLUMNS)
    assign = ", ".join(f"{n} = m.{n}" for n in schema.METRIC_COLUMNS)
    conn.execute(text(_FILL_COLUMNS.format(assign=assign, pivot=pivot, names=names)))
    conn.execute(text(f"DELETE FROM trial_metrics WHERE name IN ({names})"))
    conn.execute(text("DROP INDEX IF EXISTS ix_trials_columns"))  # made again with the columns
