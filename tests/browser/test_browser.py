"""End to end in headless Chromium: the viewer (run list, run page, filtering, a failed
transcript, two runs compared, live updates, the rankings race) and the one-file report
opened from disk with no network."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from assay.report.html import write_report
from assay.server import create_app
from assay.store import Store
from tests.browser.conftest import ROOT, shot
from tests.server.support import serving, toy_runs
from tests.server.synth import synth_run

VOTES = Path(__file__).parents[2] / "examples" / "votes.jsonl"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    tmp = tmp_path_factory.mktemp("browser")
    st = Store(tmp / "b.db")
    toy_runs(tmp, st)
    return st


@pytest.fixture(scope="module")
def url(store: Store) -> Iterator[str]:
    with serving(create_app(store, votes=VOTES, poll_seconds=0.25)) as base:
        yield base


def local_only(page: Any) -> None:
    leaving = [u for u in page.requests if not u.startswith(("file://", "http://127.0.0.1:", "data:"))]
    assert leaving == [], leaving


def test_run_list_run_page_filter_and_failed_transcript(page: Any, url: str) -> None:
    page.goto(url + "/")
    assert page.locator("#runs-table tbody tr").count() == 2
    shot(page, "01-run-list")
    page.click("text=flaky")
    page.wait_for_selector("#task-table tbody tr td a")
    assert page.locator(".headline .metric").first.inner_text().lower().startswith("success rate")
    assert page.locator("#task-table tbody tr").count() == 6
    shot(page, "02-run-page")
    page.select_option("#task-table select[data-filter=stratum]", "edge")
    page.wait_for_function("document.querySelectorAll('#task-table tbody tr').length === 1")
    assert page.locator("#task-table tbody tr td").first.inner_text() == "dep-edge"
    page.select_option("#task-table select[data-filter=stratum]", "")
    page.select_option("#task-table select[data-filter=outcome]", "pass")
    page.wait_for_function("document.querySelector('#task-table .count').textContent !== '6 rows'")
    page.select_option("#task-table select[data-filter=outcome]", "")
    page.fill("#task-table input[type=search]", "dep-h")
    page.wait_for_function("document.querySelector('#task-table .count').textContent === '1 rows'")
    shot(page, "03-run-page-filtered")
    page.fill("#task-table input[type=search]", "")
    page.select_option("#trial-table select[data-filter=outcome]", "fail")
    page.wait_for_function(
        "[...document.querySelectorAll('#trial-table tbody tr')].every(r => r.innerText.includes('fail'))"
    )
    page.locator("#trial-table tbody tr td a").first.click()
    page.wait_for_selector(".transcript")
    assert page.locator(".transcript .badge.b-fail").count() >= 1
    assert page.locator(".step-tool").count() >= 1 and page.locator(".verdict.v-fail").count() >= 1
    goto = page.locator("[data-goto]").first
    goto.click()
    shot(page, "04-failed-transcript")
    local_only(page)


def test_compare_two_runs(page: Any, url: str) -> None:
    page.goto(url + "/")
    page.check("input.pick[value=careful]")
    page.check("input.pick[value=flaky]")
    page.click("#compare-button")
    page.wait_for_selector("#compare-table tbody tr td a")
    assert "a=careful" in page.url and "b=flaky" in page.url
    assert "Decision" in page.inner_text(".decision")
    first_change = page.locator("#compare-table tbody tr td .badge").first.inner_text()
    assert first_change in ("regressed", "changed", "same")
    shot(page, "05-compare")
    page.locator("#compare-table tbody tr td a").first.click()
    page.wait_for_selector("#side-by-side")
    assert page.locator("#side-by-side tbody tr .step").count() >= 4
    headers = page.locator("#side-by-side thead th").all_inner_texts()
    assert headers[0].startswith("A = careful") and headers[1].startswith("B = flaky")
    shot(page, "06-side-by-side")
    local_only(page)


def test_live_run_page_updates(page: Any, tmp_path: Path) -> None:
    store = Store(tmp_path / "live.db")
    _, rest = synth_run(store, "live", tasks=6, k=2, status="running", write_first=2)
    with serving(create_app(store, poll_seconds=0.2)) as base:
        page.goto(base + "/runs/live")
        assert page.inner_text("#run-progress") == "2/12 trials"
        assert page.locator("#live").is_visible()

        def keep_running() -> None:
            for result in rest:
                time.sleep(0.05)
                store.write_trial(result)
            store.set_status("live", "finished")

        worker = threading.Thread(target=keep_running)
        worker.start()
        page.wait_for_function("document.getElementById('run-progress').textContent === '12/12 trials'")
        page.wait_for_function("document.getElementById('run-status').textContent === 'finished'")
        worker.join()
        # the final overview renders the run's charts (matplotlib): allow for a loaded machine
        page.wait_for_function(
            "document.getElementById('overview').dataset.version === 'finished/12'", timeout=45_000
        )
        assert not page.locator("#live").is_visible()
        assert page.locator("#task-table .count").inner_text() == "6 rows"
        shot(page, "07-live-run-finished")


def test_rankings_bar_chart_race(page: Any, url: str) -> None:
    page.goto(url + "/rank")
    page.wait_for_selector("#race .bar")
    assert page.locator("#ratings tbody tr").count() == 6
    assert page.inner_text("#race-label").startswith("1/9")
    page.click("#race-next")
    assert page.inner_text("#race-label").startswith("2/9")
    page.click("#race-play")
    page.wait_for_function("window.AssayRace.state().index >= 4", timeout=8000)
    page.click("#race-play")  # pause
    paused = page.evaluate("window.AssayRace.state()")
    assert not paused["playing"]
    page.wait_for_timeout(1000)
    assert page.evaluate("window.AssayRace.state().index") == paused["index"]
    shot(page, "08-rankings-race")
    local_only(page)


def test_html_report_renders_offline(page: Any, store: Store, tmp_path: Path) -> None:
    out = write_report(["careful", "flaky"], tmp_path / "report.html", store)
    assert out.size_bytes < 3_000_000
    page.goto(out.path.resolve().as_uri())
    page.wait_for_selector(".tabs button")
    shot(page, "09-report-overview")
    page.click(".tabs button[data-tab=run-1]")
    page.wait_for_selector("#tab-run-1 .task-table tbody tr")
    page.select_option("#tab-run-1 .task-table select[data-filter=outcome]", "flaky")
    rows = page.locator("#tab-run-1 .task-table tbody tr")
    assert rows.count() >= 1 and all("flaky" in t for t in rows.all_inner_texts())
    shot(page, "10-report-run")
    page.locator("#tab-run-1 .task-table .glyphs a.g-fail").first.click()
    page.wait_for_selector("#tx-overlay.open .transcript")
    assert re.search(r"trial \d", page.inner_text("#tx-body h3"))
    assert page.locator("#tx-body .verdict.v-fail").count() >= 1
    shot(page, "11-report-transcript")
    page.keyboard.press("Escape")
    assert not page.locator("#tx-overlay.open").count()
    page.click(".tabs button[data-tab=cmp-0]")
    page.wait_for_selector("#tab-cmp-0 .compare-table tbody tr")
    shot(page, "12-report-comparison")
    assert page.requests and all(u.startswith("file://") for u in page.requests), page.requests


def test_retail_careful_vs_hasty_report(page: Any, tmp_path: Path) -> None:
    """The acceptance picture: the built-in retail suite, careful vs hasty, in one file."""
    import assay

    store = Store(tmp_path / "retail.db")

    def both() -> None:
        assay.run("retail", agent="builtin:retail-careful", trials=2, store=store, run_id="retail-careful")
        assay.run("retail", agent="builtin:retail-hasty", trials=2, store=store, run_id="retail-hasty")

    worker = threading.Thread(target=both)
    worker.start()
    worker.join()
    out = write_report(["retail-careful", "retail-hasty"], tmp_path / "retail.html", store)
    assert out.size_bytes < 3_000_000 and out.transcripts > 0
    page.goto(out.path.resolve().as_uri())
    page.wait_for_selector(".tabs button")
    shot(page, "13-retail-report-overview", full_page=True)
    page.click(".tabs button[data-tab=run-1]")
    page.wait_for_selector("#tab-run-1 .task-table tbody tr")
    page.locator("#tab-run-1 .task-table .glyphs a.g-fail").first.click()
    page.wait_for_selector("#tx-overlay.open .transcript .step-tool")
    shot(page, "14-retail-hasty-transcript")
    assert all(u.startswith("file://") for u in page.requests), page.requests


def test_labelling_screen_stores_blind_labels(page: Any, tmp_path: Path) -> None:
    import importlib.util

    from assay.store.labels import LabelStore

    spec = importlib.util.spec_from_file_location(
        "make_run", ROOT / "examples" / "calibration" / "make_run.py"
    )
    make_run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_run)
    store = Store(tmp_path / "label.db")
    make_run.build(store)
    with serving(create_app(store)) as base:
        page.goto(base + "/label")
        assert page.locator("#label-runs tbody tr").count() == 1
        page.click("#label-runs a.start")
        page.fill("#labeller", "ana")
        page.click("#start")
        assert page.inner_text("#label-progress").startswith("0/40")
        assert "judge" not in page.inner_text("#conversation").lower()  # blind: no verdict shown
        page.check("input[name=verdict][value=pass]")
        first_dimension = page.locator("fieldset input[type=radio]").first
        first_dimension.check()
        shot(page, "15-labelling")
        page.click("#save")
        page.wait_for_selector("#label-saved")
        assert page.inner_text("#label-progress").startswith("1/40")
        local_only(page)
    labels = LabelStore(store).list("calibration-demo", labeller="ana")
    assert {lb.dimension for lb in labels} >= {""} and len(labels) == 2
    assert next(lb for lb in labels if lb.dimension == "").value == "pass"
