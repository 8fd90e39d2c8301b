"""``assay badcase from-traces``: recorded conversations a verdict marks as failed become
badcases (source trace) — from assay's own OTLP export (clustered exactly as ``from-run``
clusters the run's trials), from JSONL conversations with metadata verdicts and
annotations, and from Phoenix span exports with evaluator spans, error statuses and a
separate annotations file. Evidence is redacted and links back to the trace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from assay.domains.retail import SUITE_DIR
from tests.support.cli import assay_main

from .conftest import jsonl_conversations


def cli(db: Path | str, *args: str, code: int = 0) -> str:
    result = assay_main(*args, "--store", str(db))
    assert result.code == code, f"exit {result.code}\n{result.stdout}\n{result.stderr}"
    return result.stdout if code == 0 else result.err


def exported(db: Path | str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in cli(db, "badcase", "export").splitlines()]


def partition(cases: list[dict[str, Any]]) -> set[tuple[tuple[str, ...], frozenset[tuple[str, int]]]]:
    """Each badcase as (failing graders, the trials it stands for)."""
    return {
        (
            tuple(c["signature"]["graders"]),
            frozenset((t["task_id"], t["trial_index"]) for t in c["source"]["trials"]),
        )
        for c in cases
    }


def test_an_exported_run_gives_the_badcases_from_run_gives(recorded: dict[str, Any], tmp_path: Path) -> None:
    otlp = recorded["tmp"] / "orig.otlp.jsonl"
    db = tmp_path / "traces.db"
    doc = json.loads(cli(db, "badcase", "from-traces", str(otlp), "--json"))
    failed = [r for r in recorded["run"].results if r.reward == 0]
    assert doc["schema"] == "assay.badcase-proposal/1"
    assert doc["conversations"] == len(recorded["run"].results) and doc["flagged"] == len(failed)
    assert 1 < doc["badcases"] < len(failed) and doc["new"] == doc["badcases"]  # clustered
    from_traces = exported(db)
    assert all(c["source"]["kind"] == "trace" for c in from_traces)
    # the same rule on the same failures: from-run on the run itself gives the same clusters
    proposal = json.loads(cli(recorded["store"], "badcase", "from-run", "orig", "--json"))
    assert proposal["badcases"] == doc["badcases"]
    assert partition(from_traces) == partition(exported(recorded["store"]))
    text = otlp.read_text()
    for case in from_traces:
        refs = case["source"]["traces"]
        assert case["source"]["trace"] == refs[0]["trace_id"] and len(refs) == len(case["source"]["trials"])
        assert all(f'"{r["trace_id"]}"' in text and r["file"] == str(otlp) for r in refs)  # links back
        assert case["suite"]["name"] == "retail" and case["config"]["agent"] == "builtin:retail-flaky"
        assert case["evidence"]["transcript"] and case["evidence"]["grader_reasons"]
        assert case["evidence"]["trace"]["trace_id"] == case["source"]["trace"]
        assert "@example.com" not in json.dumps(case)  # evidence redacted (the export was not)
    assert {c["layer"] for c in from_traces} <= {"policy", "planning", "tool_use"}
    again = json.loads(cli(db, "badcase", "from-traces", str(otlp), "--json"))
    assert again["new"] == 0 and again["known"] == doc["badcases"]  # the same records, no copies
    first = from_traces[0]
    shown = " ".join(cli(db, "badcase", "show", first["badcase_id"]).split())
    assert f"source: trace · {len(first['source']['traces'])} conversation(s)" in shown
    assert first["source"]["trace"] in shown
    rows = json.loads(cli(db, "badcase", "list", "--json"))["badcases"]
    assert {r["source"] for r in rows} == {"trace"} and len(rows) == doc["badcases"]
    # every conversation with --all: the passed ones are badcases of their own
    everything = json.loads(cli(db, "badcase", "from-traces", str(otlp), "--all", "--dry-run", "--json"))
    passed = len(recorded["run"].results) - len(failed)
    assert everything["flagged"] == doc["conversations"]
    assert everything["badcases"] == doc["badcases"] + passed
    # a badcase of assay's own trace names the suite task it was recorded from: it flows back
    suite = tmp_path / "retail"
    shutil.copytree(SUITE_DIR, suite, ignore=shutil.ignore_patterns("__pycache__"))
    promoted = json.loads(cli(db, "badcase", "promote", first["badcase_id"], "--suite", str(suite), "--json"))
    assert promoted["task"]["metadata"]["badcase"]["source_task"] == first["source"]["trials"][0]["task_id"]


def _jsonl(recorded: dict[str, Any], path: Path) -> list[dict[str, Any]]:
    lines = jsonl_conversations(recorded)[:9]
    verdicts: list[dict[str, Any]] = [
        {"metadata": {"verdict": "FAIL", "source": "prod"}},
        {"metadata": {"passed": False}},
        {"metadata": {"reward": 0}},
        {"metadata": {"error": "TimeoutError: the order service did not answer"}},
        {
            "annotations": [
                {
                    "name": "resolution",
                    "annotator_kind": "HUMAN",
                    "result": {"label": "incorrect", "explanation": "refunded lena.sky@example.com unasked"},
                }
            ]
        },
        {"annotations": [{"name": "resolution", "label": "correct", "score": 1}]},  # passed
        {"annotations": [{"name": "resolution", "label": "unresolved"}]},  # says nothing built in
        {
            "annotations": [
                {"name": "resolution", "label": "incorrect", "explanation": "refunded o@x.org unasked"}
            ]
        },
        {"metadata": {"source": "prod"}},  # no verdict
    ]
    for line, extra in zip(lines, verdicts, strict=True):
        line.update(extra)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return lines


def test_jsonl_conversations_flagged_by_metadata_and_annotations(
    recorded: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "prod.jsonl"
    lines = _jsonl(recorded, path)
    db = tmp_path / "j.db"
    doc = json.loads(cli(db, "badcase", "from-traces", str(path), "--json"))
    flagged_ids = [lines[i]["id"] for i in (0, 1, 2, 3, 4, 7)]
    assert doc["conversations"] == 9 and doc["flagged"] == 6
    assert doc["badcases"] == 5  # the two "refunded ... unasked" annotations are one cluster
    cases = exported(db)
    by_trace = {c["source"]["trace"]: c for c in cases}
    assert sorted(t["trace_id"] for c in cases for t in c["source"]["traces"]) == sorted(flagged_ids)
    signatures = sorted(tuple(c["signature"]["graders"]) for c in cases)
    assert signatures == [
        ("passed:failed",),
        ("resolution:incorrect",),
        ("reward:failed",),
        ("status:error",),
        ("verdict:fail",),
    ]
    cluster = next(c for c in cases if c["signature"]["graders"] == ["resolution:incorrect"])
    assert len(cluster["source"]["traces"]) == 2 and "(2 conversations, 2 tasks)" in cluster["phenomenon"]
    assert "TimeoutError" in by_trace[lines[3]["id"]]["phenomenon"]
    assert by_trace[lines[0]["id"]]["evidence"]["metadata"] == {"source": "prod", "verdict": "FAIL"}
    for case in cases:
        assert case["source"]["trials"] == [] and case["source"]["traces"][0]["file"] == str(path)
        assert case["evidence"]["transcript"][0]["role"] == "user"
    text = json.dumps(cases)
    assert "@example.com" not in text and "o@x.org" not in text and "<EMAIL_1>" in text
    # a badcase names the task `assay import traces` gives the conversation (replay it to verify a fix)
    out = assay_main("import", "traces", str(path), "-o", str(tmp_path / "suite"), "--json")
    assert out.code == 0, out.stderr
    tasks = [json.loads(t)["id"] for t in (tmp_path / "suite" / "tasks.jsonl").read_text().splitlines()]
    assert (
        sorted(t for c in cases for t in c["task_ids"])
        == sorted(flagged_ids)
        == sorted(tasks[i] for i in (0, 1, 2, 3, 4, 7))
    )
    more = json.loads(
        cli(db, "badcase", "from-traces", str(path), "--fail-label", "Unresolved", "--dry-run", "--json")
    )
    assert more["flagged"] == 7 and more["badcases"] == 6
    apart = json.loads(cli(db, "badcase", "from-traces", str(path), "--no-cluster", "--dry-run", "--json"))
    assert apart["badcases"] == 6 and apart["rule"] == "one badcase per conversation"


def _span(trace: str, name: str, kind: str, second: int, **extra: Any) -> dict[str, Any]:
    """A span as Phoenix's REST API and phoenix.client return it."""
    return {
        "name": name,
        "context": {"trace_id": trace, "span_id": f"{trace[-8:]}{name[:4]}{second:04d}"},
        "span_kind": kind,
        "parent_id": None if kind == "AGENT" else f"{trace[-8:]}agen0000",
        "start_time": f"2025-06-14T10:00:{second:02d}+00:00",
        "end_time": f"2025-06-14T10:00:{second + 1:02d}+00:00",
        "status_code": "OK",
        "status_message": "",
        "attributes": {"openinference.span.kind": kind},
        **extra,
    }


def _phoenix_trace(trace: str, user: str, answer: str, **root: Any) -> list[dict[str, Any]]:
    llm = _span(trace, "ChatCompletion", "LLM", 1)
    llm["attributes"]["llm"] = {
        "input_messages": [
            {"message": {"role": "system", "content": "You are a support agent."}},
            {"message": {"role": "user", "content": user}},
        ],
        "output_messages": [{"message": {"role": "assistant", "content": answer}}],
    }
    agent = _span(trace, "agent", "AGENT", 0, **root)
    agent["attributes"].update({"input.value": user, "output.value": answer})
    return [agent, llm]


def test_phoenix_spans_evaluators_statuses_and_annotations(tmp_path: Path) -> None:
    t1, t2, t3, t4 = (f"{n:032x}" for n in (0xA1, 0xB2, 0xC3, 0xD4))
    spans = [
        *_phoenix_trace(
            t1,
            "Where is my order?",
            "",
            status_code="ERROR",
            status_message="RateLimitError: 429 from the model endpoint",
        ),
        *_phoenix_trace(t2, "Cancel order #W1 please", "I cancelled order #W2."),
        _span(
            t2,
            "correctness",
            "EVALUATOR",
            2,
            attributes={
                "openinference.span.kind": "EVALUATOR",
                "gen_ai.evaluation.name": "correctness",
                "gen_ai.evaluation.score.label": "incorrect",
                "gen_ai.evaluation.explanation": "cancelled another order than the one asked",
            },
        ),
        *_phoenix_trace(t3, "What is your refund window?", "Refunds are possible for 90 days."),
        *_phoenix_trace(t4, "Hi, my email is mia@example.com", "Thanks Mia, what can I do?"),
    ]
    trace_file = tmp_path / "spans.json"
    trace_file.write_text(json.dumps(spans))
    llm_of_t3 = next(s for s in spans if s["context"]["trace_id"] == t3 and s["span_kind"] == "LLM")
    notes = {
        "data": [
            {
                "span_id": llm_of_t3["context"]["span_id"],
                "name": "faithfulness",
                "annotator_kind": "LLM",
                "result": {"label": "hallucinated", "score": 0.0, "explanation": "the window is 7 days"},
            },
            {"trace_id": t4, "name": "resolution", "annotator_kind": "HUMAN", "result": {"label": "correct"}},
            {
                "span_id": "ffffffffffffffff",
                "name": "x",
                "annotator_kind": "HUMAN",
                "result": {"label": "fail"},
            },
        ]
    }
    note_file = tmp_path / "annotations.json"
    note_file.write_text(json.dumps(notes))
    db = tmp_path / "p.db"
    doc = json.loads(cli(db, "badcase", "from-traces", str(trace_file), str(note_file), "--json"))
    assert doc["conversations"] == 4 and doc["flagged"] == 3 and doc["badcases"] == 3
    assert doc["notes"] == ["1 annotation(s) name a span or trace that is in none of the files: left out"]
    cases = {c["source"]["trace"]: c for c in exported(db)}
    assert set(cases) == {t1, t2, t3}
    assert cases[t1]["signature"]["graders"] == ["status:error"]
    assert "RateLimitError: 429" in cases[t1]["phenomenon"]
    assert cases[t2]["signature"]["graders"] == ["correctness:incorrect"]
    assert "cancelled another order" in cases[t2]["evidence"]["grader_reasons"][0]["reason"]
    assert cases[t3]["signature"]["graders"] == ["faithfulness:hallucinated"]
    assert cases[t3]["evidence"]["verdicts"][0]["annotator"] == "LLM"
    assert [m["role"] for m in cases[t2]["evidence"]["transcript"]] == ["user", "assistant"]
    assert cases[t2]["evidence"]["transcript"][0]["content"] == "Cancel order #W1 please"
    assert {c["source"]["traces"][0]["file"] for c in cases.values()} == {str(trace_file)}
    # the viewer shows a trace badcase with its traces
    from fastapi.testclient import TestClient

    from assay.server import create_app
    from assay.store import Store

    client = TestClient(create_app(Store(db)), base_url="http://127.0.0.1")
    page = client.get(f"/badcases/{cases[t2]['badcase_id']}")
    assert page.status_code == 200 and "trace · 1 conversation(s)" in page.text
    assert f"{t2} · {trace_file}" in page.text and "Cancel order #W1 please" in page.text
    # without the annotations file, t3 says nothing: two badcases
    alone = json.loads(cli(db, "badcase", "from-traces", str(trace_file), "--dry-run", "--json"))
    assert alone["flagged"] == 2 and alone["notes"] == []
    # the annotations file does not get in the way of importing the conversations
    out = assay_main("import", "traces", str(trace_file), str(note_file), "-o", str(tmp_path / "s"), "--json")
    assert out.code == 0 and json.loads(out.stdout)["tasks"] == 4, out.stderr
    assert "no conversation found" in cli(db, "badcase", "from-traces", str(note_file), code=2)
