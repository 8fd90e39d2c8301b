"""Human labels in the store: add, replace, list, JSONL import/export, located errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.graders.test_pairwise import store_run

from assay.store import Store
from assay.store.labels import Label, LabelError, LabelStore, normalize_value, read_jsonl, write_jsonl


@pytest.fixture
def store(store_url: str) -> Store:
    st = Store(store_url)  # SQLite and PostgreSQL (tests/store/conftest.py)
    store_run(st, "r1", "python:a", {("t1", 0): "x", ("t1", 1): "y", ("t2", 0): "z"})
    return st


@pytest.mark.parametrize(
    ("raw", "value"), [(True, "pass"), ("FAIL", "fail"), ("yes", "pass"), (3, "3"), ("4", "4"), (2.0, "2")]
)
def test_values_are_normalised(raw, value) -> None:
    assert normalize_value(raw) == value


def test_bad_values_are_rejected() -> None:
    with pytest.raises(ValueError, match="pass, fail or an integer"):
        normalize_value("great")


def test_add_replace_and_list(store: Store) -> None:
    labels = LabelStore(store)
    assert labels.add("r1", [Label("t1", 0, "pass", "judge"), Label("t1", 0, "3", "judge", "clarity")]) == 2
    labels.add("r1", [Label("t1", 0, "fail", "judge", labeller="bo", comment="invented id")])
    labels.add("r1", [Label("t1", 0, "fail", "judge")])  # replaces the first overall label of ""
    rows = labels.list("r1")
    assert len(rows) == 3 and {r.labeller for r in rows} == {"", "bo"}
    assert all(r.created_at and r.run_id == "r1" for r in rows)
    assert [r.value for r in labels.list("r1", labeller="bo")] == ["fail"]
    latest = labels.latest("r1")
    assert (
        latest[("t1", 0, "judge", "")].value == "fail" and latest[("t1", 0, "judge", "clarity")].value == "3"
    )
    assert labels.list("r1", grader="other") == []


def test_labels_need_an_existing_trial(store: Store) -> None:
    with pytest.raises(LabelError, match="run r1 has no trial t9#0"):
        LabelStore(store).add("r1", [Label("t9", 0, "pass")])


def test_jsonl_round_trip_and_grouped_form(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(
        json.dumps({"task_id": "t1", "trial_index": 0, "grader": "g", "value": "pass", "labeller": "ana"})
        + "\n\n"
        + json.dumps(
            {
                "task_id": "t2",
                "trial_index": 0,
                "grader": "g",
                "verdict": False,
                "dimensions": {"clarity": 2, "facts": "fail"},
                "comment": "made up a date",
            }
        )
        + "\n"
    )
    rows = read_jsonl(path)
    assert [(r.task_id, r.dimension, r.value) for r in rows] == [
        ("t1", "", "pass"),
        ("t2", "", "fail"),
        ("t2", "clarity", "2"),
        ("t2", "facts", "fail"),
    ]
    assert rows[1].comment == "made up a date" and rows[2].comment == ""
    LabelStore(store).add("r1", rows)
    out = tmp_path / "out.jsonl"
    assert write_jsonl(out, LabelStore(store).list("r1")) == 4
    again = read_jsonl(out)
    assert sorted((r.key, r.value) for r in again) == sorted((r.key, r.value) for r in rows)


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ("{not json", ":1: invalid JSON"),
        ('{"task_id": "t1", "value": "pass"}', ":1: trial_index: required field is missing"),
        ('{"task_id": "t1", "trial_index": "0", "value": "pass"}', ":1: trial_index: must be an integer"),
        ('{"task_id": "t1", "trial_index": 0, "value": "great"}', ":1: value: label value 'great'"),
        ('{"task_id": "t1", "trial_index": 0, "value": "pass", "colour": 1}', ":1: colour: unknown field"),
        ('{"task_id": "t1", "trial_index": 0, "dimensions": {"a": "x"}}', ":1: dimensions.a: label value"),
    ],
)
def test_import_errors_name_file_line_and_field(tmp_path: Path, line: str, where: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(LabelError) as exc:
        read_jsonl(path)
    assert f"{path}{where}" in str(exc.value)
