"""Prompt snapshots: every model call records its template id and content hashes of its
system prompt and tool definitions; ``assay prompt diff`` shows what changed between two
runs' prompts, and compare notes that two runs differ in prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import assay
import assay.agents.llm as llm_agent
from assay.core.hashing import stable_hash
from tests.support.cli import assay_main
from tests.support.fake_llm_server import FakeLLMServer

from .conftest import llm_run

NEW_RULE = "- Always thank the user for their patience before you answer."


def _two_prompt_runs(
    llm_server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[assay.Run, assay.Run]:
    """Runs prompt-a and prompt-b: the LLM agent with its template, then with one more rule."""
    a = llm_run(llm_server, tmp_path, task_ids=["cancel-pending"], run_id="prompt-a")
    template = llm_agent.PROMPT_TEMPLATE.replace("# Current time", NEW_RULE + "\n\n# Current time")
    monkeypatch.setattr(llm_agent, "PROMPT_TEMPLATE", template)
    monkeypatch.setattr(
        llm_agent, "TEMPLATE_VERSION", f"{llm_agent.PROMPT_TEMPLATE_ID}:{stable_hash(template, 12)}"
    )
    b = llm_run(llm_server, tmp_path, task_ids=["cancel-pending"], run_id="prompt-b", prompt_version="v2")
    return a, b


def test_prompt_diff_of_two_prompt_versions(
    llm_server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = _two_prompt_runs(llm_server, tmp_path, monkeypatch)
    # every agent call carries the template id and the hashes of what it sent
    for run, version in ((a, None), (b, llm_agent.TEMPLATE_VERSION)):
        r = run.results[0]
        t = run.transcript(r.task_id, r.trial_index)
        assert t is not None
        calls = [s for s in t.spans if s.kind == "llm" and s.attributes["role"] == "agent"]
        assert calls and all(s.attributes["system_hash"] and s.attributes["tools_hash"] for s in calls)
        assert all(str(s.attributes["prompt_template"]).startswith("tool-agent/v1:") for s in calls)
        if version:
            assert {s.attributes["prompt_template"] for s in calls} == {version}
        system = t.prompts["system:" + calls[0].attributes["system_hash"]]
        assert stable_hash(system, 12) == calls[0].attributes["system_hash"]
        assert (NEW_RULE in system) == (run is b)
    store = str(tmp_path / "assay.db")
    out = assay_main("prompt", "diff", "prompt-a", "prompt-b", "--store", store)
    assert out.code == 0, out.stderr
    assert f"+{NEW_RULE}" in out.stdout and "# agent" in out.stdout
    assert "tools:" not in out.stdout  # the tool definitions did not change
    data = json.loads(assay_main("prompt", "diff", "prompt-a", "prompt-b", "--store", store, "--json").stdout)
    assert (
        data["same"] is False and "system" in data["roles"]["agent"] and "tools" not in data["roles"]["agent"]
    )
    same = assay_main("prompt", "diff", "prompt-a", "prompt-a", "--store", store)
    assert "are the same" in same.stdout
    compared = assay_main("compare", "prompt-a", "prompt-b", "--store", store, "--json")
    assert compared.code == 0, compared.stderr
    assert "differ in prompt" in compared.stdout


def test_report_shows_that_two_runs_differ_in_prompt(
    llm_server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("jinja2")
    a, b = _two_prompt_runs(llm_server, tmp_path, monkeypatch)
    va, vb = a.info.config.prompt_version, b.info.config.prompt_version
    assert va and va.startswith("tool-agent/v1:") and vb == "v2"
    store, page = str(tmp_path / "assay.db"), tmp_path / "report.html"
    # console: the note is printed with the path of the report
    out = assay_main("report", "prompt-a", "prompt-b", "--html", str(page), "--store", store)
    assert out.code == 0, out.stderr
    assert f"note: prompt-a → prompt-b: the runs differ in prompt ({va} vs v2)" in out.err
    assert "assay prompt diff prompt-a prompt-b shows what changed" in out.err
    data = json.loads(
        assay_main("report", "prompt-a", "prompt-b", "--html", str(page), "--store", store, "--json").stdout
    )
    assert any(n.startswith("prompt-a → prompt-b: the runs differ in prompt") for n in data["notes"])
    # HTML: on the overview, in the comparison tab and in each run's provenance
    html = page.read_text()
    overview = html.split('id="tab-overview"')[1].split('id="tab-run-0"')[0]
    assert (
        f"prompt-b differs from prompt-a in prompt ({va} → v2): "
        "<code>assay prompt diff prompt-a prompt-b</code>" in overview
    )
    comparison = html.split('id="tab-cmp-0"')[1]
    assert f"the runs differ in prompt ({va} vs v2)" in comparison
    for i, version in enumerate((va, vb)):
        run_tab = html.split(f'id="tab-run-{i}"')[1].split("</section>")[0]
        assert f"<dt>prompt</dt><dd>{version}</dd>" in run_tab
    # a report of runs with one prompt says nothing of the kind
    same = assay_main("report", "prompt-a", "--html", str(tmp_path / "one.html"), "--store", store, "--json")
    assert (
        json.loads(same.stdout)["notes"] == [] and "differs from" not in (tmp_path / "one.html").read_text()
    )
