"""Looks at holdout tasks through the viewer (over real HTTP on 127.0.0.1) are logged in
the store's holdout log as the command line's looks are: every page and API request that
shows a holdout task, with how many it showed; requests that show none log nothing."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import assay
from assay.server import create_app
from assay.store import Store
from assay.store.holdout import holdout_log
from tests.server.support import AGENT, serving
from tests.server.test_server import get
from tests.support.cli import assay_main

SUITE = """\
name: vault
domain: toy
defaults: {trials: 2}
tasks:
  - {id: dep, template: deposit, instances: 2}
  - {id: hold, template: deposit, instances: 2, split: holdout}
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    tmp = tmp_path_factory.mktemp("holdout-view")
    (tmp / "suite").mkdir()
    (tmp / "suite" / "suite.yaml").write_text(SUITE)
    st = Store(tmp / "h.db")

    def runs() -> None:
        suite = str(tmp / "suite")
        assay.run(suite, agent=AGENT, seed=1, store=st, run_id="default")
        assay.run(suite, agent=AGENT, seed=1, store=st, run_id="all", split="all")
        assay.run(
            suite, agent=AGENT, seed=1, store=st, run_id="all2", split="all", params={"skip_confirm": 1.0}
        )

    with ThreadPoolExecutor(1) as pool:  # assay.run starts its own event loop
        pool.submit(runs).result()
    return st


@pytest.fixture(scope="module")
def url(store: Store) -> Iterator[str]:
    with serving(create_app(store)) as base:
        yield base


Entry = tuple[str, str, int]


def looks(store: Store, url: str) -> Callable[[str], tuple[int, str, list[Entry]]]:
    """GET a path; its status, body and the holdout-log entries it added."""

    def fetch(path: str) -> tuple[int, str, list[Entry]]:
        before = len(holdout_log(store))
        status, body = get(url + path)
        added = [(e["action"], e["run_id"], e["tasks"]) for e in holdout_log(store)[before:]]
        return status, body, added

    return fetch


def test_the_viewer_logs_every_look_at_holdout_tasks(store: Store, url: str, tmp_path: Path) -> None:
    holdout = sorted(t.task_id for t in store.load_tasks("all") if t.split == "holdout")
    assert len(holdout) == 2 and not any(t.split == "holdout" for t in store.load_tasks("default"))
    fetch = looks(store, url)
    h = urllib.parse.quote(holdout[0])
    # pages and API requests that show no holdout task: nothing logged
    for path in (
        "/",
        "/api/runs",
        "/runs/default",
        "/api/runs/default/summary",
        "/api/runs/all/status",
        "/runs/all/tasks/dep-1",
        "/api/runs/all/tasks?split=regression",
        "/api/runs/all/trials?task_id=dep-1",
    ):
        status, body, added = fetch(path)
        assert status == 200 and added == [], (path, added)
        assert 'id="holdout-note"' not in body
    # the run page, its figures and the JSON that holds every task: all its holdout tasks
    status, body, added = fetch("/runs/all")
    assert status == 200 and added == [("view", "all", 2)]
    assert 'id="holdout-note"' in body and "2 holdout task(s)" in body
    assert fetch("/runs/all/overview")[2] == [("view", "all", 2)]
    assert fetch("/api/runs/all/summary")[2] == [("view-api", "all", 2)]
    # tables: the holdout tasks among the rows returned
    status, body, added = fetch("/api/runs/all/tasks?split=holdout")
    assert added == [("view-api", "all", 2)] and {r["task_id"] for r in json.loads(body)["rows"]} == set(
        holdout
    )
    assert fetch("/api/runs/all/tasks?limit=50")[2] == [("view-api", "all", 2)]
    assert fetch(f"/api/runs/all/trials?task_id={h}")[2] == [("view-api", "all", 1)]
    # one holdout task's page
    status, body, added = fetch(f"/runs/all/tasks/{h}")
    assert status == 200 and added == [("view", "all", 1)] and 'id="holdout-note"' in body
    # comparison: both runs, then the rows and one task side by side
    status, body, added = fetch("/compare?a=all&b=all2")
    assert status == 200 and added == [("view", "all", 2), ("view", "all2", 2)]
    assert fetch(f"/api/compare/tasks?a=all&b=all2&q={h}")[2] == [
        ("view-api", "all", 1),
        ("view-api", "all2", 1),
    ]
    assert fetch("/api/compare/tasks?a=all&b=all2&q=dep-1")[2] == []
    status, body, added = fetch(f"/compare/task?a=all&b=all2&task={h}")
    assert status == 200 and added == [("view", "all", 1), ("view", "all2", 1)]
    # rankings from runs: the holdout tasks both holdout runs share decide battles
    status, body, added = fetch("/rank")
    assert status == 200 and sorted(added) == [("view", "all", 2), ("view", "all2", 2)]
    # badcases of a run that held holdout tasks
    out = assay_main("badcase", "from-run", "all2", "--store", str(store.path), "--json")
    assert out.code == 0, out.stderr
    cases = json.loads(out.stdout)["proposed"]
    held = [
        json.loads(
            assay_main("badcase", "show", c["badcase_id"], "--store", str(store.path), "--json").stdout
        )
        for c in cases
    ]
    in_holdout = {t for c in held for t in c["task_ids"] if t in holdout}
    assert in_holdout, "the flaky run fails holdout tasks too"
    assert fetch("/badcases")[2] == [("view", "all2", len(in_holdout))]
    assert fetch("/api/badcases")[2] == [("view-api", "all2", len(in_holdout))]
    one = next(c for c in held if set(c["task_ids"]) & in_holdout)
    assert fetch(f"/badcases/{one['badcase_id']}")[2] == [
        ("view", "all2", len(set(one["task_ids"]) & in_holdout))
    ]
    assert fetch(f"/api/badcases/{one['badcase_id']}")[2][0][:2] == ("view-api", "all2")
    # the labelling screen shows one judged trial: a holdout one is a look
    _judge(store, "all", holdout[0])
    _judge(store, "default", "dep-1")
    status, body, added = fetch("/label/default?grader=explanation&labeller=ana")
    assert status == 200 and "dep-1" in body and added == []
    status, body, added = fetch("/label/all?grader=explanation&labeller=ana")
    assert status == 200 and holdout[0] in body and added == [("view", "all", 1)]
    # every entry names the run's suite version and configuration, and suite status counts them
    entries = [e for e in holdout_log(store) if e["action"].startswith("view")]
    configs = {r: store.get_run(r).config_hash for r in ("all", "all2")}
    assert all(e["config_hash"] == configs[e["run_id"]] and e["suite_name"] == "vault" for e in entries)
    status_doc = _suite_status(store, tmp_path)
    by_action = status_doc["holdout"]["by_action"]
    assert by_action["view"] == sum(1 for e in entries if e["action"] == "view")
    assert by_action["view-api"] == sum(1 for e in entries if e["action"] == "view-api")


def _suite_status(store: Store, tmp_path: Path) -> Any:
    out = assay_main(
        "suite", "status", store.get_run("all").suite_source, "--store", str(store.path), "--json"
    )
    assert out.code == 0, out.stderr
    return json.loads(out.stdout)


def _judge(store: Store, run_id: str, task_id: str) -> None:
    """A judge's verdict on trial 0 of the task (what the labelling screen lists)."""
    from assay.core.results import GradeResult
    from assay.store import schema
    from assay.store.codec import grade_row

    grade = GradeResult("explanation", "judge", True, reason="clear", gating=False)
    with store.engine.begin() as conn:
        conn.execute(
            schema.grades.insert(),
            {"run_id": run_id, "task_id": task_id, "trial_index": 0, "position": 99, **grade_row(grade)},
        )
