"""The portable run record, the store's schema version and its single-file durability."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from sqlalchemy import inspect, select
from tests.support.cli import assay_main
from tests.support.old_store import as_schema_4

import assay
from assay.store import Store, schema
from assay.store.codec import decompress
from assay.store.record import RECORD_SCHEMA, record_json_schema

ROOT = Path(__file__).resolve().parents[2]
TASKS = ["refund-in-window-email", "cancel-pending", "privacy-other-user"]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with two runs (careful, flaky) of a few retail tasks."""
    db = tmp_path_factory.mktemp("src") / "assay.db"
    for run_id, agent in (("careful", "builtin:retail-careful"), ("flaky", "builtin:retail-flaky")):
        assay.run("retail", agent=agent, trials=2, seed=4, tags=["refund"], store=str(db), run_id=run_id)
    return db


def _report(db: Path, out: Path) -> str:
    result = assay_main("report", "careful", "flaky", "--html", str(out), "--store", str(db))
    assert result.code == 0, result
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "<time>", out.read_text())


def test_export_then_import_gives_identical_show_compare_and_report(source: Path, tmp_path: Path) -> None:
    target = tmp_path / "empty.db"
    for run_id in ("careful", "flaky"):
        exported = assay_main(
            "export", run_id, "-o", str(tmp_path / f"{run_id}.jsonl.gz"), "--store", str(source)
        )
        assert exported.code == 0, exported
        imported = assay_main("import", "run", str(tmp_path / f"{run_id}.jsonl.gz"), "--store", str(target))
        assert imported.code == 0 and f"imported run {run_id}" in imported.err, imported
    for args in (["show", "flaky", "--json"], ["show", "careful"], ["compare", "careful", "flaky", "--json"]):
        before, after = assay_main(*args, "--store", str(source)), assay_main(*args, "--store", str(target))
        assert before.code == after.code == 0
        assert before.stdout == after.stdout, args
    assert _report(source, tmp_path / "a.html") == _report(target, tmp_path / "b.html")
    first = Store(source).load_results("flaky")
    again = Store(target).load_results("flaky")
    assert [(r.key, r.reward, r.grades, r.usage, r.metrics) for r in first] == [
        (r.key, r.reward, r.grades, r.usage, r.metrics) for r in again
    ]
    assert Store(source).load_transcript("flaky", first[0].task_id, 0) == Store(target).load_transcript(
        "flaky", first[0].task_id, 0
    )


def test_every_line_of_a_record_matches_the_documented_schema(source: Path, tmp_path: Path) -> None:
    path = tmp_path / "careful.jsonl"
    assert assay_main("export", "careful", "-o", str(path), "--store", str(source)).code == 0
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    validator = Draft202012Validator(record_json_schema())
    for line in lines:
        validator.validate(line)
    assert lines[0]["kind"] == "header" and lines[0]["schema"] == RECORD_SCHEMA
    assert lines[-1] == {"kind": "end", "trials": len(lines) - 2, "attempts": 0}
    documented = json.loads((ROOT / "docs" / "schemas" / "run-record.schema.json").read_text())
    assert documented == record_json_schema(), "regenerate docs/schemas/run-record.schema.json"


def test_bad_records_are_refused_whole_with_a_located_line(source: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    assay_main("export", "careful", "-o", str(good), "--store", str(source))
    lines = good.read_text().splitlines()
    target = tmp_path / "t.db"
    cases = {
        "truncated.jsonl": (lines[:-3], "truncated or altered"),
        "garbled.jsonl": ([*lines[:2], "{not json", *lines[2:]], "garbled.jsonl:3: not valid JSON"),
        "future.jsonl": ([lines[0].replace(RECORD_SCHEMA, "assay.run-record/9"), *lines[1:]], ":1: schema:"),
        "badtrial.jsonl": ([lines[0], '{"kind": "trial", "trial": {}}', *lines[1:]], "badtrial.jsonl:2:"),
    }
    for name, (content, message) in cases.items():
        (tmp_path / name).write_text("\n".join(content) + "\n")
        result = assay_main("import", "run", str(tmp_path / name), "--store", str(target))
        assert result.code == 2 and message in result.err and "Traceback" not in result.stderr, (name, result)
    assert Store(target).list_runs() == []  # nothing half-imported
    assert assay_main("import", "run", str(good), "--store", str(target)).code == 0
    again = assay_main("import", "run", str(good), "--store", str(target))
    assert again.code == 2 and "already exists" in again.err
    assert assay_main("import", "run", str(good), "--store", str(target), "--run-id", "copy").code == 0


def test_gzip_and_plain_records_hold_the_same_lines(source: Path, tmp_path: Path) -> None:
    assay_main("export", "careful", "-o", str(tmp_path / "a.jsonl"), "--store", str(source))
    assay_main("export", "careful", "-o", str(tmp_path / "a.jsonl.gz"), "--store", str(source))
    plain = (tmp_path / "a.jsonl").read_text().splitlines()
    packed = gzip.decompress((tmp_path / "a.jsonl.gz").read_bytes()).decode().splitlines()
    assert [json.loads(x) for x in plain][1:] == [json.loads(x) for x in packed][1:]  # headers differ in time


def test_a_store_of_a_newer_schema_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "future.db"
    store = Store(db)
    with store.engine.begin() as conn:
        conn.execute(schema.meta_table.update().values(value=str(schema.SCHEMA_VERSION + 1)))
    store.close()
    result = assay_main("runs", "--store", str(db))
    assert (
        result.code == 2
        and f"written by a newer assay (store schema {schema.SCHEMA_VERSION + 1}" in result.err
    ), result
    assert "Traceback" not in result.stderr


def test_a_store_of_schema_1_is_migrated_and_its_runs_read(tmp_path: Path) -> None:
    """A store written before schema versions existed (its runs kept settings, not specs)."""
    db = tmp_path / "old.db"
    run = assay.run("retail", trials=1, task_ids=TASKS[:1], store=str(db), run_id="old")
    info = json.loads(run.info.model_dump_json())
    spec = info.pop("spec")
    info.pop("fault_plan")
    info["settings"] = {"model_options": spec["model_options"], "judges": [], "limits": {}, "faults": None}
    info["filters"] = {"split": None, "tags": [], "task_ids": TASKS[:1]}
    store = run.store
    with store.engine.begin() as conn:
        conn.execute(schema.runs.update().values(info=json.dumps(info)))
        conn.exec_driver_sql(f"DROP TABLE {schema.meta_table.name}")  # schema 1 had none
        conn.execute(schema.attempts.delete())
    store.close()
    migrated = Store(db)
    assert migrated.get_run("old").spec.task_ids == TASKS[:1]
    with migrated.engine.connect() as conn:
        version = conn.execute(schema.meta_table.select()).all()
    assert [(r.key, r.value) for r in version] == [("schema_version", str(schema.SCHEMA_VERSION))]
    assert assay_main("show", "old", "--store", str(db)).code == 0


def test_copying_the_db_file_alone_right_after_a_run_keeps_every_trial(tmp_path: Path) -> None:
    db = tmp_path / "assay.db"
    result = assay_main("run", "retail", "-k", "2", "--tag", "refund", "--store", str(db), "--run-id", "r")
    assert result.code == 0, result
    copy = tmp_path / "copy" / "assay.db"
    copy.parent.mkdir()
    shutil.copy(db, copy)  # the -wal file stays behind
    assert not (copy.parent / "assay.db-wal").exists()
    assert len(Store(copy).completed_keys("r")) == len(Store(db).completed_keys("r")) > 0


def test_a_schema_3_store_with_zlib_transcripts_becomes_schema_5(tmp_path: Path) -> None:
    """Schema 4 only changed how new transcripts are packed: a schema-3 store keeps its
    rows (zlib transcripts read as before); schema 5 moves its process metrics into the
    trials' columns and drops its per-task sums."""
    import zlib

    db = tmp_path / "v3.db"
    run = assay.run("retail", trials=1, task_ids=TASKS[:1], store=str(db), run_id="v3")
    store = run.store
    shown = assay_main("show", "v3", "--store", str(db), "--json")
    with store.engine.begin() as conn:
        stored = conn.execute(
            select(schema.transcripts.c.task_id, schema.transcripts.c.trial_index, schema.transcripts.c.data)
        ).all()
        assert stored
        for task_id, index, data in stored:
            legacy = zlib.compress(decompress(data), 1)
            conn.execute(
                schema.transcripts.update()
                .where(schema.transcripts.c.task_id == task_id, schema.transcripts.c.trial_index == index)
                .values(data=legacy)
            )
    as_schema_4(store, version=3)
    upgraded = Store(db)
    with upgraded.engine.connect() as conn:
        version = conn.execute(schema.meta_table.select()).all()
        assert not inspect(conn).has_table("task_sums")
    assert [(r.key, r.value) for r in version] == [("schema_version", "5")]
    for task_id, index, _ in stored:
        transcript = upgraded.load_transcript("v3", task_id, index)
        assert transcript is not None and transcript.messages
    again = assay_main("show", "v3", "--store", str(db), "--json")
    assert shown.code == again.code == 0 and again.stdout == shown.stdout
    assert assay_main("show", "v3", "--store", str(db)).code == 0
