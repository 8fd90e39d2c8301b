"""A retail run (LLM agent and LLM user behind the fake endpoint) exported to a real Arize
Phoenix started by the test, read back through Phoenix's own API (phoenix.client):
every trial is a trace with the span tree, kinds, token counts and assay attributes."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.cli import assay_main
from tests.support.fake_llm_server import FakeLLMServer
from tests.support.phoenix import PhoenixServer

from .conftest import llm_run

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def _by_trace(spans: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    traces: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in spans:
        traces[s["context"]["trace_id"]].append(s)
    return traces


def _kind(s: dict[str, Any]) -> str:
    return str(s["attributes"]["assay.span.kind"])


def _check_trial_trace(spans: list[dict[str, Any]], result: Any) -> None:
    by_id = {s["context"]["span_id"]: s for s in spans}
    roots = [s for s in spans if s.get("parent_id") is None]
    assert len(roots) == 1, "one root per trial trace"
    root = roots[0]
    assert root["span_kind"] == "AGENT" and _kind(root) == "trial"
    for s in spans:  # a connected tree: every parent is in the trace
        if s is not root:
            assert s["parent_id"] in by_id, (s["name"], s["parent_id"])

    def parent_kind(s: dict[str, Any]) -> str:
        return _kind(by_id[s["parent_id"]])

    kinds = defaultdict(list)
    for s in spans:
        kinds[_kind(s)].append(s)
    assert kinds["turn"] and all(
        parent_kind(s) == "trial" and s["span_kind"] == "CHAIN" for s in kinds["turn"]
    )
    assert all(parent_kind(s) == "turn" and s["span_kind"] == "AGENT" for s in kinds["agent"])
    assert all(parent_kind(s) == "turn" for s in kinds["user"])
    assert kinds["tool"], "the retail tasks call tools"
    for s in kinds["tool"]:
        assert s["span_kind"] == "TOOL" and parent_kind(s) == "agent"
        assert s["attributes"]["tool.name"] == s["name"]
        args = json.loads(s["attributes"]["input.value"])
        # Phoenix stores tool.parameters parsed, and its API flattens them: tool.parameters.KEY
        flat = {
            k.removeprefix("tool.parameters."): v
            for k, v in s["attributes"].items()
            if k.startswith("tool.parameters.")
        }
        assert flat == {k: v for k, v in args.items() if not isinstance(v, (list, dict))}
    assert kinds["llm"]
    for s in kinds["llm"]:
        assert s["span_kind"] == "LLM"
        role = s["attributes"]["assay.llm.role"]
        assert parent_kind(s) == {"agent": "agent", "user": "user", "judge": "grader"}[role]
        assert s["attributes"]["llm.model_name"] == "scripted"
        assert s["attributes"]["gen_ai.usage.input_tokens"] == s["attributes"]["llm.token_count.prompt"]
    agent_llm = [s for s in kinds["llm"] if s["attributes"]["assay.llm.role"] == "agent"]
    assert all(s["attributes"]["llm.prompt_template.version"].startswith("tool-agent/v1") for s in agent_llm)
    # token counts: the LLM spans add up to what the store recorded for the trial
    assert sum(s["attributes"]["llm.token_count.prompt"] for s in kinds["llm"]) == result.input_tokens
    assert sum(s["attributes"]["llm.token_count.completion"] for s in kinds["llm"]) == result.output_tokens
    a = root["attributes"]
    assert a["llm.token_count.prompt"] == result.input_tokens
    assert a["llm.token_count.completion"] == result.output_tokens
    assert a["assay.reward"] == result.reward
    assert a["assay.termination"] == result.termination
    assert a["assay.task_id"] == result.task_id and a["assay.trial_index"] == result.trial_index
    evaluators = kinds["evaluator"]
    assert sorted(s["name"] for s in evaluators) == sorted(g.grader for g in result.grades)
    assert all(s["span_kind"] == "EVALUATOR" and parent_kind(s) == "grader" for s in evaluators)
    verdicts = {g.grader: g for g in result.grades}
    for s in evaluators:
        g = verdicts[s["name"]]
        label = "skipped" if g.skipped else str(g.passed).lower()
        assert s["attributes"]["assay.grade.passed"] == label


def test_retail_run_exported_to_phoenix(
    phoenix: PhoenixServer, llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    run = llm_run(llm_server, tmp_path)
    results = {(r.task_id, r.trial_index): r for r in run.results}
    n = len(results)
    assert n >= 6 and all(r.input_tokens for r in results.values())
    project = "assay-export"
    started = time.monotonic()
    out = assay_main(
        "export-traces",
        run.run_id,
        "--otel-endpoint",
        phoenix.url,
        "--project",
        project,
        "--store",
        str(tmp_path / "assay.db"),
        "--json",
    )
    assert out.code == 0, out.stderr
    sent = json.loads(out.stdout)
    assert sent["traces"] == n and sent["redacted"] is True and sent["redacted_values"] > 0
    spans = phoenix.spans(project, sent["spans"])
    elapsed = time.monotonic() - started
    assert len(spans) == sent["spans"]
    traces = _by_trace(spans)
    assert len(traces) == n + 1  # one per trial, one for the run
    trial_roots = {}
    for trace in traces.values():
        root = next(s for s in trace if s.get("parent_id") is None)
        if _kind(root) == "run":
            assert root["attributes"]["assay.run_id"] == run.run_id
            assert root["attributes"]["assay.trials"] == n
            continue
        key = (root["attributes"]["assay.task_id"], root["attributes"]["assay.trial_index"])
        trial_roots[key] = root
        _check_trial_trace(trace, results[key])
    assert set(trial_roots) == set(results), "every trial is a trace in Phoenix"
    assert all(s["attributes"]["assay.run_id"] == run.run_id for s in spans)
    redacted = [s for s in spans if s["attributes"].get("assay.redacted")]
    assert redacted, "the retail conversations hold emails and names: some spans are flagged redacted"
    print(f"phoenix startup {phoenix.startup_s:.1f} s; export + ingest of {len(spans)} spans {elapsed:.1f} s")


def test_live_export_to_phoenix(
    phoenix: PhoenixServer, llm_server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``otel_endpoint`` in the run spec: the trials reach Phoenix as the run goes."""
    monkeypatch.setenv("PHOENIX_PROJECT_NAME", "assay-live")
    run = llm_run(llm_server, tmp_path, task_ids=["cancel-pending"], otel_endpoint=phoenix.url)
    assert run.info.spec.otel_endpoint == phoenix.url
    roots: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(roots) < 4:
        try:
            spans = phoenix.client().spans.get_spans(project_identifier="assay-live", limit=5000)
        except httpx.HTTPStatusError as exc:  # the project appears when Phoenix has ingested the spans
            if exc.response.status_code != 404:
                raise
            spans = []
        roots = [s for s in spans if s.get("parent_id") is None]
        time.sleep(0.5)
    kinds = sorted(_kind(s) for s in roots)
    assert kinds == ["run", "trial", "trial", "trial"]
    tasks = {s["attributes"]["assay.task_id"] for s in roots if _kind(s) == "trial"}
    assert tasks == {r.task_id for r in run.results}
