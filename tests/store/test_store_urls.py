"""What ``--store`` may name: another application's SQLite file is refused and left
byte for byte as it was (assay never adds its tables to it); a ``sqlite:`` URL names a
file or memory, as SQLAlchemy reads it; a folder says it is one. One line each."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tests.support.cli import assay_main

from assay.store import Store


def _foreign(path: Path, *tables: str) -> bytes:
    conn = sqlite3.connect(path)
    for table in tables:
        conn.execute(f"CREATE TABLE {table} (x)")
    conn.execute(f"INSERT INTO {tables[0]} VALUES (1)")
    conn.commit()
    conn.close()
    return path.read_bytes()


@pytest.mark.parametrize("tables", [("notes",), ("notes", "runs"), ("runs", "trials")])
@pytest.mark.parametrize("command", [["runs"], ["run", "retail", "-k", "1", "--task", "address-change-1"]])
def test_another_applications_database_is_refused_and_untouched(
    tmp_path: Path, tables: tuple[str, ...], command: list[str]
) -> None:
    db = tmp_path / "app.db"
    before = _foreign(db, *tables)
    result = assay_main(*command, "--store", str(db))
    assert result.code == 4, result
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1, result.stderr
    listed = ", ".join(sorted(tables))
    assert f"not an assay store: it holds another application's tables ({listed})" in result.err
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]  # no log, no journal


def test_an_empty_file_is_a_new_store(tmp_path: Path) -> None:
    """(A store of schema 1, with runs and trials but no version recorded, is migrated,
    not refused: tests/store/test_record.py reads one.)"""
    empty = tmp_path / "empty.db"
    empty.touch()
    assert Store(str(empty)).list_runs() == []


@pytest.mark.parametrize(
    ("url", "code", "expected"),
    [
        ("sqlite:///", 2, "store 'sqlite:///' names no database file"),
        ("sqlite:///?mode=ro", 2, "names no database file"),
        ("sqlite:///%00", 2, "its file name holds a NUL character (%00)"),
        ("sqlite:////", 4, "it is a folder, not a database file"),
        ("FOLDER", 4, "it is a folder, not a database file"),
    ],
)
def test_store_urls_that_name_no_usable_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, code: int, expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    url = str(tmp_path) if url == "FOLDER" else url
    result = assay_main("runs", "--store", url)
    assert result.code == code, result
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert expected in result.err
    assert list(tmp_path.iterdir()) == []  # no stray file


def test_url_escapes_are_read_as_sqlalchemy_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert assay_main("runs", "--store", "sqlite:///a%20b.db").code == 0
    assert assay_main("runs", "--store", "sqlite:///:memory:").code == 0
    names = {p.name for p in tmp_path.iterdir()}
    assert "a b.db" in names and not any(":memory:" in name for name in names), names
