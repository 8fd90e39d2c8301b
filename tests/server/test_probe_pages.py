"""The viewer's probes screen over real HTTP on 127.0.0.1: ``/probes`` (side by side,
filtered by model and mode like ``assay probes``), ``/probes/ID``, ``/api/probes``, the
section on a run's page, and the viewer's Host/Origin checks on these routes. Probes
are made by ``assay probe`` against the loopback fake server (tests/server/support.py)."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from assay.llm.probe import comparison_row
from assay.server import create_app
from tests.server.support import Probed, probed_store, serving
from tests.server.test_security import request
from tests.server.test_server import get, get_json


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Probed:
    return probed_store(tmp_path_factory.mktemp("viewer-probes"))


@pytest.fixture(scope="module")
def url(probed: Probed) -> Any:
    with serving(create_app(probed.store)) as base:
        yield base


def listed(html: str) -> list[str]:
    return re.findall(r'<tr data-probe="([^"]+)"', html)


def row_of(html: str, probe_id: str) -> str:
    return html.split(f'<tr data-probe="{probe_id}"', 1)[1].split("</tr>", 1)[0]


def test_api_lists_filters_and_loads_probes(url: str, probed: Probed) -> None:
    ids = probed.ids
    newest_first = [ids[k] for k in ("ramp", "judge", "other", "scripted", "scripted-old")]
    table = get_json(url + "/api/probes")
    assert table["schema"] == "assay.probe-comparison/1" and table["total"] == 5
    assert [r["probe_id"] for r in table["rows"]] == newest_first
    assert table["rows"][3] == comparison_row(probed.doc("scripted"))  # as `assay probes --json`
    newest = {m["model"]: m["newest"] for m in table["models"]}
    assert newest["openai:scripted"] == {"latency": ids["scripted"], "ramp": ids["ramp"]}
    by_model = get_json(url + "/api/probes?model=other")
    assert [r["probe_id"] for r in by_model["rows"]] == [ids["other"]] and by_model["total"] == 1
    latency = get_json(url + "/api/probes?model=openai:scripted&mode=latency")
    assert [r["probe_id"] for r in latency["rows"]] == [ids["scripted"], ids["scripted-old"]]
    limited = get_json(url + "/api/probes?limit=2")
    assert len(limited["rows"]) == 2 and limited["total"] == 5
    status, body = get(url + "/api/probes?mode=fast")
    assert status == 400 and "mode must be latency, ramp, availability" in json.loads(body)["error"]
    assert get_json(url + f"/api/probes/{ids['judge']}") == probed.doc("judge")
    status, body = get(url + "/api/probes/nope")
    assert status == 404 and "no probe 'nope'" in json.loads(body)["error"]


def test_probes_page_side_by_side_and_filtered(url: str, probed: Probed) -> None:
    ids = probed.ids
    status, html = get(url + "/")
    assert status == 200 and 'href="/probes"' in html  # in the navigation
    status, html = get(url + "/probes")
    assert status == 200 and "Model probes" in html
    assert listed(html) == [ids[k] for k in ("ramp", "judge", "other", "scripted", "scripted-old")]
    row = row_of(html, ids["scripted"])
    expected = comparison_row(probed.doc("scripted"))
    for key in ("ttft_p50_s", "ttft_p95_s", "tokens_per_s_p50", "e2e_p95_s"):
        found = re.search(rf'data-key="{key}" data-value="([^"]+)"', row)
        assert found is not None and float(found.group(1)) == expected[key], key
    assert "newest" in row and "newest" not in row_of(html, ids["scripted-old"])
    limit = re.search(r'data-key="rate_limit_rpm" data-value="([^"]+)"', row_of(html, ids["ramp"]))
    assert limit is not None and float(limit.group(1)) == probed.doc("ramp")["ramp"]["rate_limit_rpm"]
    assert listed(get(url + "/probes?mode=ramp")[1]) == [ids["ramp"]]
    assert listed(get(url + "/probes?model=judge")[1]) == [ids["judge"]]
    status, html = get(url + "/probes?model=nothing-like-this")
    assert status == 200 and listed(html) == [] and "No probe matches" in html
    status, html = get(url + "/probes?mode=fast")
    assert status == 400 and "mode must be" in html and "Traceback" not in html


def test_probe_detail_pages(url: str, probed: Probed) -> None:
    ids = probed.ids
    status, html = get(url + f"/probes/{ids['ramp']}")
    assert status == 200 and 'id="ramp-levels"' in html
    levels = probed.doc("ramp")["ramp"]["levels"]
    assert html.count('<tr><td class="num">') >= len(levels) >= 1
    found = re.search(r'data-figure="ramp.rate_limit_rpm" data-value="([^"]+)"', html)
    assert found is not None and float(found.group(1)) == probed.doc("ramp")["ramp"]["rate_limit_rpm"]
    status, html = get(url + f"/probes/{ids['judge']}")
    assert status == 200 and 'id="incidents"' in html and "server error 1" in html
    assert 'data-figure="availability.uptime" data-value="0.875"' in html
    status, html = get(url + "/probes/nope")
    assert status == 404 and "no probe &#39;nope&#39;" in html


def test_run_page_shows_the_probes_of_its_models(url: str, probed: Probed) -> None:
    ids = probed.ids
    status, html = get(url + "/runs/llm")
    assert status == 200 and 'id="model-probes"' in html
    for name in ("scripted", "ramp", "judge"):
        assert f'href="/probes/{ids[name]}"' in html
    assert ids["other"] not in html and ids["scripted-old"] not in html
    status, html = get(url + "/runs/careful")
    assert status == 200 and "model-probes" not in html


def test_host_and_origin_checks_cover_the_probe_routes(url: str, probed: Probed) -> None:
    port = urlsplit(url).port
    assert port is not None
    judge = probed.ids["judge"]
    for path in ("/probes", "/api/probes", f"/probes/{judge}", f"/api/probes/{judge}"):
        status, body = request(port, "GET", path, "evil.example")
        assert status == 400 and "invalid Host header" in body, path
        assert request(port, "GET", path, f"127.0.0.1:{port}")[0] == 200, path
    status, _ = request(port, "POST", "/api/probes", f"127.0.0.1:{port}", {"Origin": "http://evil.example"})
    assert status == 403
