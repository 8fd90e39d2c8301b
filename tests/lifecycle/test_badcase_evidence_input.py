"""``assay badcase add --evidence FILE`` with JSON that cannot be walked or stored (an
integer Python does not convert, values nested too deeply, a lone surrogate): one line
naming the file, exit code 2, nothing stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import assay_main

ADD = ("badcase", "add", "--phenomenon", "x", "--layer", "policy", "--severity", "high")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(
            '{"n": ' + "9" * 5000 + "}",
            "invalid JSON: Exceeds the limit (4300 digits) for integer string conversion",
            id="5000-digits",
        ),
        pytest.param("[" * 100_000, "values nest deeper than 64 levels", id="deep"),
        pytest.param("[" * 900 + "]" * 900, "values nest deeper than 64 levels", id="deep-but-parseable"),
        pytest.param('{"a": "\\ud800"}', "a: text with a lone surrogate '\\ud800'", id="lone-surrogate"),
    ],
)
def test_unusable_json_evidence_is_one_line_and_exit_2(tmp_path: Path, content: str, expected: str) -> None:
    evidence = tmp_path / "report.json"
    evidence.write_text(content)
    db = tmp_path / "s.db"
    result = assay_main(*ADD, "--evidence", str(evidence), "--store", str(db), env={"COLUMNS": "500"})
    assert result.code == 2, (result.stdout, result.stderr[-2000:])
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"--evidence {evidence}: {expected}" in lines[0], lines
    assert not db.exists()  # refused before the store is opened


def test_text_that_is_not_json_is_still_kept_as_text(tmp_path: Path) -> None:
    evidence = tmp_path / "report.txt"
    evidence.write_text("[ not json: the customer wrote ann@x.org")
    result = assay_main(*ADD, "--evidence", str(evidence), "--store", str(tmp_path / "s.db"), "--json")
    assert result.code == 0, result.stderr
    assert '"report": "[ not json: the customer wrote <EMAIL_1>"' in result.stdout
