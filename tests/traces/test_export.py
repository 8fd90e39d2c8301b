"""Exporting runs as OTLP-JSON through the OpenTelemetry SDK: the span tree, the
attributes, and redaction of what leaves (a planted corpus: 100% redacted)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.core.messages import Message, ToolCall
from assay.core.results import Outcome, TrialResult
from assay.core.transcript import Span, Transcript
from assay.redact.checks import alnum
from assay.traces import TraceExporter
from assay.traces.readers import read_file
from tests.support.cli import assay_main
from tests.support.planted import GENERATORS, build_corpus
from tests.support.redaction_eval import leak, strings


@pytest.fixture(scope="module")
def retail_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[assay.Run, Path]:
    store = tmp_path_factory.mktemp("export") / "assay.db"
    run = assay.run(
        "retail",
        agent="builtin:retail-flaky",
        params={"slip": 0.3},
        trials=2,
        task_ids=["refund-in-window-email", "cancel-pending", "injection-old-order"],
        store=str(store),
        run_id="exp",
    )
    return run, store


def otlp_spans(path: Path) -> list[dict[str, Any]]:
    spans = []
    for line in path.read_text().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    s["attrs"] = {a["key"]: next(iter(a["value"].values())) for a in s.get("attributes", [])}
                    spans.append(s)
    return spans


def test_otlp_json_export_of_a_stored_run(retail_run: tuple[assay.Run, Path], tmp_path: Path) -> None:
    run, store = retail_run
    target = tmp_path / "run.otlp.jsonl"
    out = assay_main(
        "export-traces", "exp", "--format", "otlp-json", "-o", str(target), "--store", str(store), "--json"
    )
    assert out.code == 0, out.stderr
    counts = json.loads(out.stdout)
    spans = otlp_spans(target)
    n = len(run.results)
    assert len(spans) == counts["spans"] and counts["traces"] == n >= 10
    traces = Counter(s["traceId"] for s in spans)
    assert len(traces) == n + 1  # the trials and the run
    by_id = {(s["traceId"], s["spanId"]): s for s in spans}
    roots = [s for s in spans if not s.get("parentSpanId")]
    run_root = next(s for s in roots if s["attrs"]["assay.span.kind"] == "run")
    rewards = {(r.task_id, r.trial_index): r.reward for r in run.results}
    for root in roots:
        if root is run_root:
            continue
        a = root["attrs"]
        assert a["openinference.span.kind"] == "AGENT"
        assert int(a["assay.reward"]) == rewards[(a["assay.task_id"], int(a["assay.trial_index"]))]
        # the trial links to the run span
        assert root["links"][0]["traceId"] == run_root["traceId"]
        assert root["links"][0]["spanId"] == run_root["spanId"]
    for s in spans:
        if s.get("parentSpanId"):
            parent = by_id[(s["traceId"], s["parentSpanId"])]
            assert int(parent["startTimeUnixNano"]) <= int(s["startTimeUnixNano"])
            kind, pkind = s["attrs"]["assay.span.kind"], parent["attrs"]["assay.span.kind"]
            allowed = {
                "turn": {"trial"},
                "user": {"turn"},
                "agent": {"turn"},
                "tool": {"agent", "turn"},
                "grader": {"trial"},
                "evaluator": {"grader", "trial"},
            }
            assert pkind in allowed[kind], (kind, pkind)
    tools = [s for s in spans if s["attrs"]["assay.span.kind"] == "tool"]
    assert tools and all(s["attrs"]["openinference.span.kind"] == "TOOL" for s in tools)
    assert all(isinstance(json.loads(s["attrs"]["tool.parameters"]), dict) for s in tools)
    evaluators = [s for s in spans if s["attrs"]["assay.span.kind"] == "evaluator"]
    assert len(evaluators) == sum(len(r.grades) for r in run.results)
    # redaction is on by default: the retail world's emails never leave
    emails = {
        m.content.split("My email is ")[1].rstrip(".")
        for r in run.results
        for m in (run.transcript(r.task_id, r.trial_index) or Transcript()).messages
        if m.role == "user" and "My email is " in m.content
    }
    text = target.read_text()
    assert emails and not any(e in text for e in emails)
    assert counts["redacted_values"] > 0 and any(s["attrs"].get("assay.redacted") for s in spans)


def test_no_redact_sends_content_as_it_is(retail_run: tuple[assay.Run, Path], tmp_path: Path) -> None:
    _run, store = retail_run
    target = tmp_path / "raw.otlp.jsonl"
    out = assay_main("export-traces", "exp", "-o", str(target), "--no-redact", "--store", str(store))
    assert out.code == 0, out.stderr
    text = target.read_text()
    assert "@example.com" in text and "assay.redacted" not in text


def test_export_traces_usage_errors(retail_run: tuple[assay.Run, Path], tmp_path: Path) -> None:
    _, store = retail_run
    both = assay_main(
        "export-traces", "exp", "-o", "x", "--otel-endpoint", "http://127.0.0.1:1", "--store", str(store)
    )
    assert both.code == 2 and "either --otel-endpoint" in both.err
    bad = assay_main("export-traces", "exp", "--otel-endpoint", "127.0.0.1:6006", "--store", str(store))
    assert bad.code == 2 and "http://" in bad.err
    missing = assay_main("export-traces", "nope", "-o", str(tmp_path / "f"), "--store", str(store))
    assert missing.code == 2 and "nope" in missing.err


def test_unreachable_endpoint_is_reported_not_fatal_to_the_export(
    retail_run: tuple[assay.Run, Path],
) -> None:
    from tests.support.phoenix import free_port

    _, store = retail_run
    url = f"http://127.0.0.1:{free_port()}"
    out = assay_main("export-traces", "exp", "--otel-endpoint", url, "--store", str(store))
    assert out.code == 2 and "could not be sent" in out.err and "cannot connect" in out.err


# -- the planted corpus -------------------------------------------------------------------


def _spans_for(messages: list[Message], error: str | None) -> list[Span]:
    """The span tree the orchestrator would have recorded for these messages."""
    spans = [Span(0, "trial", "planted", 0.0, 1.0)]
    turn = agent = 0

    def add(kind: Any, name: str, parent: int, **attributes: Any) -> int:
        t = len(spans) * 0.001
        spans.append(Span(len(spans), kind, name, t, t + 0.0005, parent, attributes))
        return len(spans) - 1

    for m in messages:
        if m.role == "user":
            turn = add("turn", "turn", 0)
            add("user", "user", turn)
        elif m.role == "assistant":
            agent = add("agent", "respond", turn)
            for call in m.tool_calls:
                add("tool", call.name, agent, args=call.arguments, call_id=call.id, caller="agent")
    if error is not None:
        spans[add("agent", "respond", turn or 0)].error = error
    return spans


def _trial(i: int, data: dict[str, Any], context: str) -> tuple[TrialResult, Transcript]:
    messages: list[Message] = []
    error = None
    if context == "transcript":
        for m in data["messages"]:
            calls = [ToolCall(c["id"], c["name"], c["arguments"]) for c in m.get("tool_calls", [])]
            messages.append(Message(m["role"], m["content"], calls, m.get("tool_call_id"), m.get("name")))
        extra = {k: v for k, v in data.items() if k not in ("messages", "spans")}
        messages.append(Message("user", json.dumps(extra)))
    elif context == "tool_output":
        call = ToolCall("c1", "get_order_details", {"order_id": data["order_id"]})
        messages = [
            Message("user", "Where is my order?"),
            Message("assistant", "", [call]),
            Message("tool", json.dumps(data), tool_call_id="c1", name=call.name),
            Message("assistant", "Here it is."),
        ]
    else:
        messages = [Message("user", "Hello"), Message("assistant", "One moment.")]
        error = "\n".join(data["errors"]) + "\n" + json.dumps(data.get("consistency", []))
    transcript = Transcript(messages, _spans_for(messages, error), "2025-06-15T12:00:00.000+00:00")
    termination = "agent_error" if error else "user_stop"
    result = TrialResult(
        run_id="planted",
        task_id=f"planted-{i}",
        trial_index=0,
        seed=i,
        config_hash="x",
        reward=None if error else 1,
        termination=termination,  # type: ignore[arg-type]
        outcome=Outcome(termination, error=error),  # type: ignore[arg-type]
        started_at="2025-06-15T12:00:00.000+00:00",
    )
    return result, transcript


@pytest.mark.slow
def test_planted_secrets_and_personal_data_never_leave(
    retail_run: tuple[assay.Run, Path], tmp_path: Path
) -> None:
    run, _ = retail_run
    corpus = build_corpus(seed=7, records=150)
    target = tmp_path / "planted.otlp.jsonl"
    exporter = TraceExporter(path=target)
    for i, record in enumerate(corpus):
        result, transcript = _trial(i, record.data, record.context)
        exporter.add(run.info, result, transcript)
    counts = exporter.close()
    assert counts.traces == 150
    exported = [json.loads(line) for line in target.read_text().splitlines()]
    texts = list(strings(exported))
    compact = [alnum(t) for t in texts]
    planted = Counter(item.kind for r in corpus for item in r.planted)
    contexts = Counter(r.context for r in corpus for _ in r.planted)
    assert sum(planted.values()) >= 500 and len(planted) >= 10 and set(planted) == set(GENERATORS)
    assert set(contexts) == {"transcript", "tool_output", "error"}
    leaks = [
        (item.kind, r.context, item.phrase)
        for r in corpus
        for item in r.planted
        if leak(item, texts, compact)
    ]
    assert leaks == [], leaks[:10]
    assert counts.redacted_values >= sum(planted.values())
    # every trace that held planted data is flagged
    spans, _ = read_file(target)
    flagged = {s.trace_id for s in spans if s.attributes.get("assay.redacted")}
    assert len(flagged) == 150


def test_the_leak_check_can_fail(retail_run: tuple[assay.Run, Path], tmp_path: Path) -> None:
    run, _ = retail_run
    corpus = build_corpus(seed=8, records=9)
    target = tmp_path / "raw.otlp.jsonl"
    exporter = TraceExporter(path=target, redact=False)
    for i, record in enumerate(corpus):
        exporter.add(run.info, *_trial(i, record.data, record.context))
    exporter.close()
    texts = list(strings([json.loads(line) for line in target.read_text().splitlines()]))
    compact = [alnum(t) for t in texts]
    assert all(leak(item, texts, compact) for r in corpus for item in r.planted)
