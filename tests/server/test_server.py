"""The viewer over real HTTP on 127.0.0.1: pages, JSON tables, errors, live runs, scale."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from assay.server import Page, create_app
from assay.store import Store
from tests.server.support import serving, toy_runs
from tests.server.synth import synth_run
from tests.support.cli import assay_main

VOTES = Path(__file__).parents[2] / "examples" / "votes.jsonl"


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.status, resp.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8")


def get_json(url: str) -> Any:
    status, body = get(url)
    assert status == 200, body
    return json.loads(body)


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Store:
    tmp = tmp_path_factory.mktemp("toy")
    store = Store(tmp / "toy.db")
    toy_runs(tmp, store)
    return store


@pytest.fixture(scope="module")
def url(toy: Store) -> Any:
    extra = APIRouter()

    @extra.get("/extra", response_class=HTMLResponse)
    def _extra() -> str:
        return "<p>a screen of a plugin</p>"

    app = create_app(toy, votes=VOTES, pages=[Page("Extra", "/extra", extra)])
    with serving(app) as base:
        yield base


def test_runs_list_and_run_page(url: str) -> None:
    status, html = get(url + "/")
    assert status == 200
    assert 'href="/runs/careful"' in html and 'href="/runs/flaky"' in html
    assert 'href="/label"' in html and 'href="/extra"' in html  # registered screens are in the navigation
    status, html = get(url + "/runs/flaky")
    assert status == 200
    assert "success rate" in html and "95% CI" in html and "pass^3" in html
    assert "<svg" in html and "Capability × difficulty" in html
    assert 'id="task-table"' in html and 'id="trial-table"' in html
    assert get(url + "/extra") == (200, "<p>a screen of a plugin</p>")
    status, html = get(url + "/label")
    assert status == 200 and "No run in this store has judge verdicts yet" in html


def test_one_interval_everywhere(url: str, toy: Store, tmp_path: Path) -> None:
    """The console, JSON, HTML report and viewer show the same interval for the same
    figure, and a 100% rate never gets a zero-width interval."""
    for run_id in ("careful", "flaky"):
        shown = assay_main("show", run_id, "--json", "--store", toy.url)
        low, high = json.loads(shown.stdout)["overall"]["success_rate_ci"]
        assert 0 <= low < high <= 1
        console = assay_main("show", run_id, "--store", toy.url).stdout
        assert f"[{100 * low:.1f}, {100 * high:.1f}]" in console
        report = tmp_path / f"{run_id}.html"
        assert assay_main("report", run_id, "--html", str(report), "--store", toy.url).code == 0
        for html in (report.read_text(), get(url + f"/runs/{run_id}")[1]):
            assert f"95% CI {100 * low:.1f}% – {100 * high:.1f}%" in html


def test_task_and_trial_tables_page_filter_and_sort(url: str) -> None:
    page = get_json(url + "/api/runs/flaky/tasks?limit=2&sort=success_rate")
    assert page["total"] == 6 and len(page["rows"]) == 2
    rates = [r["success_rate"] for r in get_json(url + "/api/runs/flaky/tasks?sort=success_rate")["rows"]]
    assert rates == sorted(rates)
    edge = get_json(url + "/api/runs/flaky/tasks?stratum=edge")
    assert [r["task_id"] for r in edge["rows"]] == ["dep-edge"]
    hard = get_json(url + "/api/runs/flaky/tasks?tags=hard")
    assert [r["task_id"] for r in hard["rows"]] == ["dep-hard"]
    assert get_json(url + "/api/runs/flaky/tasks?q=DEP-H")["total"] == 1
    failed = get_json(url + "/api/runs/flaky/trials?outcome=fail&limit=500")
    assert failed["total"] > 0 and all(r["reward"] == 0 for r in failed["rows"])
    assert all(r["outcome"] == "pass" for r in get_json(url + "/api/runs/careful/trials?limit=500")["rows"])
    status = get_json(url + "/api/runs/flaky/status")
    assert status == {"run_id": "flaky", "status": "finished", "completed": 18, "planned": 18}


def test_task_page_shows_transcript_with_verdicts(url: str) -> None:
    failed = get_json(url + "/api/runs/flaky/trials?outcome=fail&limit=1")["rows"][0]
    status, html = get(f"{url}/runs/flaky/tasks/{failed['task_id']}")
    assert status == 200
    assert f"trial {failed['trial']}" in html
    assert "tool call" in html and "deposit(" in html
    assert "Verdicts" in html and "State diff" in html and "Span timeline" in html
    assert 'class="verdict v-fail"' in html
    status, html = get(f"{url}/runs/flaky/tasks/{failed['task_id']}?trial=99")
    assert status == 400 and "has no trial 99" in html


def test_compare_pages(url: str) -> None:
    status, html = get(url + "/compare?a=careful&b=flaky")
    assert status == 200
    assert "Decision" in html and "tasks solved" in html and "McNemar" in html
    rows = get_json(url + "/api/compare/tasks?a=careful&b=flaky&limit=100")["rows"]
    changes = [r["change"] for r in rows]
    order = {"regressed": 0, "improved": 1, "changed": 2, "same": 3}
    assert changes == sorted(changes, key=order.__getitem__)  # flipped first
    task = rows[0]["task_id"]
    status, html = get(f"{url}/compare/task?a=careful&b=flaky&task={task}")
    assert status == 200 and 'id="side-by-side"' in html and "turn 1" in html
    assert get(url + "/compare?a=careful&b=careful")[0] == 400
    assert "<select" in get(url + "/compare")[1]


def test_rank_page_from_votes(url: str) -> None:
    status, html = get(url + "/rank")
    assert status == 200
    assert "cirrus-large-0715" in html and 'id="race-data"' in html
    data = json.loads(html.split('id="race-data">')[1].split("</script>")[0])
    assert len(data["frames"]) == 9 and data["frames"][-1]["n_battles"] == 1213
    status, html = get(url + "/rank?method=elo&period=month")
    assert status == 200 and "online Elo" in html


def test_errors_are_pages_not_tracebacks(url: str) -> None:
    status, html = get(url + "/runs/nope")
    assert status == 404 and "no run &#39;nope&#39;" in html and "Traceback" not in html
    status, body = get(url + "/api/runs/nope/tasks")
    assert status == 404 and "error" in json.loads(body)
    assert get(url + "/static/..%2F..%2Fpyproject.toml")[0] == 404
    assert get(url + "/static/table.js")[0] == 200


def test_live_run_updates_between_requests(tmp_path: Path) -> None:
    store = Store(tmp_path / "live.db")
    _, rest = synth_run(store, "live", tasks=5, k=2, status="running", write_first=4)
    with serving(create_app(store)) as base:
        assert get_json(base + "/api/runs/live/status") == {
            "run_id": "live",
            "status": "running",
            "completed": 4,
            "planned": 10,
        }
        assert get_json(base + "/api/runs/live/summary")["summary"]["overall"]["trials"] == 4
        assert "live" in get(base + "/runs/live")[1]
        for result in rest:  # the run goes on while the page is open
            store.write_trial(result)
        store.set_status("live", "finished")
        assert get_json(base + "/api/runs/live/status")["completed"] == 10
        assert get_json(base + "/api/runs/live/summary")["summary"]["overall"]["trials"] == 10
        fragment = get(base + "/runs/live/overview")[1]
        assert fragment.startswith('<div id="overview" data-version="finished/10"')


@pytest.mark.slow
def test_ten_thousand_trials_stay_responsive(tmp_path: Path) -> None:
    """A run of 10,000 trials: the run page renders once (cold) and then from cache; tables
    arrive a page at a time. The timings are printed for the record."""
    store = Store(tmp_path / "big.db")
    synth_run(store, "big", tasks=2500, k=4)
    with serving(create_app(store)) as base:
        t0 = time.perf_counter()
        status, html = get(base + "/runs/big")
        cold = time.perf_counter() - t0
        assert status == 200 and "10000/10000" in html
        assert len(html) < 400_000  # rows are not in the page; they come as JSON pages
        t0 = time.perf_counter()
        get(base + "/runs/big")
        warm = time.perf_counter() - t0
        t0 = time.perf_counter()
        rows = get_json(base + "/api/runs/big/trials?offset=5000&limit=50&sort=latency_s&desc=1")
        table = time.perf_counter() - t0
        assert rows["total"] == 10000 and len(rows["rows"]) == 50
        print(
            f"\n10,000 trials: run page cold {cold:.2f} s, warm {warm:.3f} s, a page of trials {table:.3f} s"
        )
        assert cold < 20 and warm < 2 and table < 2


def test_label_screen_serves_the_review_queue(tmp_path: Path) -> None:
    from assay.core.results import GradeResult
    from assay.store import schema
    from assay.store.codec import grade_row
    from tests.graders.test_pairwise import store_run

    store = Store(tmp_path / "q.db")
    store_run(store, "q", "python:a", {("t1", 0): "one", ("t2", 0): "two", ("t3", 0): "three"})
    with store.engine.begin() as conn:
        for task_id, passed, review in (("t1", True, False), ("t2", None, False), ("t3", True, True)):
            grade = GradeResult("explanation", "judge", passed, reason="r", needs_review=review, gating=False)
            conn.execute(
                schema.grades.insert(),
                {"run_id": "q", "task_id": task_id, "trial_index": 0, "position": 0, **grade_row(grade)},
            )
    with serving(create_app(store)) as base:
        status, html = get(base + "/label")
        assert status == 200 and "review queue" in html and "review=1" in html
        status, page = get(base + "/label/q?grader=explanation&labeller=ana&review=1")
        assert status == 200 and "t2" in page and "t1" not in page
        status, every = get(base + "/label/q?grader=explanation&labeller=ana")
        assert status == 200 and "t1" in every
