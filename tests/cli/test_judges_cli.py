"""``assay label``, ``assay calibrate`` and ``assay judge-pairwise`` as a user runs them.

The shipped calibration example (examples/calibration) is built, labelled by import and
calibrated; every kappa printed equals scikit-learn's to 1e-9."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score
from tests.graders.test_pairwise import prefers, store_run
from tests.support.fake_llm_server import FakeLLMServer
from typer.testing import CliRunner

from assay.cli import app
from assay.core import GradeResult, TrialResult
from assay.errors import RunNotFound
from assay.store import Store

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "calibration"


class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str, exception: BaseException | None = None):
        self.returncode, self.stdout, self.stderr, self.exception = returncode, stdout, stderr, exception


def assay(*args: str, store: Path, stdin: str | None = None) -> Result:
    """The CLI in this process (fast); :func:`assay_process` checks exit codes as a user sees them."""
    res = CliRunner().invoke(app, [*args, "--store", str(store)], input=stdin, env={"COLUMNS": "150"})
    exc = res.exception if not isinstance(res.exception, SystemExit) else None
    return Result(res.exit_code, res.stdout, res.stderr, exc)


def assay_process(*args: str, store: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "ASSAY_STORE": str(store), "COLUMNS": "150"},
    )


def ok(proc: Result) -> str:
    assert proc.returncode == 0 and proc.exception is None, (proc.stdout, proc.stderr, proc.exception)
    return proc.stdout


def bad(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    return " ".join(proc.stderr.split())


def rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (EXAMPLE / name).read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("cal") / "assay.db"
    spec = importlib.util.spec_from_file_location("make_run", EXAMPLE / "make_run.py")
    assert spec is not None and spec.loader is not None
    make_run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_run)
    assert make_run.build(Store(db)) is True and make_run.build(Store(db)) is False
    out = assay("label", "calibration-demo", "--import", str(EXAMPLE / "human_labels.jsonl"), store=db)
    assert "imported 240 label(s)" in out.stderr
    return db


def test_calibrate_matches_sklearn_on_the_shipped_example(calibrated: Path) -> None:
    report = json.loads(ok(assay("calibrate", "calibration-demo", "--json", store=calibrated)))
    (grader,) = report["graders"]
    assert grader["grader"] == "explanation" and grader["verdict"] == "judge usable" and grader["usable"]
    judge, human = rows("judge_verdicts.jsonl"), rows("human_labels.jsonl")
    dims = {d["dimension"]: d for d in grader["dimensions"]}
    expected = cohen_kappa_score([r["verdict"] for r in judge], [r["verdict"] for r in human])
    assert abs(dims["overall"]["kappa"] - expected) < 1e-9 and abs(grader["kappa"] - expected) < 1e-9
    for name in ("policy_citation", "outcome_clarity", "tone", "invented_facts", "false_promise"):
        a = [r["dimensions"][name] for r in judge]
        b = [r["dimensions"][name] for r in human]
        if isinstance(a[0], str):
            a, b = [x == "pass" for x in a], [x == "pass" for x in b]
        assert abs(dims[name]["kappa"] - cohen_kappa_score(a, b)) < 1e-9, name
        if not isinstance(a[0], bool):
            for w in ("linear", "quadratic"):
                assert abs(dims[name][f"kappa_{w}"] - cohen_kappa_score(a, b, weights=w)) < 1e-9, (name, w)
        agreement = sum(x == y for x, y in zip(a, b, strict=True)) / len(a)
        assert dims[name]["raw_agreement"] == pytest.approx(agreement)
    overall = dims["overall"]["confusion"]
    assert overall["labels"] == ["fail", "pass"] and sum(map(sum, overall["matrix"])) == 40
    assert any(c["dimension"] == "overall" for c in grader["disagreements"])
    assert grader["length_bias"]["n"] == 40


def test_calibrate_prints_kappa_and_the_verdict(calibrated: Path) -> None:
    kappa = cohen_kappa_score(
        [r["verdict"] for r in rows("judge_verdicts.jsonl")],
        [r["verdict"] for r in rows("human_labels.jsonl")],
    )
    text = ok(assay("calibrate", "calibration-demo", "--grader", "explanation", store=calibrated))
    assert f"overall kappa {kappa:.10f} vs threshold 0.7: judge usable" in text
    assert "kappa quadratic" in text and "confusion matrices" in text and "length bias" in text
    strict = assay("calibrate", "calibration-demo", "--threshold", "0.9", store=calibrated)
    assert strict.returncode == 1 and "judge not usable" in strict.stdout  # a gate: exit 1


def test_label_interactively_from_piped_answers_then_export(tmp_path: Path) -> None:
    db = tmp_path / "assay.db"
    store_run(Store(db), "r1", "python:a", {("t1", 0): "answer one", ("t2", 0): "answer two"})
    # trial-level labels (no judge grader in this run): verdict, then comment, per trial
    proc = assay("label", "r1", "--labeller", "ana", store=db, stdin="p\nlooks right\nbanana\nf\n\n")
    assert proc.returncode == 0, proc.stderr
    assert (
        "answer one" in proc.stdout
        and "answer one" in proc.stdout
        and "saved 2 label(s) by ana" in proc.stderr
    )
    assert "answer one of pass, fail, skip, quit" in proc.stdout  # 'banana' was asked again
    export = tmp_path / "out.jsonl"
    ok(assay("label", "r1", "--export", str(export), store=db))
    labels = [json.loads(line) for line in export.read_text().splitlines()]
    assert [(x["task_id"], x["value"], x["comment"], x["labeller"]) for x in labels] == [
        ("t1", "pass", "looks right", "ana"),
        ("t2", "fail", "", "ana"),
    ]
    # already labelled by ana: nothing is asked again
    again = assay("label", "r1", "--labeller", "ana", store=db, stdin="")
    assert again.returncode == 0 and "saved 0 label(s)" in again.stderr
    calibrated = assay("calibrate", "r1", "--json", store=db)
    cal = json.loads(calibrated.stdout)
    assert cal["graders"][0]["grader"] == "(trial reward)" and cal["graders"][0]["dimensions"][0]["n"] == 2
    # the rewards disagree with one label of two: the "judge" is not usable, exit 1
    assert cal["graders"][0]["verdict"] == "judge not usable" and calibrated.returncode == 1


def test_label_asks_only_about_trials_the_judge_grader_graded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As in retail, where only the hand-written tasks have the judge grader: the other
    trials have no judge verdict to label, so they are not asked about."""
    db = tmp_path / "assay.db"
    st = Store(db)
    write = st.write_trial

    def with_judge_on_t1(result: TrialResult) -> bool:
        if result.task_id == "t1":
            result.grades.append(GradeResult("explanation", "judge", True, score=1.0, gating=False))
        return write(result)

    monkeypatch.setattr(st, "write_trial", with_judge_on_t1)
    store_run(st, "r1", "python:a", {("t1", 0): "judged answer", ("t2", 0): "answer nobody judged"})
    proc = assay("label", "r1", "--overall-only", "--labeller", "ana", store=db, stdin="p\nfine\n")
    assert proc.returncode == 0 and "saved 1 label(s) by ana" in proc.stderr, proc.stderr
    assert "judged answer" in proc.stdout and "answer nobody judged" not in proc.stdout


def test_user_mistakes_exit_2_with_a_located_message(tmp_path: Path) -> None:
    db = tmp_path / "assay.db"
    store_run(Store(db), "r1", "python:a", {("t1", 0): "x"})
    path = tmp_path / "labels.jsonl"
    path.write_text('{"task_id": "t1", "trial_index": 0, "value": "pass"}\n{"task_id": "t1", "value": 1}\n')
    assert f"{path}:2: trial_index: required field is missing" in bad(
        assay_process("label", "r1", "--import", str(path), store=db)
    )
    assert "has no labels to calibrate against" in bad(assay_process("calibrate", "r1", store=db))
    assert isinstance(assay("calibrate", "nope", store=db).exception, RunNotFound)


def test_judge_pairwise_writes_battles_that_rank_reads(tmp_path: Path) -> None:
    db = tmp_path / "assay.db"
    st = Store(db)
    keys = [(f"t{i}", 0) for i in range(5)]
    store_run(st, "a", "python:alpha", {k: "GOOD" if k[0] != "t4" else "meh" for k in keys})
    store_run(st, "b", "python:beta", {k: "meh" if k[0] != "t4" else "GOOD" for k in keys})
    battles = tmp_path / "battles.jsonl"
    with FakeLLMServer(prefers("GOOD")) as srv:
        proc = assay(
            "judge-pairwise", "a", "b", "--judge", "openai:pj", "-m", f"base_url={srv.openai_base_url}",
            "-m", "api_key=x", "--out", str(battles), "--json", store=db,
        )  # fmt: skip
        summary = json.loads(ok(proc))
    assert summary["battles"] == 5 and summary["wins_a"] == 4 and summary["wins_b"] == 1
    assert summary["position_bias_rate"] == 0.0 and summary["needs_review"] == 0
    ranked = json.loads(ok(assay("rank", str(battles), "--json", store=db)))
    assert [m["model"] for m in ranked["models"]] == ["python:alpha", "python:beta"]


def test_review_queue_serves_only_disputed_and_unknown_verdicts(tmp_path: Path) -> None:
    from assay.core.results import GradeResult
    from assay.graders.calibration import needs_review
    from assay.store import schema

    db = tmp_path / "assay.db"
    store = Store(db)
    store_run(store, "q", "python:a", {("t1", 0): "one", ("t2", 0): "two", ("t3", 0): "three"})
    flags = {"t1": (True, False), "t2": (None, False), "t3": (True, True)}  # passed, needs_review
    from assay.store.codec import grade_row

    with store.engine.begin() as conn:
        for task_id, (passed, review) in flags.items():
            grade = GradeResult("explanation", "judge", passed, reason="r", needs_review=review, gating=False)
            conn.execute(
                schema.grades.insert(),
                {"run_id": "q", "task_id": task_id, "trial_index": 0, "position": 0, **grade_row(grade)},
            )
    queue = sorted(r.task_id for r in store.load_results("q") if needs_review(r))
    assert queue == ["t2", "t3"]  # unknown verdict, and a disputed one
    proc = assay(
        "label", "q", "--review", "--labeller", "ana", "--overall-only", store=db, stdin="p\n\nf\n\n"
    )
    assert proc.returncode == 0 and "saved 2 label(s)" in proc.stderr, proc.stderr
    labelled = [json.loads(line) for line in _export(db, tmp_path)]
    assert sorted(x["task_id"] for x in labelled) == ["t2", "t3"]
    again = assay("label", "q", "--review", "--labeller", "ana", store=db, stdin="")
    assert again.returncode == 0 and "saved 0 label(s)" in again.stderr  # labelled: not asked again


def _export(db: Path, tmp_path: Path) -> list[str]:
    out = tmp_path / "labels.jsonl"
    ok(assay("label", "q", "--export", str(out), store=db))
    return out.read_text().splitlines()
