"""Bad input to the viewer is a 400 (404 for what does not exist) with a one-sentence
message, never a 500: the labelling form (the one write), the probe lists' ``limit``, the
trial indexes of the comparison's task page; and ``/rank`` reads only what it ranks."""

from __future__ import annotations

import html
import importlib.util
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi import FastAPI
from fastapi.testclient import TestClient

import assay
from assay.server import create_app, rank_page
from assay.server.label_page import MAX_COMMENT, MAX_LABELLER
from assay.server.probe_page import MAX_LIMIT
from assay.store import Store, schema
from assay.store.labels import LabelStore
from assay.store.probes import write_probe
from tests.server.support import AGENT, SUITE, toy_runs

ROOT = Path(__file__).parents[2]
HUGE = "99999999999999999999999"  # more than SQLite's 64-bit integers hold


def client(app: FastAPI) -> TestClient:
    """The app as a same-origin browser on 127.0.0.1 sees it; server errors are answers
    (500), not exceptions, as over HTTP."""
    return TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False)


def message(body: str) -> str:
    return html.unescape(body)


# --- the labelling form ----------------------------------------------------------------

RUN = "calibration-demo"  # 40 trials graded by judge grader "explanation" (levels 4..1)
TASK = "refund-window-1"


@pytest.fixture(scope="module")
def labelling(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Store]]:
    spec = importlib.util.spec_from_file_location(
        "make_run", ROOT / "examples" / "calibration" / "make_run.py"
    )
    assert spec is not None and spec.loader is not None
    make_run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_run)
    store = Store(tmp_path_factory.mktemp("labels") / "labels.db")
    make_run.build(store)
    app = create_app(store)
    with client(app) as c:
        c.headers.update({"Origin": "http://127.0.0.1"})
        yield c, store


def post(c: TestClient, run_id: str = RUN, **fields: str) -> Any:
    form = {
        "grader": "explanation",
        "labeller": "ana",
        "task_id": TASK,
        "trial_index": "0",
        "verdict": "pass",
        "csrf_token": c.app.state.csrf_token,  # type: ignore[attr-defined]
        **fields,
    }
    return c.post(f"/label/{run_id}", data=form, follow_redirects=False)


def stored(store: Store) -> int:
    return len(LabelStore(store).list(RUN))


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"verdict": "banana"}, "verdict must be pass or fail, not 'banana'"),
        ({"verdict": "3"}, "verdict must be pass or fail, not '3'"),
        ({"dim:x": "y"}, "grader 'explanation' has no dimension 'x' to label"),
        ({"dim:tone": "9"}, "dimension 'tone' takes 4, 3, 2, 1 or skip, not '9'"),
        ({"dim:tone": "banana"}, "dimension 'tone' takes 4, 3, 2, 1 or skip, not 'banana'"),
        ({"dim:invented_facts": "3"}, "dimension 'invented_facts' takes pass, fail or skip, not '3'"),
        ({"review": "abc"}, "review must be 0 or 1, not 'abc'"),
        ({"grader": "nope"}, f"grader 'nope' gave no verdict on trial 0 of task '{TASK}' in run {RUN}"),
        ({"trial_index": HUGE}, f"run {RUN} has no trial {HUGE} of task '{TASK}' to label"),
        ({"trial_index": "-1"}, f"run {RUN} has no trial -1 of task '{TASK}' to label"),
        ({"task_id": "nope"}, f"run {RUN} has no trial 0 of task 'nope' to label"),
        ({"labeller": "a" * 101}, "a labeller name has at most 100 characters, not 101"),
        ({"comment": "c" * 10_001}, "a comment has at most 10000 characters, not 10001"),
        ({"labeller": "  "}, "give your name as labeller: labels are per person"),
    ],
)
def test_a_bad_label_form_is_a_400_and_stores_nothing(
    labelling: tuple[TestClient, Store], fields: dict[str, str], said: str
) -> None:
    c, store = labelling
    before = stored(store)
    resp = post(c, **fields)
    assert resp.status_code == 400, (resp.status_code, resp.text[:300])
    assert said in message(resp.text) and "Traceback" not in resp.text
    assert stored(store) == before


def test_a_label_for_a_run_the_store_does_not_have_is_a_404(labelling: tuple[TestClient, Store]) -> None:
    c, store = labelling
    resp = post(c, run_id="nope")
    assert resp.status_code == 404 and "no run 'nope'" in message(resp.text)
    assert LabelStore(store).list("nope") == []


def test_the_bounds_are_the_stores_and_a_good_form_still_saves(labelling: tuple[TestClient, Store]) -> None:
    c, store = labelling
    assert MAX_LABELLER == schema.labels.c.labeller.type.length == 100  # type: ignore[attr-defined]
    assert MAX_COMMENT == 10_000
    name = "b" * MAX_LABELLER
    resp = post(
        c,
        labeller=f" {name} ",
        comment="c" * MAX_COMMENT,
        verdict="FAIL",
        review="1",
        **{"dim:tone": "3", "dim:invented_facts": "pass", "dim:outcome_clarity": "skip"},
    )
    assert resp.status_code == 303, resp.text[:300]
    assert resp.headers["location"] == f"/label/{RUN}?grader=explanation&labeller={name}&saved=1&review=1"
    labels = {lb.dimension: lb for lb in LabelStore(store).list(RUN, labeller=name)}
    assert {d: lb.value for d, lb in labels.items()} == {"": "fail", "tone": "3", "invented_facts": "pass"}
    assert len(labels[""].comment) == MAX_COMMENT


# --- the probe lists' limit ------------------------------------------------------------


@pytest.fixture(scope="module")
def probes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    store = Store(tmp_path_factory.mktemp("probes") / "probes.db")
    for i in range(MAX_LIMIT + 10):
        write_probe(
            store,
            {
                "schema": "assay.probe/1",
                "probe_id": f"p{i:04d}",
                "created_at": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}+00:00",
                "model": f"openai:m{i % 7}",
                "mode": "latency",
                "stopped_by": "requests",
            },
        )
    with client(create_app(store)) as c:
        yield c


@pytest.mark.parametrize("limit", [HUGE, str(10**9), str(MAX_LIMIT + 1)])
def test_a_probe_limit_beyond_the_cap_lists_at_most_the_cap(probes: TestClient, limit: str) -> None:
    resp = probes.get(f"/api/probes?limit={limit}")
    assert resp.status_code == 200, resp.text[:300]
    table = resp.json()
    assert len(table["rows"]) == MAX_LIMIT == 500 and table["total"] == MAX_LIMIT + 10
    page = probes.get(f"/probes?limit={limit}")
    assert page.status_code == 200 and f"{MAX_LIMIT} of {MAX_LIMIT + 10} shown" in page.text


def test_a_probe_limit_below_one_or_not_a_number_is_refused(probes: TestClient) -> None:
    for path in ("/api/probes", "/probes"):
        resp = probes.get(f"{path}?limit=-{HUGE}")
        assert resp.status_code == 400 and f"limit must be at least 1, not -{HUGE}" in message(resp.text)
    # a non-number is refused by the parameter's type, as every integer parameter of the viewer
    # (the task and trial tables' limit included) is
    assert probes.get("/api/probes?limit=abc").status_code == 422
    assert probes.get("/api/probes?limit=7").json()["rows"][0]["probe_id"] == f"p{MAX_LIMIT + 9:04d}"


# --- the comparison's task page: trial indexes ---------------------------------------


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    tmp = tmp_path_factory.mktemp("toy")
    store = Store(tmp / "toy.db")
    toy_runs(tmp, store, k=2)
    with client(create_app(store)) as c:
        yield c


@pytest.mark.parametrize(
    ("query", "said"),
    [
        (f"ta={HUGE}", f"task 'dep-1' of run careful has no trial {HUGE}"),
        (f"tb={HUGE}", f"task 'dep-1' of run flaky has no trial {HUGE}"),
        ("ta=2", "task 'dep-1' of run careful has no trial 2"),
        ("tb=-1", "task 'dep-1' of run flaky has no trial -1"),
    ],
)
def test_a_trial_the_runs_do_not_have_is_a_400_on_the_compare_task_page(
    toy: TestClient, query: str, said: str
) -> None:
    resp = toy.get(f"/compare/task?a=careful&b=flaky&task=dep-1&{query}")
    assert resp.status_code == 400, (resp.status_code, resp.text[:300])
    assert said in message(resp.text) and "Traceback" not in resp.text
    # the task page says the same
    run, trial = (
        ("careful", query.split("=")[1]) if query.startswith("ta") else ("flaky", query.split("=")[1])
    )
    same = toy.get(f"/runs/{run}/tasks/dep-1?trial={trial}")
    assert same.status_code == 400 and said in message(same.text)


def test_the_compare_task_page_still_shows_trials_the_runs_have(toy: TestClient) -> None:
    resp = toy.get("/compare/task?a=careful&b=flaky&task=dep-1&ta=1&tb=0")
    assert resp.status_code == 200, resp.text[:300]


# --- /rank reads rewards, not whole runs ---------------------------------------------------


def _many_runs(tmp: Path, store: Store, n: int) -> list[str]:
    suite = tmp / "suite"
    suite.mkdir(exist_ok=True)
    (suite / "suite.yaml").write_text(SUITE)
    ids = [f"r{i:02d}" for i in range(n)]

    def run_all() -> None:
        for i, run_id in enumerate(ids):
            params = {"skip_confirm": i / n}
            assay.run(str(suite), agent=AGENT, trials=1, seed=3, store=store, run_id=run_id, params=params)

    with ThreadPoolExecutor(1) as pool:
        pool.submit(run_all).result()
    return ids


def test_rank_does_not_load_every_run_of_the_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """More runs than the run cache holds (8): before, every request loaded each run whole
    (report view, trial table) through the cache, evicting each other, and ranked again."""
    store = Store(tmp_path / "rank.db")
    ids = _many_runs(tmp_path, store, 10)
    app = create_app(store)
    loads: list[str] = []
    real_get = app.state.cache.get
    app.state.cache.get = lambda run_id: (loads.append(run_id), real_get(run_id))[1]
    ranked: list[int] = []
    real_rank = rank_page.rank
    monkeypatch.setattr(rank_page, "rank", lambda *a, **k: (ranked.append(1), real_rank(*a, **k))[1])
    rank_page._ranked.cache_clear()
    times = []
    with client(app) as c:
        for _ in range(3):
            t0 = time.perf_counter()
            resp = c.get("/rank")
            times.append(time.perf_counter() - t0)
            assert resp.status_code == 200, resp.text[:300]
            assert all(run_id in resp.text for run_id in ids)
        first = len(ranked)
        assert c.get("/rank?method=elo").status_code == 200
    print(f"\n/rank over {len(ids)} runs: " + ", ".join(f"{t:.3f} s" for t in times))
    assert loads == []  # no run loaded whole for a ranking
    assert 1 <= first <= 2  # ranked once (twice with the prior's retry) for three requests
    assert len(ranked) > first  # another method is another ranking
