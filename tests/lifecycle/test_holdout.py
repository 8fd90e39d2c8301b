"""Holdout discipline: holdout tasks stay out of default runs, reports and comparisons;
every look at them is logged; ``assay suite status`` counts the looks and warns when a
configuration was selected after looking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import assay
from assay.core.task import Task
from assay.runner.plan import task_filter
from assay.store import Store
from assay.store.holdout import holdout_log
from tests.support.cli import assay_main


def cli(db: Path, *args: str, code: int = 0) -> tuple[str, str]:
    result = assay_main(*args, "--store", str(db))
    assert result.code == code, f"exit {result.code}\n{result.stdout}\n{result.stderr}"
    return result.stdout, result.err


def test_the_filter_keeps_holdout_out_unless_asked() -> None:
    tasks = [Task(id="a"), Task(id="h-1", split="holdout"), Task(id="c", split="capability")]
    assert [t.id for t in tasks if task_filter()(t)] == ["a", "c"]
    assert [t.id for t in tasks if task_filter(split="holdout")(t)] == ["h-1"]
    assert [t.id for t in tasks if task_filter(task_ids=["h"])(t)] == ["h-1"]  # named: asked for
    assert [t.id for t in tasks if task_filter(split="regression")(t)] == ["a"]


def test_holdout_runs_and_looks_are_logged(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    default = assay.run("retail", agent="builtin:retail-careful", trials=1, store=Store(db), run_id="default")
    assert all(t.split != "holdout" for t in default.tasks) and len(default.tasks) == 52
    assert "holdout" not in default.summary().to_dict()["by_split"]
    assert holdout_log(Store(db)) == []
    _, err = cli(
        db, "run", "retail", "-a", "builtin:retail-flaky", "-k", "2", "--split", "holdout", "--run-id", "h1"
    )
    assert "running the holdout split: this look is logged" in err
    _, err = cli(db, "show", "h1")
    assert "run h1 holds 5 holdout task(s); this look is logged" in err
    cli(db, "show", "default")  # no holdout task: nothing logged
    cli(
        db, "run", "retail", "-a", "builtin:retail-careful", "-k", "1", "--split", "holdout", "--run-id", "h2"
    )
    cli(db, "compare", "h1", "h2", "--json")
    log = holdout_log(Store(db), "retail")
    assert [(e["action"], e["run_id"], e["tasks"]) for e in log] == [
        ("run", "h1", 5),
        ("show", "h1", 5),
        ("run", "h2", 5),
        ("compare", "h1", 5),
        ("compare", "h2", 5),
    ]
    status = json.loads(cli(db, "suite", "status", "retail", "--json")[0])
    assert status["schema"] == "assay.suite-status/1" and status["holdout_tasks"] == 5
    assert status["holdout"]["looks"] == 5 and status["holdout"]["by_action"] == {
        "compare": 2,
        "run": 2,
        "show": 1,
    }
    assert len(status["holdout"]["configurations"]) == 2
    warnings = status["warnings"]
    assert any("2 configurations were evaluated on the holdout" in w for w in warnings)
    # careful's configuration existed (run "default") before the holdout was looked at: not "selected after"
    assert not any("was first run on" in w for w in warnings)
    cli(
        db,
        "run",
        "retail",
        "-a",
        "builtin:retail-careful",
        "-p",
        "tuned=1",
        "-k",
        "1",
        "--split",
        "holdout",
        "--run-id",
        "h3",
    )
    warnings = json.loads(cli(db, "suite", "status", "retail", "--json")[0])["warnings"]
    selected = [w for w in warnings if "was first run on" in w]
    assert len(selected) == 1 and "selected or tuned on what the holdout showed" in selected[0]
    _, err = cli(db, "suite", "status", "retail")
    assert "warning: configuration" in err


def test_a_deleted_run_keeps_its_holdout_looks(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    assay.run(
        "retail", agent="builtin:retail-careful", trials=1, store=Store(db), run_id="h", split="holdout"
    )
    Store(db).delete_run("h")
    assert [e["run_id"] for e in holdout_log(Store(db))] == ["h"]


@pytest.mark.parametrize("split", ["regression", "capability"])
def test_other_splits_are_not_logged(tmp_path: Path, split: str) -> None:
    db = tmp_path / "s.db"
    assay.run("retail", agent="builtin:retail-careful", trials=1, store=Store(db), split=split)
    assert holdout_log(Store(db)) == []
