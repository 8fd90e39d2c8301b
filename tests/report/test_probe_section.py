"""The "Model probes" section of ``assay report``: the newest stored probe per mode of
each model a run called (agent, user, judge), with the stored figures; other models only
with ``--probes all``; no section when there is nothing to show. Probes are made by
``assay probe`` against the loopback fake server (tests/server/support.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("jinja2")
pytest.importorskip("matplotlib")

from assay.report.probes import probe_section
from assay.runner.stored import Run
from assay.store import Store
from assay.store.probes import write_probe
from tests.server.support import PROBE_TOKENS_PER_S, PROBE_TTFT_S, Probed, probed_store
from tests.support.cli import assay_main


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Probed:
    return probed_store(tmp_path_factory.mktemp("probes"))


def cards(html: str) -> dict[str, str]:
    """Each probe card of the section by probe id (its HTML up to the next card)."""
    if 'id="model-probes"' not in html:
        return {}
    section = html.split('id="model-probes"', 1)[1].split("</section>", 1)[0]
    parts = re.split(r'<div class="card probe-card" data-probe="([^"]+)"', section)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def figure(card: str, key: str) -> float | None:
    found = re.search(rf'data-figure="{re.escape(key)}"(?: data-value="([^"]+)")?>', card)
    assert found is not None, key
    return None if found.group(1) is None else float(found.group(1))


def report(probed: Probed, tmp: Path, *args: str) -> tuple[dict, str]:
    out = tmp / "r.html"
    proc = assay_main("report", *args, "--html", str(out), "--store", str(probed.path), "--json")
    assert proc.code == 0, proc.stderr
    return json.loads(proc.stdout), out.read_text()


def test_report_shows_the_newest_probes_of_the_models_the_run_used(probed: Probed, tmp_path: Path) -> None:
    info, html = report(probed, tmp_path, "llm")
    shown = cards(html)
    ids = probed.ids
    # newest latency and ramp probe of the agent/user model, the judge's availability probe
    assert set(shown) == {ids["scripted"], ids["ramp"], ids["judge"]}, set(shown)
    assert info["probes"] == 3
    assert ids["scripted-old"] not in html and ids["other"] not in html and "openai:other" not in html

    latency = shown[ids["scripted"]]
    doc = probed.doc("scripted")
    m = doc["metrics"]
    for key in ("ttft_s", "itl_s", "output_tokens_per_s", "e2e_s"):
        for q in ("p50", "p95"):
            assert figure(latency, f"{key}.{q}") == m[key][q]["value"], (key, q)
    assert figure(latency, "error_rate") == m["error_rate"] == 0.0
    ttft = m["ttft_s"]["p50"]
    assert f"{1000 * ttft['value']:.1f} ms" in latency  # as shown, with its interval
    assert (
        f"[{1000 * ttft['low']:.1f} ms, {1000 * ttft['high']:.1f} ms]" in latency
    )  # 6 requests: p50 has one
    assert ttft["value"] >= PROBE_TTFT_S - 0.011  # never earlier than the server answered
    assert m["output_tokens_per_s"]["p50"]["value"] == pytest.approx(PROBE_TOKENS_PER_S, rel=0.2)
    assert "used by llm (agent), llm (user)" in latency
    # the run called another fake server than the probe measured: the card says so
    assert "probe-endpoint-note" in latency and doc["endpoint"] in latency

    ramp, rdoc = shown[ids["ramp"]], probed.doc("ramp")["ramp"]
    assert figure(ramp, "ramp.rate_limit_rpm") == rdoc["rate_limit_rpm"]
    assert figure(ramp, "ramp.sustainable_rpm") == rdoc["sustainable_rpm"]
    assert figure(ramp, "ramp.sustainable_tpm") == rdoc["sustainable_tpm"]
    assert figure(ramp, "ramp.first_429_concurrency") == rdoc["first_429_concurrency"] == 1
    assert rdoc["rate_limit_rpm"] == pytest.approx(60, rel=0.25)
    assert 'data-error-kind="rate_limited"' in ramp

    judge, adoc = shown[ids["judge"]], probed.doc("judge")["availability"]
    assert "used by llm (judge)" in judge
    assert adoc["checks"] == 8 and adoc["up"] == 7 and len(adoc["incidents"]) == 1
    assert figure(judge, "availability.uptime") == adoc["uptime"] == 7 / 8
    assert figure(judge, "availability.incidents") == 1
    assert 'data-error-kind="server_error"' in judge


def test_all_none_and_a_run_without_models(probed: Probed, tmp_path: Path) -> None:
    info, html = report(probed, tmp_path, "llm", "--probes", "all")
    every = [probed.ids[k] for k in ("ramp", "judge", "other", "scripted", "scripted-old")]
    assert list(cards(html)) == every and info["probes"] == 5  # newest first
    assert "used by" not in cards(html)[probed.ids["other"]]
    info, html = report(probed, tmp_path, "llm", "--probes", "none")
    assert info["probes"] == 0 and "model-probes" not in html and "Model probes" not in html
    # a run that called no model: no section, not even a heading
    info, html = report(probed, tmp_path, "careful")
    assert info["probes"] == 0 and "Model probes" not in html and "probe-card" not in html
    info, html = report(probed, tmp_path, "careful", "--probes", "all")
    assert len(cards(html)) == 5
    bad = assay_main("report", "llm", "--probes", "some", "--store", str(probed.path))
    assert (
        bad.code == 2 and "--probes must be used, all or none" in bad.stderr and "Traceback" not in bad.stderr
    )


def test_section_rows_are_a_function_of_the_store(probed: Probed, tmp_path: Path) -> None:
    """``probe_section`` builds the rows the report shows from the store alone; a model a
    run called but nobody probed is listed as not probed."""
    llm, careful = Run.load("llm", probed.store), Run.load("careful", probed.store)
    section = probe_section(probed.store, [llm.info])
    assert section is not None and section["unprobed"] == []
    assert [r["probe_id"] for r in section["rows"]] == [probed.ids[k] for k in ("scripted", "ramp", "judge")]
    assert probe_section(probed.store, [careful.info]) is None
    assert probe_section(probed.store, [llm.info], "none") is None
    empty = Store(tmp_path / "empty.db")
    assert probe_section(empty, [llm.info], "all") is None

    judge_only = Store(tmp_path / "judge.db")
    write_probe(judge_only, probed.doc("judge"))
    section = probe_section(judge_only, [llm.info])
    assert section is not None and [r["model"] for r in section["rows"]] == ["openai:scripted-judge"]
    assert section["unprobed"] == [
        {
            "model": "openai:scripted",
            "uses": [{"run_id": "llm", "role": "agent"}, {"run_id": "llm", "role": "user"}],
        }
    ]
