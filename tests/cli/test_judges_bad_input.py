"""``assay label`` and ``assay calibrate`` given what an attacker (or a slip) gives them:
each mistake is one line naming the file, line and field (or the option), exit 2, no
traceback, nothing stored; label text shown on the terminal stays text."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.graders.test_pairwise import store_run
from tests.support.cli import CliResult, assay_main

from assay.core import GradeResult, TrialResult
from assay.store import Store
from assay.store.labels import LabelStore

SKIPPED = "no judge model configured (--judge)"


def judged(tmp_path: Path, grade: Callable[[str], GradeResult]) -> Path:
    """A store with run r1 (tasks t1, t2) whose trials carry the given judge grade."""
    db = tmp_path / "assay.db"
    st = Store(db)
    write = st.write_trial

    def with_grade(result: TrialResult) -> bool:
        result.grades.append(grade(result.task_id))
        return write(result)

    st.write_trial = with_grade  # type: ignore[method-assign]
    store_run(st, "r1", "python:a", {("t1", 0): "one", ("t2", 0): "two"})
    return db


def levels(task_id: str) -> GradeResult:
    """A judge grade with a 1-4 dimension ``tone`` and a pass/fail item ``facts``."""
    metrics = {"scale_min": 1.0, "scale_max": 4.0, "dim:tone": 3.0, "pass:facts": 1.0}
    return GradeResult("explanation", "judge", True, score=0.75, gating=False, metrics=metrics)


def skipped(task_id: str) -> GradeResult:
    return GradeResult.skip("explanation", "judge", SKIPPED, gating=False)


def label(db: Path, *args: str, stdin: str | None = None) -> CliResult:
    return assay_main("label", "r1", *args, "--store", str(db), stdin=stdin)


def refused(result: CliResult) -> str:
    assert result.code == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    return result.err


def stored(db: Path) -> list[tuple[str, str, str, str]]:
    return [(lb.task_id, lb.grader, lb.dimension, lb.value) for lb in LabelStore(Store(db)).list("r1")]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"\x00\xff\xfe binary\n", "labels.jsonl:1: not UTF-8 text (byte 0xff at column 2)"),
        (
            b'{"task_id": "t1", "trial_index": ' + b"1" * 5000 + b', "value": "pass"}\n',
            "labels.jsonl:1: invalid JSON: Exceeds the limit (4300 digits)",
        ),
        (b"[" * 100_000 + b"]" * 100_000 + b"\n", "labels.jsonl:1: invalid JSON: nested too deeply"),
        (
            b'{"task_id": "t1", "trial_index": 0, "value": "pass", "comment": "\\udcff"}\n',
            "labels.jsonl:1: comment: text with a lone surrogate",
        ),
        (
            b'{"task_id": "t1", "trial_index": 0, "value": "pass", "labeller": "' + b"a" * 101 + b'"}\n',
            "labels.jsonl:1: labeller: a labeller name has at most 100 characters, not 101",
        ),
    ],
    ids=["binary", "5000-digits", "deep", "lone-surrogate", "long-labeller"],
)
def test_import_of_an_unreadable_file_is_one_line(tmp_path: Path, content: bytes, says: str) -> None:
    db = judged(tmp_path, levels)
    path = tmp_path / "labels.jsonl"
    path.write_bytes(b'{"task_id": "t2", "trial_index": 0, "value": "pass"}\n'.join([b"", content]))
    message = refused(label(db, "--import", str(path)))
    assert says.replace("labels.jsonl:1", f"{path}:2") in message
    assert stored(db) == []  # the good first line is not stored either


def test_export_to_a_folder_or_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    db = judged(tmp_path, levels)
    path = _file(tmp_path, {"task_id": "t1", "trial_index": 0, "value": "pass"})
    assert label(db, "--import", str(path)).code == 0
    assert f"{tmp_path}: is a folder" in refused(label(db, "--export", str(tmp_path)))
    missing = tmp_path / "nope" / "labels.jsonl"
    assert f"folder {missing.parent} does not exist" in refused(label(db, "--export", str(missing)))
    assert "is the store's own file" in refused(label(db, "--export", str(db)))
    assert len(stored(db)) == 1 and db.stat().st_size > 0


def _file(tmp_path: Path, *rows: dict) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_import_checks_labels_against_the_run(tmp_path: Path) -> None:
    """A level off the rubric's scale, a grader the run lacks, a dimension the grade
    lacks, an overall level: each named by file:line: field; nothing stored."""
    db = judged(tmp_path, levels)
    good = {"task_id": "t1", "trial_index": 0, "grader": "explanation"}
    path = _file(
        tmp_path,
        {**good, "verdict": "pass", "dimensions": {"tone": 99, "facts": "pass"}},
        {**good, "grader": "nope", "value": "pass"},
        {**good, "dimension": "nope", "value": 3},
        {**good, "value": 3},
        {**good, "trial_index": 5, "value": "pass"},
        {**good, "dimension": "facts", "value": 2},
    )
    message = refused(label(db, "--import", str(path)))
    assert f"{path}:1: dimensions.tone: dimension 'tone' takes 4, 3, 2, 1, not '99'" in message
    assert f"{path}:2: grader: run r1 has no grader 'nope'" in message
    assert f"{path}:3: dimension: grader 'explanation' has no dimension 'nope' on trial t1#0" in message
    assert f"{path}:4: value: an overall verdict is pass or fail, not '3'" in message
    assert f"{path}:5: trial_index: run r1 has no trial t1#5" in message
    assert "(+1 more)" in message
    assert stored(db) == []
    ok = _file(tmp_path, {**good, "verdict": "fail", "dimensions": {"tone": 2, "facts": "fail"}})
    assert label(db, "--import", str(ok)).code == 0
    assert sorted(stored(db)) == [
        ("t1", "explanation", "", "fail"),
        ("t1", "explanation", "facts", "fail"),
        ("t1", "explanation", "tone", "2"),
    ]


def test_a_comment_that_is_not_utf8_is_asked_again_never_a_traceback(tmp_path: Path) -> None:
    db = judged(tmp_path, levels)
    # stdin decodes a byte that is not UTF-8 (b"\xff") to a lone surrogate
    asked = label(db, "--overall-only", "--labeller", "ana", stdin="p\n\udcff\nfine\n")
    assert asked.code == 0, asked.stderr
    assert "type it again" in asked.stdout and "saved 1 label(s) by ana" in asked.err
    assert [lb.comment for lb in LabelStore(Store(db)).list("r1")] == ["fine"]
    message = refused(label(db, "--overall-only", "--labeller", "bo", stdin="f\n\udcff\n"))
    assert "comment on t1#0: text with a lone surrogate" in message and "not saved" in message
    assert [lb.labeller for lb in LabelStore(Store(db)).list("r1")] == ["ana"]  # ana's label stays


def test_label_text_printed_by_calibrate_is_text(tmp_path: Path) -> None:
    """Comments in the disagreements table: markup is not interpreted, escape sequences
    do not reach the terminal (they are shown as escapes)."""
    db = judged(tmp_path, levels)
    attack = "\x1b]0;PWNED\x07\x1b[2J[bold red]MARKUP[/bold red]"
    short = "\x1b[2J[b]M[/b]"  # fits a narrow table cell
    grader = {"grader": "explanation", "trial_index": 0, "value": "fail"}
    path = _file(
        tmp_path,
        {**grader, "task_id": "t1", "comment": attack},
        {**grader, "task_id": "t2", "comment": short},
    )
    assert label(db, "--import", str(path)).code == 0
    shown = assay_main("calibrate", "r1", "--store", str(db))
    assert shown.code in (0, 1), shown.stderr
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout
    assert "\\x1b[2J[b]M[/b]" in shown.stdout  # the markup as text, the escape as an escape
    assert "PWNED" in shown.stdout and "MARKUP" in shown.stdout


@pytest.mark.parametrize("threshold", ["2", "nan", "-0.5"])
def test_calibrate_threshold_off_the_kappa_scale_is_a_usage_error(tmp_path: Path, threshold: str) -> None:
    db = judged(tmp_path, levels)
    path = _file(tmp_path, {"task_id": "t1", "trial_index": 0, "grader": "explanation", "value": "pass"})
    assert label(db, "--import", str(path)).code == 0
    message = refused(assay_main("calibrate", "r1", "--threshold", threshold, "--store", str(db)))
    assert f"--threshold {threshold}: a kappa threshold is a number from 0 to 1" in message


def test_calibrate_on_skipped_judge_grades_says_the_judge_gave_no_verdict(tmp_path: Path) -> None:
    db = judged(tmp_path, skipped)
    path = _file(tmp_path, {"task_id": "t1", "trial_index": 0, "grader": "explanation", "value": "pass"})
    assert label(db, "--import", str(path)).code == 0
    message = refused(assay_main("calibrate", "r1", "--store", str(db)))
    assert "run r1 has 1 label(s), but the judge gave no verdict on the labelled items" in message
    assert f"explanation skipped: {SKIPPED}" in message and "add some with" not in message
