"""``assay import traces`` on broken or hostile input: one line naming the file (and the
line, span or conversation), exit 2, never a traceback, and nothing half-written; what it
does write, ``assay validate`` accepts. In process, through the CLI's own ``main``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import CliResult, assay_main


def _attr(key: str, value: dict[str, Any] | str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value} if isinstance(value, str) else value}


def _span(span_id: str, name: str, at: int, attributes: list[dict[str, Any]]) -> dict[str, Any]:
    span = {"traceId": "t1", "spanId": span_id, "name": name, "attributes": attributes}
    span["startTimeUnixNano"] = str(1_700_000_000_000_000_000 + at * 100_000_000)
    if span_id != "s0":
        span["parentSpanId"] = "s0"
    return span


def _spans(user_line: str = "hi") -> list[dict[str, Any]]:
    """An assay trace: the trial, one user line, one tool call."""
    trial = [_attr("assay.span.kind", "trial"), _attr("assay.task_id", "task-1")]
    user = [_attr("assay.span.kind", "user"), _attr("output.value", user_line)]
    tool = [_attr("assay.span.kind", "tool"), _attr("input.value", '{"a": 1}'), _attr("output.value", "ok")]
    return [_span("s0", "trial", 0, trial), _span("s1", "user", 1, user), _span("s2", "lookup", 2, tool)]


def _otlp(spans: Any) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def _conversation(**changes: Any) -> dict[str, Any]:
    conv: dict[str, Any] = {
        "id": "c1",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [{"id": "1", "name": "lookup", "arguments": '{"a": 1}'}]},
            {"role": "tool", "tool_call_id": "1", "content": "ok"},
            {"role": "assistant", "content": "done"},
        ],
    }
    conv.update(changes)
    return conv


def _with_span_attribute(value: dict[str, Any]) -> dict[str, Any]:
    spans = _spans()
    spans[1]["attributes"].append(_attr("extra", value))
    return _otlp(spans)


def _with_start(start: Any) -> dict[str, Any]:
    spans = _spans()
    spans[1]["startTimeUnixNano"] = start
    return _otlp(spans)


def _tool_calls(value: Any) -> dict[str, Any]:
    conv = _conversation()
    conv["messages"][1]["tool_calls"] = value
    return conv


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": value}
    return value


def _deep_arguments(depth: int) -> dict[str, Any]:
    conv = _conversation()
    conv["messages"][1]["tool_calls"][0]["arguments"] = json.dumps(_nested(depth))
    return conv


def _text(data: Any) -> str:
    return json.dumps(data)


def _lines(*docs: Any) -> str:
    return "".join(json.dumps(d) + "\n" for d in docs)


#: (id, file name, content, what the error line says besides the file).
CASES = [
    # 1. wrong shapes (AttributeError tracebacks before)
    (
        "resourceSpans-a-string",
        "t.json",
        _text({"resourceSpans": "abc"}),
        ":1: resourceSpans: expected a list",
    ),
    (
        "spans-a-string",
        "t.json",
        _text(_otlp("abc")),
        ":1: resourceSpans.0.scopeSpans.0.spans: expected a list, got a string",
    ),
    (
        "arrayValue-a-string",
        "t.json",
        _text(_with_span_attribute({"arrayValue": "s"})),
        ":1: resourceSpans.0.scopeSpans.0.spans.1.attributes.2.value.arrayValue: expected an object",
    ),
    (
        "tool_calls-a-string",
        "c.jsonl",
        _lines(_tool_calls("str")),
        ":1: messages.1.tool_calls: expected a list, got a string",
    ),
    (
        "a-tool-call-a-string",
        "c.jsonl",
        _lines(_conversation(id="c0"), _tool_calls(["str"])),
        ":2: messages.1.tool_calls.0: expected a tool call",
    ),
    # 2. a start time no float holds (OverflowError before)
    (
        "startTimeUnixNano-10**400",
        "t.json",
        _text(_with_start(0)).replace('"startTimeUnixNano": 0', '"startTimeUnixNano": 1' + "0" * 400),
        ":1: resourceSpans.0.scopeSpans.0.spans.1.startTimeUnixNano: expected nanoseconds since 1970",
    ),
    (
        "startTimeUnixNano-10**400-as-text",
        "t.json",
        _text(_with_start("1" + "0" * 400)),
        "spans.1.startTimeUnixNano: expected nanoseconds since 1970",
    ),
    # 3. deep nesting (RecursionError before)
    ("deep-json", "t.json", "[" * 100_000 + "]" * 100_000, ": values nest too deeply to read"),
    (
        "deep-jsonl-line",
        "c.jsonl",
        _lines(_conversation()) + '{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
        ":2: values nest too deeply to read",
    ),
    (
        "deep-tool-arguments",
        "c.jsonl",
        _lines(_deep_arguments(300)),
        ":1: conversation 'c1': cannot be imported: in its task, values nest deeper than 64 levels",
    ),
    # 4. a lone surrogate (UnicodeEncodeError, and an empty tasks.jsonl left, before)
    (
        "surrogate-in-a-message",
        "c.json",
        '{"id": "x", "messages": [{"role": "user", "content": "a\\ud800b"}]}',
        ":1: conversation 'x': cannot be imported: its task's replay.user_turns[0] would hold text with "
        "a lone surrogate '\\ud800'",
    ),
    (
        "surrogate-in-a-span",
        "t.json",
        _text(_otlp(_spans("a\ud800b"))),
        ": trace 't1': conversation 'task-1': cannot be imported: its task's replay.user_turns[0] would "
        "hold text with a lone surrogate",
    ),
    # 5. a NUL (imported, then refused by assay validate, before)
    (
        "nul-in-a-message",
        "c.jsonl",
        _lines(_conversation(id="c0"), {"id": "c1", "messages": [{"role": "user", "content": "a\x00b"}]}),
        ":2: conversation 'c1': cannot be imported: its task's replay.user_turns[0] would hold text with "
        "a NUL character at character 1",
    ),
    (
        "nul-in-the-id",
        "c.jsonl",
        _lines({"id": "x\x00y", "messages": [{"role": "user", "content": "hi"}]}),
        ":1: conversation 'x\\x00y': cannot be imported: its task's description would hold text with a NUL",
    ),
    # other shapes that were tracebacks or several lines
    (
        "a-tool-span-without-a-name",
        "t.json",
        _text(_otlp([*_spans()[:2], {**_spans()[2], "name": ""}])),
        ": a trace cannot be read: RecordedCall name: String should have at least 1 character",
    ),
]


def _import(tmp_path: Path, name: str, content: str) -> tuple[CliResult, Path]:
    source = tmp_path / name
    source.write_bytes(content.encode("utf-8", "surrogatepass"))
    out = tmp_path / "out"
    return assay_main("import", "traces", str(source), "-o", str(out)), out


@pytest.mark.parametrize(("name", "content", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_naming_the_file_and_nothing_is_written(
    tmp_path: Path, name: str, content: str, expected: str
) -> None:
    result, out = _import(tmp_path, name, content)
    assert result.code == 2, (result.code, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"error: {tmp_path / name}"), result.stderr
    assert expected in result.stderr, result.stderr
    assert not (out / "tasks.jsonl").exists() and not (out / "suite.yaml").exists()
    assert not out.exists() or not any(out.iterdir()), list(out.iterdir())


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("t.json", _text(_otlp(_spans()))),
        ("c.jsonl", _lines(_conversation())),
        # ids no suite task id may have, and the same id twice: the importer makes safe, unique ids
        (
            "ids.jsonl",
            _lines(
                _conversation(id="../../evil"),
                _conversation(id="c<script>1"),
                _conversation(id="c1"),
                _conversation(id="c1"),
                _conversation(id="c1", metadata={"trial": "../x"}),
                _conversation(id=".hidden"),
            ),
        ),
    ],
    ids=["otlp", "jsonl", "unsafe-and-duplicate-ids"],
)
def test_what_is_imported_validates(tmp_path: Path, name: str, content: str) -> None:
    result, out = _import(tmp_path, name, content)
    assert result.code == 0, result.stderr
    checked = assay_main("validate", str(out))
    assert checked.code == 0, checked.stdout + checked.stderr


def test_a_run_seed_that_is_not_a_number_is_a_note_not_a_traceback(tmp_path: Path) -> None:
    content = _lines(_conversation(metadata={"suite": "retail", "run_seed": "abc", "task_id": "x"}))
    result, out = _import(tmp_path, "c.jsonl", content)
    assert result.code == 0, result.stderr
    assert "note: run seed 'abc' is not a whole number" in result.err
    assert assay_main("validate", str(out)).code == 0


@pytest.mark.parametrize(
    ("agent", "kept"),
    [
        ("builtin:retail-careful", True),
        ("openai:gpt-4o", True),
        ("support-bot", False),
        ("python:os:system", False),
    ],
)
def test_the_agent_a_trace_names_is_kept_only_when_assay_can_run_it(
    tmp_path: Path, agent: str, kept: bool
) -> None:
    """Another application's name for its agent made a suite ``assay validate`` refused;
    a ``python:`` spec would have had assay import code a trace file named."""
    result, out = _import(tmp_path, "c.jsonl", _lines(_conversation(metadata={"agent": agent})))
    assert result.code == 0, result.stderr
    header = (out / "suite.yaml").read_text()
    assert (f"agent: {agent}" in header) is kept, header
    assert ("give --agent when you replay" in result.err) is not kept, result.err
    checked = assay_main("validate", str(out))
    assert checked.code == 0, checked.stdout + checked.stderr
