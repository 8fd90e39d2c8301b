"""``assay rank`` as a user runs it: votes files (JSONL, CSV), runs, located errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.cli import CliResult, assay_main

from assay.errors import AssayError
from assay.report.ranking import battles_from_runs, load_votes
from assay.stats import bradley_terry

ROOT = Path(__file__).parents[2]
VOTES = ROOT / "examples" / "votes.jsonl"


def assay(*args: str, **env: str) -> CliResult:
    """``assay ARGS`` in process, 120 columns wide (the toy domain comes from tests/conftest.py)."""
    return assay_main(*args, cwd=ROOT, env={"COLUMNS": "120", **env})


def bad(proc: CliResult) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    return " ".join(proc.stderr.split())  # the console wraps long lines


def test_shipped_votes_print_ratings_cis_and_win_matrix() -> None:
    proc = assay("rank", str(VOTES))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Bradley–Terry ratings · 1213 battles · 95% bootstrap CI" in out
    assert "cirrus-large-0715" in out and "observed win rate" in out
    lines = [line for line in out.splitlines() if line.strip().startswith("1 ")]
    assert "cirrus-large-0715" in lines[0]  # the strongest model ranks first


def test_json_output_is_consistent_with_the_library() -> None:
    result = json.loads(assay("rank", str(VOTES), "--json", "--resamples", "50").stdout)
    models = result["models"]
    assert result["method"] == "bradley_terry" and result["n_battles"] == 1213
    assert [m["rank"] for m in models] == list(range(1, 7))
    assert all(m["low"] <= m["rating"] <= m["high"] for m in models)
    assert abs(sum(m["rating"] for m in models) / 6 - 1000) < 0.01  # mean anchored at init
    rows = [json.loads(line) for line in VOTES.read_text().splitlines()]
    triples = []
    for r in rows:
        w = r["winner"]
        w = "a" if w == r["model_a"] else "b" if w == r["model_b"] else w
        triples.append((r["model_a"], r["model_b"], w))
    direct = bradley_terry(triples)
    assert all(abs(direct[m["model"]] - m["rating"]) < 0.01 for m in models)
    obs = result["observed"]
    i, j = obs["models"].index("atlas-7b"), obs["models"].index("atlas-70b")
    assert obs["counts"][i][j] == obs["counts"][j][i] > 0
    assert abs(obs["rates"][i][j] + obs["rates"][j][i] - 1) < 1e-9
    assert "expected" in result


def test_elo_and_history() -> None:
    proc = assay("rank", str(VOTES), "--method", "elo", "--history", "week", "--json", "--resamples", "20")
    result = json.loads(proc.stdout)
    assert result["method"] == "elo" and result["k"] == 4
    history = result["history"]
    assert len(history) == 9 and history[-1]["n_battles"] == 1213
    assert "cirrus-large-0715" not in history[0]["ratings"] and "cirrus-large-0715" in history[-1]["ratings"]
    text = assay("rank", str(VOTES), "--history", "month", "--resamples", "20").stdout
    assert "ratings at the end of each month" in text


def test_csv_votes_with_model_name_winners(tmp_path: Path) -> None:
    f = tmp_path / "v.csv"
    f.write_text(
        "model_a,model_b,winner,timestamp,question_id\n"
        "x,y,x,2026-01-05,q1\ny,x,tie,2026-01-06,q2\nx,z,b,1767600000,q3\nz,y,z,2026-01-07T10:00:00Z,q4\n"
        "y,z,y,,q5\n"
    )
    result = json.loads(assay("rank", str(f), "--json", "--resamples", "20").stdout)
    assert result["n_battles"] == 5
    assert {m["model"] for m in result["models"]} == {"x", "y", "z"}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "v.jsonl",
            '{"model_a": "x", "model_b": "y", "winner": "a"}\n'
            '{"model_a": "x", "model_b": "y", "winner": "c"}\n',
            "v.jsonl:2: winner: must be a, b, tie or one of the two model names ('x', 'y'), got 'c'",
        ),
        (
            "v.jsonl",
            '{"model_a": "x", "model_b": "y", "winner": "a"}\nnot json\n',
            "v.jsonl:2: not valid JSON",
        ),
        ("v.jsonl", '{"model_a": "x", "winner": "a"}\n', "v.jsonl:1: model_b: is missing"),
        (
            "v.jsonl",
            '{"model_a": "x", "model_b": "x", "winner": "a"}\n',
            "v.jsonl:1: model_b: a model cannot battle itself",
        ),
        (
            "v.jsonl",
            '{"model_a": "x", "model_b": "y", "winner": "a", "timestamp": "last tuesday"}\n',
            "v.jsonl:1: timestamp: 'last tuesday' is not an ISO 8601",
        ),
        ("v.jsonl", "[1, 2]\n", "v.jsonl:1: each line must be a JSON object"),
        ("v.jsonl", "\n", "holds no votes"),
        ("v.csv", "model_a,model_b\nx,y\n", "v.csv:1: header: missing column(s) winner"),
        ("v.csv", "model_a,model_b,winner\nx,y,a\nx,y,\n", "v.csv:3: winner: is missing"),
    ],
)
def test_bad_votes_files_are_located(tmp_path: Path, name: str, content: str, message: str) -> None:
    f = tmp_path / name
    f.write_text(content)
    with pytest.raises(AssayError) as caught:
        load_votes(f)
    assert message in str(caught.value)


def test_a_bad_votes_file_exits_2_with_every_problem(tmp_path: Path) -> None:
    f = tmp_path / "v.jsonl"
    f.write_text(
        '{"model_a": "x", "model_b": "y", "winner": "c"}\nnot json\n{"model_a": "x", "winner": "a"}\n'
    )
    err = bad(assay("rank", str(f)))
    assert "v.jsonl:1: winner:" in err and "v.jsonl:2: not valid JSON" in err and "v.jsonl:3: model_b:" in err


def test_usage_errors(tmp_path: Path) -> None:
    assert "does not exist" in bad(assay("rank", str(tmp_path / "missing.jsonl")))
    assert "--method must be bt or elo" in bad(assay("rank", str(VOTES), "--method", "glicko"))
    assert "two or more run ids" in bad(assay("rank", "--runs", "one"))


def test_undefeated_model_needs_a_prior(tmp_path: Path) -> None:
    f = tmp_path / "v.jsonl"
    f.write_text(
        "".join(json.dumps({"model_a": "x", "model_b": "y", "winner": "a"}) + "\n" for _ in range(3))
    )
    err = bad(assay("rank", str(f)))
    assert "not identifiable" in err and "--prior 0.01" in err
    ok = assay("rank", str(f), "--prior", "0.01", "--json", "--resamples", "20")
    assert ok.returncode == 0 and json.loads(ok.stdout)["models"][0]["model"] == "x"
    assert assay("rank", str(f), "--method", "elo", "--resamples", "20").returncode == 0


def test_rank_runs(tmp_path: Path) -> None:
    from tests.server.support import toy_runs

    from assay.store import Store

    db = tmp_path / "s.db"
    toy_runs(tmp_path, Store(db))
    store = {"ASSAY_STORE": str(db)}
    err = bad(assay("rank", "--runs", "careful", "flaky", **store))
    assert "['careful'] never lost or tied" in err and "--prior 0.01" in err  # a strictly better run
    args = ("rank", "--runs", "careful", "flaky", "--prior", "0.01", "--resamples", "20")
    result = json.loads(assay(*args, "--json", **store).stdout)
    assert result["n_battles"] == 6 and [m["model"] for m in result["models"]] == ["careful", "flaky"]
    careful = result["models"][0]
    assert careful["wins"] + careful["ties"] == 6 and careful["losses"] == 0
    assert "no run 'nope'" in bad(assay("rank", "--runs", "careful", "nope", **store))


def test_battles_from_runs_refuses_duplicates_and_other_suites(tmp_path: Path) -> None:
    from tests.server.support import toy_runs
    from tests.server.synth import synth_run

    from assay.runner.api import Run
    from assay.store import Store

    store = Store(tmp_path / "s.db")
    toy_runs(tmp_path, store)
    synth_run(store, "other-suite", tasks=2, k=1)
    careful = Run.load("careful", store)
    with pytest.raises(AssayError, match="named twice"):
        battles_from_runs([careful, careful])
    with pytest.raises(AssayError, match="rank runs of one suite version"):
        battles_from_runs([careful, Run.load("other-suite", store)])
    with pytest.raises(AssayError, match="at least two runs"):
        battles_from_runs([careful])


def test_battles_from_runs_read_the_reward_column_not_the_trials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.server.support import toy_runs

    from assay.runner.api import Run
    from assay.store import Store

    store = Store(tmp_path / "s.db")
    toy_runs(tmp_path, store)
    runs = [Run.load("careful", store), Run.load("flaky", store)]
    expected = {}  # each task's winner from the trials themselves
    for task in runs[0].frame().task_ids:
        a, b = ([r.reward for r in run.results if r.task_id == task and r.reward is not None] for run in runs)
        if a and b:
            ra, rb = sum(a) / len(a), sum(b) / len(b)
            expected[task] = "a" if ra > rb else "b" if rb > ra else "tie"
    fresh = [Run.load("careful", store), Run.load("flaky", store)]

    def no_trials(*args: object, **kwargs: object) -> None:
        raise AssertionError("ranking loaded trial objects")

    monkeypatch.setattr(Store, "load_results", no_trials)
    battles = battles_from_runs(fresh)
    assert {b.question_id: b.winner for b in battles} == expected and len(expected) == 6
