"""``assay redact`` on JSON it cannot walk or write back (an integer Python does not
convert, values nested too deeply, a lone surrogate): one located line, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.cli import assay_main

BIG = "9" * 5000
DEEP = "[" * 100_000
PARSEABLE_DEEP = "[" * 900 + "]" * 900  # json reads it; the redactor would recurse too deep


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        pytest.param(
            "d.json",
            '{"n": ' + BIG + "}",
            "d.json: invalid JSON: Exceeds the limit (4300 digits) for integer string conversion",
            id="json-5000-digits",
        ),
        pytest.param("d.json", DEEP, "d.json: values nest deeper than 64 levels", id="json-deep"),
        pytest.param(
            "d.json", PARSEABLE_DEEP, "d.json: values nest deeper than 64 levels", id="json-deep-900"
        ),
        pytest.param(
            "d.json",
            '{"a": "\\ud800"}',
            "d.json: a: text with a lone surrogate '\\ud800' at character 0",
            id="json-lone-surrogate",
        ),
        pytest.param(
            "d.jsonl",
            '{"ok": 1}\n{"n": ' + BIG + "}\n",
            "d.jsonl:2: invalid JSON: Exceeds the limit (4300 digits)",
            id="jsonl-5000-digits",
        ),
        pytest.param(
            "d.jsonl",
            '{"ok": 1}\n' + DEEP + "\n",
            "d.jsonl:2: values nest deeper than 64 levels",
            id="jsonl-deep",
        ),
    ],
)
def test_unwalkable_json_is_one_located_line(tmp_path: Path, name: str, content: str, expected: str) -> None:
    src = tmp_path / name
    src.write_text(content)
    result = assay_main("redact", str(src), "-o", str(tmp_path / "out"), env={"COLUMNS": "500"})
    assert result.code == 2, (result.stdout, result.stderr[-2000:])
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{tmp_path}/{expected}" in lines[0], lines
    assert not (tmp_path / "out").exists()
