"""``assay rank`` on hostile or broken votes files: one located line per problem and exit
code 2, never a traceback; ``--resamples`` is bounded."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.cli import assay_main

ROW = '{"model_a": "x", "model_b": "y", "winner": "a"'


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        pytest.param(
            "v.jsonl",
            '{"model_a": ' + "9" * 5000 + ', "model_b": "y", "winner": "a"}\n',
            "v.jsonl:1: not valid JSON (Exceeds the limit (4300 digits) for integer string conversion",
            id="5000-digit-integer",
        ),
        pytest.param(
            "v.jsonl",
            ROW + "}\n" + "[" * 100_000 + "\n",
            "v.jsonl:2: values nest deeper than 64 levels",
            id="deep",
        ),
        pytest.param(
            "v.jsonl",
            ROW + ', "question_id": ' + "[" * 200 + "]" * 200 + "}\n",
            "v.jsonl:1: values nest deeper than 64 levels",
            id="deep-but-parseable",
        ),
        pytest.param(
            "v.jsonl",
            ROW + ', "timestamp": 1e20}\n',
            "v.jsonl:1: timestamp: 1e+20 is out of range for Unix seconds (years 1 to 9999)",
            id="timestamp-1e20",
        ),
        pytest.param(
            "v.jsonl",
            ROW + ', "timestamp": "-1e300"}\n',
            "v.jsonl:1: timestamp: -1e300 is out of range for Unix seconds",
            id="timestamp-text",
        ),
        pytest.param(
            "v.jsonl",
            ROW + ', "timestamp": ' + "9" * 400 + "}\n",
            "v.jsonl:1: timestamp: must be a finite number of Unix seconds",
            id="timestamp-400-digits",
        ),
        pytest.param(
            "v.csv",
            "model_a,model_b,winner\nx,y,a\nx," + "y" * 140_000 + ",a\n",
            "v.csv:3: not valid CSV (field larger than field limit (131072))",
            id="csv-field-over-limit",
        ),
    ],
)
def test_a_hostile_votes_file_is_one_located_line(
    tmp_path: Path, name: str, content: str, expected: str
) -> None:
    votes = tmp_path / name
    votes.write_text(content)
    result = assay_main("rank", str(votes), cwd=tmp_path, env={"COLUMNS": "500"})
    assert result.code == 2, (result.stdout, result.stderr[-2000:])
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], lines


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(("{dir}",), "votes file {dir} is a folder, not a file", id="folder"),
        pytest.param(
            ("--resamples", "100000000", "{dir}/v.jsonl"),
            "Invalid value for '--resamples'",
            id="resamples-over-100000",
        ),
    ],
)
def test_rank_usage_mistakes_exit_2(tmp_path: Path, args: tuple[str, ...], expected: str) -> None:
    (tmp_path / "v.jsonl").write_text(ROW + "}\n")
    result = assay_main("rank", *(a.format(dir=tmp_path) for a in args), env={"COLUMNS": "500"})
    assert result.code == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert expected.format(dir=tmp_path) in result.err
    if args[0] == "--resamples":
        assert "100000" in result.err  # the bound is said


def test_a_votes_line_over_the_line_limit_is_one_located_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Votes files stream line by line (a large one is not read whole); a line longer
    than the limit is named, not parsed."""
    import assay.report.ranking as ranking

    monkeypatch.setattr(ranking, "MAX_LINE_BYTES", 2 * 1024 * 1024)
    votes = tmp_path / "v.jsonl"
    votes.write_text(ROW + "}\n" + ROW + ', "question_id": "' + "q" * (2 * 1024 * 1024) + '"}\n')
    result = assay_main("rank", str(votes), cwd=tmp_path, env={"COLUMNS": "500"})
    assert result.code == 2, result.stderr[-2000:]
    assert "v.jsonl:2: line longer than 2 MB" in result.stderr
