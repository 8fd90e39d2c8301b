"""`assay compare`, `gate`, `plan`, `run --until-decided` as a user runs them.

The runs are made once, in process, on the built-in retail suite (one trial per task).
Every command calls the CLI's entry point (``assay.cli.main``: exit codes, one-line errors)
in process, to keep the suite fast: the acceptance checks through
tests/support/cli.py (the store in ``ASSAY_STORE``, run from the checkout, 160 columns),
the rest with ``--store`` under capsys.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from tests.support.cli import CliResult, assay_main

import assay
from assay.store import Store

ROOT = Path(__file__).parents[2]
RUNS = {
    "careful": ("builtin:retail-careful", 0),
    "hasty": ("builtin:retail-hasty", 0),
    "careful-s1": ("builtin:retail-careful", 1),
    "flaky": ("builtin:retail-flaky", 0),
    "flaky-s1": ("builtin:retail-flaky", 1),
}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("decide") / "runs.db"
    store = Store(path)
    for run_id, (agent, seed) in RUNS.items():
        assay.run("retail", agent=agent, trials=1, seed=seed, store=store, run_id=run_id)
    return path


def assay_cli(*args: str, db: Path, code: int | None = 0) -> CliResult:
    """Run the CLI as a user (or CI) would: the store named by ``ASSAY_STORE``, from the checkout."""
    proc = assay_main(*args, env={"ASSAY_STORE": str(db), "COLUMNS": "160"}, cwd=ROOT)
    if code is not None and proc.returncode != code:
        raise AssertionError(f"exit {proc.returncode} (expected {code})\n{proc.stdout}\n{proc.stderr}")
    return proc


def main_cli(*args: str, db: Path, capsys: pytest.CaptureFixture[str], code: int = 0) -> tuple[str, str]:
    """Call ``assay.cli.main`` in process; returns (stdout, stderr with whitespace folded)."""
    from assay.cli import main

    argv = sys.argv
    sys.argv = ["assay", *args, *(("--store", str(db)) if args[0] != "plan" or "--from-run" in args else ())]
    try:
        with pytest.raises(SystemExit) as info:
            main()
    finally:
        sys.argv = argv
    captured = capsys.readouterr()
    assert info.value.code == code, (
        f"exit {info.value.code} (expected {code})\n{captured.out}\n{captured.err}"
    )
    return captured.out, " ".join(captured.err.split())


def test_compare_careful_vs_hasty_is_significant(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    md = tmp_path / "compare.md"
    doc = json.loads(assay_cli("compare", "careful", "hasty", "--markdown", str(md), "--json", db=db).stdout)
    pair = doc["comparisons"][0]
    quality = pair["metrics"][0]
    assert quality["metric"] == "quality" and quality["p_adjusted"] < 0.001 and quality["delta"] < -0.8
    assert pair["decision"]["verdict"] == "do_not_switch"
    assert pair["decision"]["line"].startswith("builtin:retail-hasty is worse on quality (")
    assert doc["adjustment"]["name"] == "Holm" and doc["box"]["skipped"]["cost_usd"]
    assert doc["box"]["ranking"][0]["run_id"] == "careful"
    assert md.read_text().startswith("## assay compare: baseline `careful`")
    text = main_cli("compare", "careful", "hasty", "--profile", "examples/box.yaml", db=db, capsys=capsys)[0]
    assert "is worse on quality" in text and "retail-support" in text


@pytest.mark.parametrize(("a", "b"), [("careful", "careful-s1"), ("flaky", "flaky-s1")])
def test_compare_two_seeds_of_one_agent_finds_no_difference(
    db: Path, a: str, b: str, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(main_cli("compare", a, b, "--json", db=db, capsys=capsys)[0])
    pair = doc["comparisons"][0]
    assert pair["metrics"][0]["p_adjusted"] > 0.05
    assert pair["decision"]["verdict"] == "no_difference"
    assert "the suite can detect ≥" in pair["decision"]["line"]
    assert any("different seeds" in note for note in pair["notes"])


def test_compare_three_runs_and_options(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("compare", "careful", "hasty", "flaky", "--adjust", "bh", "--match", "trial", "--json")
    doc = json.loads(main_cli(*args, db=db, capsys=capsys)[0])
    assert [c["candidate"] for c in doc["comparisons"]] == ["hasty", "flaky"]
    assert doc["adjustment"]["method"] == "bh" and doc["comparisons"][0]["match"] == "trial"
    text = main_cli("compare", "careful", "flaky", db=db, capsys=capsys)[0]
    assert "Decision (" in text and "Holm-adjusted" in text
    _, err = main_cli("compare", "careful", "hasty", "--adjust", "sidak", db=db, capsys=capsys, code=2)
    assert err == "error: --adjust must be one of holm, bonferroni, bh, not 'sidak'"


def test_gate_passes_careful_fails_hasty_on_high_risk(db: Path, tmp_path: Path) -> None:
    junit, md = tmp_path / "junit.xml", tmp_path / "gate.md"
    # The example's relative latency check allows a slowdown of 50% or 0.5 s, the larger:
    # two runs made one after the other on a loaded machine differ by milliseconds.
    policy = ROOT / "examples" / "gate.yaml"
    assert "margin: 0.5" in policy.read_text()
    ok = assay_cli(
        "gate",
        "careful",
        "--policy",
        str(policy),
        "--baseline",
        "careful-s1",
        "--junit",
        str(junit),
        "--json",
        db=db,
        code=0,
    )
    verdict = json.loads(ok.stdout)
    assert verdict["passed"] and verdict["counts"]["skip"] == 0
    bad = assay_cli(
        "gate",
        "hasty",
        "--policy",
        "examples/gate.yaml",
        "--junit",
        str(junit),
        "--markdown",
        str(md),
        "--json",
        db=db,
        code=1,
    )
    doc = json.loads(bad.stdout)
    assert "JUnit XML written to" in bad.stderr and not doc["passed"]
    high_risk = next(c for c in doc["checks"] if c["kind"] == "high_risk")
    assert high_risk["status"] == "fail" and high_risk["details"]["failing_tasks"]
    root = ET.parse(junit).getroot()
    tasks, gate = root.findall("testsuite")
    assert int(tasks.get("tests", 0)) == 52 and int(tasks.get("failures", 0)) == 50  # holdout left out
    failure = tasks.find("testcase/failure")
    assert failure is not None and failure.text and "trial 0:" in failure.text
    gate_cases = {c.get("name"): c for c in gate.findall("testcase")}
    assert gate_cases["high-risk tasks"].find("failure") is not None
    assert md.read_text().startswith("## ❌ assay gate failed: retail-release v1")
    assert "### ❌ high-risk tasks" in md.read_text()


def test_gate_flaky_clears_the_average_but_not_the_high_risk_gate(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = main_cli(
        "gate", "flaky", "--policy", "examples/gate.yaml", "--json", db=db, capsys=capsys, code=1
    )
    doc = json.loads(out)
    status = {c["name"]: c["status"] for c in doc["checks"]}
    assert status["overall success"] == "pass" and status["high-risk tasks"] == "fail"


def test_gate_bad_policy_exits_2_with_located_errors(db: Path, tmp_path: Path) -> None:
    policy = tmp_path / "gate.yaml"
    policy.write_text("absolute:\n  - {metric: overall.sucess_rate, min: 0.9}\n")
    proc = assay_cli("gate", "careful", "--policy", str(policy), db=db, code=2)
    assert f"{policy}:2: absolute[0].metric:" in proc.stderr and "Traceback" not in proc.stderr


def test_gate_input_errors_exit_2(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, err = main_cli(
        "gate", "careful", "--policy", str(tmp_path / "nope.yaml"), db=db, capsys=capsys, code=2
    )
    assert "nope.yaml: cannot read: No such file or directory" in err
    _, err = main_cli("gate", "nope", "--policy", "examples/gate.yaml", db=db, capsys=capsys, code=2)
    assert "no run 'nope'" in err


def test_compare_refuses_different_suite_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "two.db"
    (tmp_path / "suite.yaml").write_text(
        "name: bank\ndomain: toy\ntasks:\n  - {id: dep, template: deposit, instances: 2}\n"
    )
    agent = "python:tests.toyagents:DepositAgent"
    assay.run(str(tmp_path), agent=agent, trials=1, store=Store(db), run_id="bank")
    (tmp_path / "suite.yaml").write_text(
        "name: bank\nversion: 2\ndomain: toy\ntasks:\n  - {id: dep, template: deposit, instances: 3}\n"
    )
    assay.run(str(tmp_path), agent=agent, trials=1, store=Store(db), run_id="bank2")
    _, err = main_cli("compare", "bank", "bank2", db=db, capsys=capsys, code=2)
    assert err.startswith("error: runs bank (suite bank v1, hash ")
    assert err.endswith(
        "were made on different suite versions; pass --common-only (common_only=True) "
        "to compare them on the tasks they share"
    )
    out, _ = main_cli("compare", "bank", "bank2", "--common-only", "--json", db=db, capsys=capsys)
    notes = json.loads(out)["comparisons"][0]["notes"]
    assert len(notes) == 1 and notes[0].startswith("different suite versions (bank: bank v1 hash ")
    assert notes[0].endswith(
        "compared only on the 2 task(s) both versions share with the same content; left out: 0 changed, "
        "0 only in bank, 1 only in bank2"
    )


def test_plan(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("plan", "--baseline", "0.7", "--mde", "0.03", "--suite", "retail", "-k", "4", "--json")
    doc = json.loads(main_cli(*args, db=db, capsys=capsys)[0])
    assert doc["trials_per_arm"] == 3554 and doc["tasks_needed"] == 2222 and doc["suite_tasks"] == 52
    assert 15 < doc["detectable_pts"] < 25
    text, _ = main_cli(
        "plan",
        "--baseline",
        "0.7",
        "--mde",
        "0.05",
        "--paired",
        "--discordance",
        "0.15",
        db=db,
        capsys=capsys,
    )
    assert "469 tasks" in text
    out, _ = main_cli("plan", "--from-run", "flaky", "--mde", "-0.1", "--json", db=db, capsys=capsys)
    from_run = json.loads(out)
    assert from_run["suite_tasks"] == 52 and from_run["trials_per_task"] == 1
    _, err = main_cli("plan", "--baseline", "0.7", db=db, capsys=capsys, code=2)
    assert "give --mde" in err


def test_run_adaptive_against_a_baseline(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = (
        "run",
        "--until-decided",
        "--agent",
        "builtin:retail-hasty",
        "--against",
        "careful",
        "--run-id",
        "adaptive-hasty",
    )
    out, err = main_cli(*args, "--round-size", "3", "--json", db=db, capsys=capsys)
    doc = json.loads(out)
    assert doc["schema"] == "assay.adaptive/2" and doc["run_id"] == "adaptive-hasty"
    assert doc["verdict"] == "worse" and doc["round_size"] == 3
    assert 0 <= doc["trials_run"] - doc["trials_needed"] < 3 and doc["trials_needed"] < 52
    assert doc["fixed_n"] > 0 and doc["saved"] == 1 - doc["trials_run"] / doc["fixed_n"]
    assert "round 1: 3 trials read" in err
    # the discordance estimated: designed for a power raised from the 0.8 asked
    assert doc["power"] == 0.8 and doc["design_power"] == 0.83
    # every decide option reaches the design: alpha, power, mde, discordance, method
    out, _ = main_cli(
        *args[:-1],
        "adaptive-hasty-2",
        "--alpha",
        "0.1",
        "--power",
        "0.9",
        "--mde",
        "0.3",
        "--discordance",
        "0.6",
        "--method",
        "sprt",
        "--json",
        db=db,
        capsys=capsys,
    )
    design = json.loads(out)["design"]
    assert design["alpha"] == 0.1 and design["beta"] == pytest.approx(0.1) and design["mde"] == 0.3
    # with the discordance given, the design is for the power asked
    assert json.loads(out)["power"] == 0.9 and json.loads(out)["design_power"] == 0.9
    assert design["p1"] == pytest.approx((0.6 + 0.3) / 1.2) and json.loads(out)["discordance"]["given"]
    shown_run = json.loads(main_cli("show", "adaptive-hasty", "--json", db=db, capsys=capsys)[0])
    assert shown_run["run"]["completed_trials"] == doc["trials_run"]
    _, err = main_cli(
        "run", "retail", "--until-decided", "--agent", "builtin:retail-hasty", db=db, capsys=capsys, code=2
    )
    assert "give exactly one of against (--against RUN_ID)" in err
