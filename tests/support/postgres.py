"""A throwaway PostgreSQL server for the store tests.

``ASSAY_TEST_POSTGRES_URL`` (a SQLAlchemy URL to an empty database the tests may fill)
wins; otherwise a cluster is made with ``initdb`` in a temporary folder and started with
``pg_ctl`` on 127.0.0.1 (a free port, trust authentication, no other listener), and
stopped and deleted at the end. As root (a CI container) the cluster runs as the
``postgres`` user that Debian's ``postgresql`` package creates. ``.ci/run`` installs
that package; without it, or without ``psycopg``, the PostgreSQL half of the tests
skips with the reason.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

ENV_URL = "ASSAY_TEST_POSTGRES_URL"


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    return candidates[0] if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def unavailable() -> str | None:
    """Why no PostgreSQL can be had here (None: one can)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'psycopg[binary]')"
    if os.environ.get(ENV_URL):
        return None
    if _binary("initdb") is None or _binary("pg_ctl") is None:
        return "no PostgreSQL server binaries (apt-get install postgresql, or set ASSAY_TEST_POSTGRES_URL)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
    return None


def _run(argv: list[str], user: str | None) -> None:
    if user is not None:
        argv = ["runuser", "-u", user, "--", *argv]
    subprocess.run(argv, check=True, capture_output=True, text=True, timeout=120)


@contextlib.contextmanager
def server() -> Iterator[str]:
    """A PostgreSQL server for the duration of the block; yields the URL of its
    ``postgres`` database (``postgresql+psycopg://...``)."""
    if os.environ.get(ENV_URL):
        yield os.environ[ENV_URL]
        return
    user = "postgres" if os.geteuid() == 0 else None
    tmp = Path(tempfile.mkdtemp(prefix="assay-pg-"))
    data, sockets = tmp / "data", tmp / "sock"
    sockets.mkdir()
    if user is not None:
        entry = pwd.getpwnam(user)
        for path in (tmp, sockets):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    port = _free_port()
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    assert initdb and pg_ctl
    try:
        _run([initdb, "-D", str(data), "-U", "assay", "--auth=trust", "-E", "UTF8", "--no-sync"], user)
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={sockets} -c fsync=off"
        )
        _run(
            [pg_ctl, "-D", str(data), "-o", options, "-l", str(tmp / "log"), "-w", "-t", "60", "start"], user
        )
        try:
            yield f"postgresql+psycopg://assay@127.0.0.1:{port}/postgres"
        finally:
            with contextlib.suppress(Exception):
                _run([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"], user)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def fresh_database(server_url: str) -> str:
    """A new, empty database on the server (a URL to it): each test gets its own."""
    from sqlalchemy import create_engine, text

    name = "t_" + uuid.uuid4().hex[:12]
    engine = create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        engine.dispose()
    return server_url.rsplit("/", 1)[0] + "/" + name
