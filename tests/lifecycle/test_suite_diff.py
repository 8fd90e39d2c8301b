"""``assay suite diff`` names exactly the tasks removed and changed between two suite
versions: the changed task with the one field that differs, and every hash equal to the
task hash runs of each version store with their trials."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import assay
from assay.domains.retail import SUITE_DIR
from assay.store import Store
from tests.support.cli import assay_main

REMOVED = "static-cancel-processing"
CHANGED = "static-refund-headphones"
OLD_GOAL = "I'd like a refund for order #W0012345. The Wireless Headphones stopped working."
NEW_GOAL = "I'd like a refund for order #W0012345. The Wireless Headphones stopped charging."


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The retail suite (v1) and a v2 with one task removed and one task's goal changed."""
    root = tmp_path_factory.mktemp("diff")
    old, new = root / "v1", root / "v2"
    for folder in (old, new):
        shutil.copytree(SUITE_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    static = new / "tasks" / "static.yaml"
    text = static.read_text()
    assert text.count(OLD_GOAL) == 1
    text = text.replace(OLD_GOAL, NEW_GOAL)
    cut = text.index(f"  - id: {REMOVED}")
    nxt = text.find("\n  - id: ", cut + 1)
    static.write_text(text[:cut].rstrip() + "\n" + (text[nxt:] if nxt >= 0 else ""))
    suite = new / "suite.yaml"
    suite.write_text(suite.read_text().replace("\nversion: 1\n", "\nversion: 2\n", 1))
    return old, new


def _hashes(suite: Path, db: Path, run_id: str, tasks: list[str]) -> dict[str, str]:
    """The task hash each trial of a run on ``suite`` stores, by task."""
    run = assay.run(
        str(suite), agent="builtin:retail-careful", trials=1, task_ids=tasks, store=Store(db), run_id=run_id
    )
    return {r.task_id: r.task_hash for r in run.results}


def test_diff_names_exactly_the_removed_and_the_changed_task(
    versions: tuple[Path, Path], tmp_path: Path
) -> None:
    old, new = versions
    out = assay_main("suite", "diff", str(old), str(new), "--json")
    assert out.code == 0, out.stderr
    doc = json.loads(out.stdout)
    db = tmp_path / "d.db"
    before = _hashes(old, db, "v1", [REMOVED, CHANGED])
    after = _hashes(new, db, "v2", [CHANGED])
    assert before[CHANGED] != after[CHANGED]
    assert doc["schema"] == "assay.suite-diff/1"
    assert (doc["old"]["version"], doc["new"]["version"]) == ("1", "2")
    assert doc["added"] == []
    assert doc["removed"] == [{"id": REMOVED, "hash": before[REMOVED], "split": "regression"}]
    assert doc["changed"] == [
        {"id": CHANGED, "old_hash": before[CHANGED], "new_hash": after[CHANGED], "fields": ["user.goal"]}
    ]
    assert doc["unchanged"] == 55  # 57 tasks in v1, 56 in v2
    text = assay_main("suite", "diff", str(old), str(new))
    assert text.code == 0, text.stderr
    lines = [" ".join(line.split()) for line in text.stdout.splitlines()]
    assert lines[0].startswith(f"retail v1 ({doc['old']['hash']}) → retail v2 ({doc['new']['hash']})")
    assert lines[1:] == [
        f"- {REMOVED} {before[REMOVED]} (regression)",
        f"~ {CHANGED} {before[CHANGED]} → {after[CHANGED]}: user.goal",
        "0 added, 1 removed, 1 changed, 55 unchanged",
    ]
    # the other way round the removed task is added, the change goes back
    back = json.loads(assay_main("suite", "diff", str(new), str(old), "--json").stdout)
    assert [t["id"] for t in back["added"]] == [REMOVED] and back["removed"] == []
    assert back["changed"] == [
        {"id": CHANGED, "old_hash": after[CHANGED], "new_hash": before[CHANGED], "fields": ["user.goal"]}
    ]
