"""A scoring profile that is not UTF-8 text is one located line and exit code 2 (from
``assay report --profile`` as from ``load_profile``), never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.cli import assay_main

from assay.box import load_profile
from assay.errors import SuiteError


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(b"\xbe\x00\xff\x13random bytes\n", ":1: not UTF-8 text (byte 0xbe)", id="binary"),
        pytest.param(
            b"name: box\nversion: 1\n\xe9metrics: {}\n", ":3: not UTF-8 text (byte 0xe9)", id="latin-1"
        ),
    ],
)
def test_a_profile_that_is_not_text_is_one_located_line(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    profile = tmp_path / "box.yaml"
    profile.write_bytes(content)
    with pytest.raises(SuiteError) as caught:
        load_profile(profile)
    assert str(caught.value) == f"{profile}{expected}; save the file as UTF-8"
    assert caught.value.exit_code == 2
    # the profile is read before the store: no run is needed to refuse it
    result = assay_main(
        "report", "r1", "--profile", str(profile), "--store", str(tmp_path / "s.db"), env={"COLUMNS": "500"}
    )
    assert result.code == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{profile}{expected}" in lines[0], lines
