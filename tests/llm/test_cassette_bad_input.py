"""A cassette that cannot be replayed or recorded (``assay run --replay/--record``) is one
located line and exit code 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.cli import assay_main

from assay.llm import Cassette, CassetteError

ENTRY = '{"hash": "h", "completion": {}}\n'


def _write(tmp_path: Path, what: str) -> Path:
    """The path given to ``--replay``/``--record`` for the case ``what``."""
    path = tmp_path / "c.jsonl"
    if what == "5000-digits":
        path.write_text(ENTRY + '{"hash": "h", "n": ' + "9" * 5000 + "}\n")
    elif what == "deep":
        path.write_text(ENTRY + "[" * 100_000 + "\n")
    elif what == "folder":
        path.mkdir()
    elif what == "under-a-file":
        (tmp_path / "file").write_text("x")
        path = tmp_path / "file" / "c.jsonl"
    return path


@pytest.mark.parametrize(
    ("mode", "what", "expected"),
    [
        pytest.param(
            "replay",
            "5000-digits",
            "c.jsonl:2: not a cassette entry (a number longer than 4,300 digits)",
            id="5000",
        ),
        pytest.param("replay", "deep", "c.jsonl:2: not a cassette entry (values nest too deeply)", id="deep"),
        pytest.param("replay", "folder", "c.jsonl: is a folder, not a cassette file", id="replay-folder"),
        pytest.param("record", "folder", "c.jsonl: is a folder, not a cassette file", id="record-folder"),
        pytest.param(
            "record",
            "under-a-file",
            "c.jsonl: cannot write cassette ({dir}/file is a file, not a folder)",
            id="parent",
        ),
    ],
)
def test_a_bad_cassette_is_one_line_and_exit_2(tmp_path: Path, mode: str, what: str, expected: str) -> None:
    path = _write(tmp_path, what)
    expected = expected.format(dir=tmp_path)
    with pytest.raises(CassetteError) as caught:
        Cassette(path, mode)  # type: ignore[arg-type]
    assert str(caught.value).endswith(expected) and caught.value.exit_code == 2
    store = tmp_path / "s.db"
    result = assay_main(
        "run", "retail", "-k", "1", f"--{mode}", str(path), "--store", str(store), env={"COLUMNS": "500"}
    )
    assert result.code == 2, (result.stdout, result.stderr[-2000:])
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{path}:" in lines[0] and expected in lines[0], lines
