"""``assay view --redact``: over a store whose trials carry a key, emails, phones and a
card number (the planted world of tests/report/planted_world.py), every GET route of the
viewer that takes a run, task, trial or badcase is requested, with every value its
parameters can take here. Without a redactor the trial pages show the planted values
(the check can fail); with one, no page and no JSON answer holds any of them, the
figures are the same, and the task page shows the trial as ``assay show --redact`` does."""

from __future__ import annotations

import html as html_lib
import inspect
import itertools
import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("jinja2")

from fastapi import FastAPI

from assay.core.results import GradeResult
from assay.lifecycle.badcase import Badcase
from assay.redact import Redactor, redact_trial
from assay.server import create_app
from assay.store import Store, schema
from assay.store.badcases import write_badcase
from assay.store.codec import grade_row
from tests.report.planted_world import AGENT, CARD, EMAIL, KEY, NEW_PHONE, write_suite
from tests.report.test_redact_report import _leaks
from tests.server.support import serving
from tests.support.cli import assay_main
from tests.support.redaction_eval import strings

TASKS = ("change-phone", "charge-card")
JUDGE = "tone"
BADCASE = "bc-planted"

#: The values each route parameter takes in the walk (None: the parameter left out). A
#: route with a parameter not listed here fails the test: a new page must be walked too.
VALUES: dict[str, list[Any]] = {
    "run_id": ["planted", "again"],
    "task_id": [*TASKS],
    "task": [*TASKS],
    "a": ["planted"],
    "b": ["again"],
    "trial": [None, 0, 1],
    "ta": [None, 0, 1],
    "tb": [None, 1],
    "grader": [JUDGE],
    "labeller": ["ana"],
    "review": [None],
    "badcase_id": [BADCASE],
    "probe_id": ["none"],  # probes are not trials (none stored here: the 404 page)
}


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs ``planted`` and ``again`` (2 tasks x 2 trials each, every trial failed), a
    judge's verdicts on the first (for the labelling screen) and a badcase written before
    redaction (its phenomenon and evidence hold planted values)."""
    tmp = tmp_path_factory.mktemp("planted")
    suite = write_suite(tmp / "planted")
    store = tmp / "p.db"
    for run_id in ("planted", "again"):
        out = assay_main(
            "run", str(suite), "--agent", AGENT, "-k", "2", "--run-id", run_id, "--store", str(store)
        )
        assert out.code == 0, out.stderr
    st = Store(store)
    with st.engine.begin() as conn:
        for task_id, index in itertools.product(TASKS, (0, 1)):
            grade = GradeResult(JUDGE, "judge", False, reason=f"rude to {EMAIL}", gating=False)
            conn.execute(
                schema.grades.insert(),
                {
                    "run_id": "planted",
                    "task_id": task_id,
                    "trial_index": index,
                    "position": 9,
                    **grade_row(grade),
                },
            )
    case = Badcase(
        badcase_id=BADCASE,
        created_at="2026-01-01T00:00:00Z",
        updated_at="2026-01-01T00:00:00Z",
        source={
            "kind": "trial",
            "run_id": "planted",
            "trials": [{"run_id": "planted", "task_id": TASKS[0], "trial_index": 0}],
        },
        task_ids=[TASKS[0]],
        evidence={"transcript": [{"role": "user", "content": f"I'm {EMAIL}, phone {NEW_PHONE}"}]},
        phenomenon=f"agent repeats the card {CARD} and the key {KEY}",
        links=[
            {"run_id": "again", "kind": "reproduces", "at": "2026-01-02T00:00:00Z", "note": f"ask {EMAIL}"}
        ],
    )
    write_badcase(st, case.document())
    return store


def _urls(app: FastAPI) -> list[tuple[str, str]]:
    """(route path, URL) of every GET request of the walk: each route of the app (as its
    OpenAPI schema lists them: every router, pages included) with every combination of
    the values of its run, task, trial and badcase parameters."""
    out: list[tuple[str, str]] = []
    for route, methods in app.openapi()["paths"].items():
        if "get" not in methods:
            continue
        params = methods["get"].get("parameters", [])
        names = [p["name"] for p in params if p["in"] == "path" or p["name"] in VALUES or p.get("required")]
        missing = [n for n in names if n not in VALUES]
        assert not missing, f"{route}: give the walk values for {missing}"
        in_path = {p["name"] for p in params if p["in"] == "path"}
        for combo in itertools.product(*(VALUES[n] for n in names)):
            chosen = dict(zip(names, combo, strict=True))
            path = route
            for n in in_path:
                path = path.replace("{" + n + "}", urllib.parse.quote(str(chosen[n]), safe=""))
            q = {n: v for n, v in chosen.items() if n not in in_path and v is not None}
            out.append((route, path + ("?" + urllib.parse.urlencode(q) if q else "")))
    return out


def _get(url: str) -> tuple[int, dict[str, str], str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            return resp.status, dict(resp.headers), resp.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode("utf-8")


def _walk(store: Path, redactor: Redactor | None) -> dict[str, tuple[str, int, dict[str, str], str]]:
    """URL -> (route, status, headers, body) of every request of the walk."""
    app = create_app(Store(store), redactor=redactor)
    out = {}
    with serving(app) as base:
        for route, url in _urls(app):
            status, headers, body = _get(base + url)
            assert status < 500, (url, body)
            out[url] = (route, status, headers, body)
    return out


def _texts(body: str) -> list[str]:
    """The body, and its JSON strings unescaped when it is JSON."""
    try:
        data = json.loads(body)
    except ValueError:
        return [body, html_lib.unescape(body)]
    return [body, *strings(data)]


@pytest.fixture(scope="module")
def walks(planted: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    return _walk(planted, None), _walk(planted, Redactor())


def test_every_route_of_a_redacted_viewer_is_free_of_the_planted_values(
    walks: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    plain, redacted = walks
    assert plain.keys() == redacted.keys() and len(plain) > 40
    leaking = {route for route, _, _, body in plain.values() if _leaks(_texts(body))}
    # without --redact these show the trials' content as it is: the check can fail
    assert leaking >= {
        "/runs/{run_id}/tasks/{task_id}",
        "/compare/task",
        "/label/{run_id}",
        "/badcases",
        "/badcases/{badcase_id}",
        "/api/badcases",
        "/api/badcases/{badcase_id}",
    }, leaking
    for url, (_, status, headers, body) in redacted.items():
        assert _leaks(_texts(body)) == [], url
        assert status == plain[url][1], url
        assert headers.get("x-assay-redacted", headers.get("X-Assay-Redacted")) == "1", url
        if headers.get("content-type", "").startswith("text/html") and "<main>" in body:
            assert 'id="redacted-view"' in body, url
            assert 'id="redacted-view"' not in plain[url][3], url
    # pages that show a trial show it with pseudonyms, not blanks
    task_page = redacted["/runs/planted/tasks/change-phone?trial=0"][3]
    assert "&lt;EMAIL_1&gt;" in task_page and "&lt;PHONE_" in task_page
    label = redacted["/label/planted?grader=tone&labeller=ana"][3]
    assert "&lt;EMAIL_1&gt;" in label


def test_a_redacted_viewer_shows_the_same_figures(walks: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """The JSON of runs, summaries, task and trial tables and comparisons is the same:
    rewards, verdicts, terminations and categories are not touched."""
    plain, redacted = walks
    figures = [url for url in plain if url.startswith(("/api/runs", "/api/compare"))]
    assert len(figures) >= 8
    for url in figures:
        assert json.loads(redacted[url][3]) == json.loads(plain[url][3]), url
    for task in TASKS:
        rows = json.loads(redacted[f"/api/runs/planted/trials?task_id={task}"][3])["rows"]
        assert [r["reward"] for r in rows] == [0, 0], task


def test_the_task_page_shows_what_assay_show_redact_shows(planted: Path, walks: Any) -> None:
    """One trial, the same pseudonyms: each message of ``assay show --task T --redact``
    is in the viewer's page of that trial, and the verdicts and error beside the
    transcript carry the pseudonyms of the transcript (the trial redacted as a whole)."""
    _, redacted = walks
    store = Store(planted)
    for task in TASKS:
        out = assay_main(
            "show", "planted", "--task", task, "--trial", "0", "--redact", "--json", "--store", str(planted)
        )
        assert out.code == 0, out.stderr
        shown = json.loads(out.stdout)
        page = html_lib.unescape(redacted[f"/runs/planted/tasks/{task}?trial=0"][3])
        section = page.split("<h2>Transcript</h2>", 1)[1]
        contents = [m["content"] for m in shown["transcript"]["messages"] if m["content"]]
        assert contents and all(c in section for c in contents), task
        assert any("<" in c and ">" in c for c in contents)  # pseudonyms, the same ones
        (result,) = store.load_trials("planted", [(task, 0)])
        whole = redact_trial(result, store.load_transcript("planted", task, 0), Redactor()).result
        alone = redact_trial(result, None, Redactor()).result
        assert whole.outcome is not None and alone.outcome is not None
        said = [g.reason for g in whole.grades if g.passed is False and g.reason]
        assert said and all(reason in section for reason in said), task
        if whole.outcome.error:
            assert whole.outcome.error.strip().splitlines()[-1] in section
        compared = html_lib.unescape(redacted[f"/compare/task?a=planted&b=again&task={task}&ta=0&tb=1"][3])
        assert all(reason in compared for reason in said), task
        # the trial list (each result redacted alone) numbers its verdicts as this page does
        assert [g.reason for g in alone.grades] == [g.reason for g in whole.grades], task
        assert alone.outcome.error == whole.outcome.error, task


def test_create_app_without_a_redactor_says_nothing_of_redaction(planted: Path) -> None:
    app = create_app(Store(planted))
    assert app.state.redactor is None
    assert "redactor" in inspect.signature(create_app).parameters


def test_assay_view_redact_options(tmp_path: Path) -> None:
    """--redact and --redact-config are in the help; a bad config is one line naming the
    file, exit 2, before anything listens."""
    help_text = assay_main("view", "--help", env={"COLUMNS": "200"})
    assert help_text.code == 0 and "--redact " in help_text.stdout and "--redact-config" in help_text.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("kinds:\n  NOPE: false\n")
    out = assay_main(
        "view", "--redact-config", str(bad), "--store", str(tmp_path / "s.db"), env={"COLUMNS": "400"}
    )
    assert out.code == 2 and "bad.yaml:2" in out.err and "NOPE" in out.err
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    missing = assay_main("view", "--redact", "--redact-config", str(tmp_path / "nope.yaml"))
    assert missing.code == 2 and "nope.yaml" in missing.err and "Traceback" not in missing.stderr
