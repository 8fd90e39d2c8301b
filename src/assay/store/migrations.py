"""A store's schema on open: the version it records, refusing a newer one, and creating
what is missing (a new store, or an older one gaining its new tables, indexes and
per-task sums)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from pathlib import Path

from sqlalchemy import Engine, delete, insert, inspect, select
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

from ..errors import StoreError
from . import schema, sums


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
    ones: that is the migration, the rows stay readable; schema 3 also computes the
    per-task sums of the trials already stored) and record the schema version.
    Several processes may open a new store at once: the loser of a race retries."""
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
            if present is None or not present >= schema.OBJECT_NAMES:
                schema.metadata.create_all(engine)
                for index in schema.INDEXES:  # a store made before an index gains it
                    index.create(engine, checkfirst=True)
            found = stored_version(engine)
            if found != schema.SCHEMA_VERSION:
                migrate(engine, found)
            return
        except (OperationalError, IntegrityError, ProgrammingError) as exc:
            text = str(exc).lower()
            if ("already exists" not in text and "unique" not in text and "duplicate" not in text) or (
                attempt == 4
            ):
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
    transaction: per-task sums from the stored trials (before schema 3), then the
    version (schema 4 changed how new transcripts are packed: nothing to convert)."""
    meta = schema.meta_table
    with engine.begin() as conn:
        if found is None or found < 3:
            sums.backfill(conn)
        conn.execute(delete(meta).where(meta.c.key == "schema_version"))
        conn.execute(insert(meta).values(key="schema_version", value=str(schema.SCHEMA_VERSION)))
