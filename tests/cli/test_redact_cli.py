"""``assay redact`` as a user runs it: JSON, JSONL and text files, reports, errors."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import CliResult, assay_main

ROOT = Path(__file__).parents[2]
KEY = "sk-proj-Q1w2E3r4T5y6U7i8O9p0AsDfGhJkL9x8"


def assay(*args: str, stdin: str | None = None, **env: str) -> CliResult:
    """``assay ARGS`` in process; ``env`` is set for the call only."""
    return assay_main(*args, stdin=stdin, env=env, cwd=ROOT)


def test_json_file_to_output_with_report(tmp_path: Path) -> None:
    src = tmp_path / "t.json"
    record = {
        "messages": [
            {"role": "user", "content": "I'm ann@x.org, card 4111 1111 1111 1111"},
            {"role": "tool", "content": json.dumps({"email": "ann@x.org", "first_name": "Ann"})},
        ],
        "note": "Ann again",
        "error": f"Incorrect API key provided: {KEY}",
    }
    src.write_text(json.dumps(record))
    dst = tmp_path / "t.redacted.json"
    proc = assay("redact", str(src), "-o", str(dst), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["schema"] == "assay.redact-report/1"
    assert report["counts"] == {"CARD": 1, "EMAIL": 2, "OPENAI_KEY": 1, "PERSON_NAME": 2}
    assert report["records"] == report["redacted_records"] == 1
    out = json.loads(dst.read_text())
    assert out["messages"][0]["content"] == "I'm <EMAIL_1>, card <CARD_1>"
    tool = json.loads(out["messages"][1]["content"])
    assert tool == {"email": "<EMAIL_1>", "first_name": "<PERSON_NAME_1>"}
    assert out["note"] == "<PERSON_NAME_1> again"
    text = dst.read_text()
    assert "ann@x.org" not in text and KEY not in text and "4111" not in text
    assert "ann@x.org" not in proc.stdout  # the report holds counts, not values


def test_jsonl_records_get_their_own_pseudonyms(tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    src.write_text('{"a": "x@y.io and z@y.io"}\n\n{"a": "z@y.io"}\n')
    proc = assay("redact", str(src))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert json.loads(lines[0]) == {"a": "<EMAIL_1> and <EMAIL_2>"}
    assert lines[1] == ""
    assert json.loads(lines[2]) == {"a": "<EMAIL_1>"}
    assert "redacted 3 value(s) in 2 of 2 record(s): EMAIL 3" in proc.stderr


def test_text_from_stdin_with_a_config_and_a_known_secret(tmp_path: Path) -> None:
    config = tmp_path / "redact.yaml"
    config.write_text("style: label\nkinds:\n  PHONE: false\n")
    proc = assay(
        "redact",
        "-",
        "--config",
        str(config),
        "--secret-env",
        "MY_KEY",
        stdin="call 415-555-0134, mail a@b.io, key abcdef123456XYZ\n",
        MY_KEY="abcdef123456XYZ",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "call 415-555-0134, mail <EMAIL>, key <SECRET>\n"


def test_dry_run_report_only(tmp_path: Path) -> None:
    src = tmp_path / "notes.txt"
    src.write_text("IBAN DE89 3704 0044 0532 0130 00\n")
    proc = assay("redact", str(src), "--json")
    assert proc.returncode == 0
    report = json.loads(proc.stdout)
    assert report["format"] == "text" and report["output"] is None and report["counts"] == {"IBAN": 1}


def test_user_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n{oops\n')
    cases = [
        (("redact", str(tmp_path / "missing.json")), "no such file"),
        (("redact", str(bad)), "bad.jsonl:2: invalid JSON"),
        (("redact", str(bad), "-o", str(bad)), "would overwrite the input"),
        (("redact", str(bad), "--format", "xml"), "--format 'xml'"),
        (("redact", str(bad), "--config", str(tmp_path / "none.yaml")), "cannot read the config"),
        (("redact", "-", "--secret-env", "NOT_SET_ANYWHERE"), "is not set"),
    ]
    for args, message in cases:
        proc = assay(*args, stdin="")
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
