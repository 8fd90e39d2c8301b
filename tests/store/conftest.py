"""Store tests run on SQLite and on PostgreSQL: the ``store_url`` fixture is each in
turn (PostgreSQL: a throwaway server for the session, a fresh database per test; see
tests/support/postgres.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support import postgres


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    why = postgres.unavailable()
    if why is not None:
        pytest.skip(f"PostgreSQL store tests skipped: {why}")
    with postgres.server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return postgres.fresh_database(request.getfixturevalue("pg_server"))
