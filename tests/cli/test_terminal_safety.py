"""What an agent says is shown, never obeyed: escape sequences, C1 controls, carriage
returns and bidirectional overrides in a transcript are printed as escapes by
``assay show`` (text and ``--json``), and a lone surrogate (a model endpoint's JSON
``\\ud800`` escape decodes to one) is stored as U+FFFD instead of stopping the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.cli import assay_main

from assay.core.terminal import printable, shown, terminal_json

HOSTILE = "hello \x1b[2J\x1b]52;c;ZXZpbA==\x07 \x9b31m \u202egnp.exe\r hidden \ud800 end"
RAW = ["\x1b", "\x07", "\x9b", "\u202e", "\r", "\ud800"]

SUITE = """\
name: hostile
defaults: {trials: 1}
tasks:
  - id: t
    user: {opening: "Say hello."}
    graders:
      - text: {contains: hello}
"""


def hostile(conversation: object) -> str:
    return HOSTILE


@pytest.fixture
def db(tmp_path: Path) -> Path:
    (tmp_path / "suite.yaml").write_text(SUITE)
    store = tmp_path / "s.db"
    ran = assay_main(
        "run", str(tmp_path / "suite.yaml"), "--agent", "python:tests.cli.test_terminal_safety:hostile",
        "--store", str(store), "--run-id", "h",
    )  # fmt: skip
    assert ran.code == 0, ran.stderr[-2000:]
    return store


def test_a_lone_surrogate_is_stored_as_a_replacement_character(db: Path) -> None:
    doc = json.loads(
        assay_main("show", "h", "--task", "t", "--trial", "0", "--json", "--store", str(db)).stdout
    )
    said = [m["content"] for m in doc["transcript"]["messages"] if m["role"] == "assistant"]
    assert said == [HOSTILE.replace("\ud800", "\ufffd")]
    assert [t["reward"] for t in doc["trials"]] == [1]  # graded on what the agent said


def test_show_prints_a_transcript_as_escapes(db: Path) -> None:
    text = assay_main(
        "show", "h", "--task", "t", "--trial", "0", "--store", str(db), env={"COLUMNS": "300"}
    ).stdout
    line = next(x for x in text.splitlines() if x.startswith("agent "))
    assert line == "agent " + printable(HOSTILE.replace("\ud800", "\ufffd"))
    assert "\\x1b[2J" in line and "\\x9b" in line and "\\u202e" in line and "\\r" in line
    assert not any(c in text for c in RAW), text


def test_json_output_escapes_what_a_terminal_would_act_on(db: Path) -> None:
    out = assay_main("show", "h", "--task", "t", "--trial", "0", "--json", "--store", str(db)).stdout
    assert not any(c in out for c in RAW)
    assert "\\u009b31m" in out and "\\u202egnp" in out


def test_printable_and_terminal_json() -> None:
    assert printable("plain ✓ text\n\tindented") == "plain ✓ text\n\tindented"
    assert printable("a\x1b[31mb\rc\u2066d\ud800") == "a\\x1b[31mb\\rc\\u2066d\\ud800"
    assert printable("x" * 10, width=4) == "xxxx..."
    assert shown("\x1b") == "'\\x1b'"
    data = {"k\x9b": ["\x7f", "\u202e", "\ud800", "ok ✓", "\x1b"]}
    text = terminal_json(json.dumps(data, ensure_ascii=False))
    assert json.loads(text) == data  # the same value
    assert text.isascii() is False and all(c not in text for c in "\x7f\x9b\u202e\ud800\x1b")
    text.encode("utf-8")  # writable: no lone surrogate left


def test_an_error_line_quoting_a_path_prints_its_control_characters_as_escapes(db: Path) -> None:
    result = assay_main("gate", "h", "--policy", "/nowhere/\x1b[2J.yaml", "--store", str(db))
    assert result.code == 2
    assert result.stderr.strip() == "error: /nowhere/\\x1b[2J.yaml: cannot read: No such file or directory"


def test_labelling_shows_the_transcript_as_escapes(db: Path) -> None:
    """``assay label`` shows the trial to a person before asking: what the agent said is
    printed with its control characters escaped."""
    asked = assay_main("label", "h", "--overall-only", "--labeller", "ana", "--store", str(db), stdin="q\n")
    assert asked.code == 0, asked.stderr
    assert "\\x1b[2J" in asked.stdout and "\\u202egnp.exe" in asked.stdout
    assert not any(c in asked.stdout for c in RAW), asked.stdout


def failing(conversation: object) -> str:
    return "bye \x1b[2J \x9b31m \u202egnp.exe"


def test_badcase_export_to_the_terminal_is_the_same_json_escaped(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE)
    store = str(tmp_path / "b.db")
    agent = "python:tests.cli.test_terminal_safety:failing"
    assert (
        assay_main("run", str(tmp_path / "suite.yaml"), "--agent", agent, "--store", store, "-k", "2").code
        == 0
    )
    assert assay_main("badcase", "from-run", "latest", "--store", store).code == 0
    out = assay_main("badcase", "export", "--store", store).stdout
    assert "\\u009b31m" in out and not any(c in out for c in RAW)
    cases = [json.loads(line) for line in out.splitlines()]
    assert any("bye \x1b[2J \x9b31m \u202egnp.exe" in text for text in _strings(cases))  # the same value


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [s for item in items for s in _strings(item)]


def test_prompt_show_prints_a_suite_s_text_with_its_controls_escaped(tmp_path: Path) -> None:
    """A suite's text (one imported from traces, say) reaches the prompt: ``assay prompt
    show`` prints it with the bidirectional override escaped."""
    (tmp_path / "suite.yaml").write_text(
        'name: ps\ntasks:\n  - id: t\n    user: {opening: "hi", instructions: "say \\u202e this"}\n'
    )
    out = assay_main("prompt", "show", str(tmp_path), "--agent", "openai:gpt-4o-mini", "--user").stdout
    assert "say \\u202e this" in out and "\u202e" not in out
