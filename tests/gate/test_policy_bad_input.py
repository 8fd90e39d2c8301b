"""A gate policy that is not text, or whose thresholds are not finite numbers, is one
located line and exit code 2: never a traceback, never a run blamed for a broken policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import assay_main


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(b"\xbe\x00\xff\x13random bytes\n", ":1: not UTF-8 text (byte 0xbe)", id="binary"),
        pytest.param(
            b"name: ok\n\xffabsolute: []\n", ":2: not UTF-8 text (byte 0xff)", id="binary-on-line-2"
        ),
        pytest.param(
            b"absolute: [{metric: overall.success_rate, min: .nan}]\n",
            ":1: absolute[0].min: Input should be a finite number (got nan)",
            id="min-nan",
        ),
        pytest.param(
            b"absolute: [{metric: overall.success_rate, min: -.inf}]\n",
            ":1: absolute[0].min: Input should be a finite number (got -inf)",
            id="min-minus-inf",
        ),
        pytest.param(
            b"absolute:\n  - metric: usage.latency_s.p95\n    max: .inf\n",
            ":3: absolute[0].max: Input should be a finite number (got inf)",
            id="max-inf",
        ),
        pytest.param(
            b"relative: [{metric: latency_s, margin: .inf}]\n",
            ":1: relative[0].margin: Input should be a finite number (got inf)",
            id="margin-inf",
        ),
        pytest.param(
            b"relative: [{metric: latency_s, margin_pct: .inf}]\n",
            ":1: relative[0].margin_pct: Input should be a finite number (got inf)",
            id="margin-pct-inf",
        ),
        pytest.param(
            b"primary: {metric: latency_s, min_improvement: .inf}\n",
            ":1: primary.min_improvement: Input should be a finite number (got inf)",
            id="min-improvement-inf",
        ),
    ],
)
def test_a_broken_policy_is_one_located_line_and_exit_2(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    policy = tmp_path / "gate.yaml"
    policy.write_bytes(content)
    # the policy is read before the store: no run is needed to refuse it
    result = assay_main(
        "gate", "r1", "--policy", str(policy), "--store", str(tmp_path / "s.db"), env={"COLUMNS": "500"}
    )
    assert result.code == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert f"{policy}{expected}" in lines[0]
