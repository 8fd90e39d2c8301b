"""``assay regrade FILE --format tau2``: every recorded simulation replayed as an assay
run, every tool output reproduced, every recorded verdict reproduced by assay's graders,
and the run usable like any other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.domains.tau2.importer import import_tau2
from assay.domains.tau2.regrade import regrade_tau2
from assay.runner.api import Run
from assay.store.store import Store
from tests.support.cli import CliResult, assay_main

FILES = [
    ("airline_claude-sonnet-4-5_50tasks.json", 50, 371),
    ("airline_gpt-4.1-finetuned_20tasks.json", 20, 147),
    ("airline_gpt-4.1_20tasks.json", 20, 148),
    ("mock_e2e.json", 1, 1),
    ("retail_gpt-4.1.json", 40, 299),
    ("telecom_e2e.json", 1, 17),
    ("telecom_gpt-4.1.json", 40, 689),
]


@pytest.fixture(scope="module")
def suites(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("imported")
    return {
        name: import_tau2(data_dir, name, root / name).suite_file.parent
        for name in ("airline", "retail", "telecom", "mock")
    }


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return Store(str(tmp_path_factory.mktemp("store") / "regrade.db"))


@pytest.mark.parametrize(("name", "simulations", "outputs"), FILES)
def test_every_recording_is_reproduced(
    name: str, simulations: int, outputs: int, root: Path, suites: dict[str, Path], store: Store
) -> None:
    path = root / "simulations" / name
    raw = json.loads(path.read_text())
    report = regrade_tau2(path, suite=suites[name.split("_")[0]], store=store, run_id=name)
    assert report.simulations == simulations and report.tool_outputs == outputs
    assert report.mismatches == [] and report.flow == []
    for component, agreement in report.agreement.items():
        assert agreement.disagreements == [], component
        assert agreement.agreed == agreement.compared
        assert report.evaluator[component].disagreements == []
    assert report.agreement["reward"].compared == simulations  # no NL assertion in these bases
    assert report.agreement["db"].compared == simulations
    recorded = [s["reward_info"]["reward"] for s in raw["simulations"]]
    assert report.recorded_mean_reward == pytest.approx(sum(recorded) / len(recorded))
    assert report.mean_reward == pytest.approx(report.recorded_mean_reward)
    # an ordinary run: the recorded model as the agent, one trial per simulation
    run = Run.load(name, store)
    assert run.info.config.agent == f"recorded:{raw['info']['agent_info']['llm']}"
    assert run.info.config.model == raw["info"]["agent_info"]["llm"]
    summary = run.summary()
    assert summary.overall.trials == simulations
    assert summary.overall.success_rate == pytest.approx(report.recorded_mean_reward)


def test_telecom_checks_count_check_by_check(root: Path, suites: dict[str, Path], store: Store) -> None:
    report = regrade_tau2(root / "simulations" / "telecom_gpt-4.1.json", suite=suites["telecom"], store=store)
    assert report.agreement["env_assertions"].compared == 64
    assert report.agreement["actions"].compared == 162
    run = Run.load(report.run_id, store)
    transcript = run.transcript(run.results[0].task_id, 0)
    assert transcript is not None and transcript.user_tool_calls()  # the user's phone, replayed
    assert transcript.messages[0].content == "Hi! How can I help you today?"


def _cli(*args: str) -> CliResult:
    return assay_main(*args)


@pytest.mark.slow
def test_cli_regrade_then_show_compare_and_report(root: Path, data_dir: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "cli.db")
    sims = root / "simulations"
    one = _cli(
        "regrade",
        str(sims / "airline_gpt-4.1_20tasks.json"),
        "--format",
        "tau2",
        "--data",
        str(data_dir),
        "--store",
        db,
        "--run-id",
        "gpt41",
        "--json",
    )
    assert one.returncode == 0, one.stderr
    report = json.loads(one.stdout)
    assert report["run_id"] == "gpt41" and report["mismatches"] == []
    assert report["agreement"]["actions"] == {"compared": 61, "agreed": 61, "disagreements": []}
    two = _cli(
        "regrade",
        str(sims / "airline_gpt-4.1-finetuned_20tasks.json"),
        "--data",
        str(data_dir),
        "--store",
        db,
        "--run-id",
        "ft",
    )
    assert two.returncode == 0, two.stderr
    assert (
        "tool outputs reproduced: 147/147" in two.stdout and "db              agreement 20/20" in two.stdout
    )
    first = json.loads((sims / "airline_gpt-4.1_20tasks.json").read_text())["simulations"][0]["task_id"]
    shown = _cli("show", "gpt41", "--store", db, "--task", first)
    assert shown.returncode == 0, shown.stderr
    assert "agent Hi! How can I help you today?" in shown.stdout and "verdicts · reward" in shown.stdout
    compared = _cli("compare", "gpt41", "ft", "--store", db, "--common-only")
    assert compared.returncode == 0, compared.stderr
    html = tmp_path / "r.html"
    reported = _cli("report", "gpt41", "ft", "--store", db, "--html", str(html))
    assert reported.returncode == 0, reported.stderr
    assert html.stat().st_size > 10_000
    _gate_rank_and_view(db, tmp_path)


def _gate_rank_and_view(db: str, tmp_path: Path) -> None:
    """A regraded run is an ordinary run: gated, ranked and shown by the viewer."""
    policy = tmp_path / "gate.yaml"
    policy.write_text(
        "name: tau2-airline\nversion: 1\nalpha: 0.05\n"
        "absolute:\n  - {name: overall success, metric: overall.success_rate, min: 0.5}\n"
        "relative:\n  - {metric: quality, margin: 0.5}\n"
    )
    gated = _cli("gate", "ft", "--policy", str(policy), "--baseline", "gpt41", "--store", db, "--json")
    verdict = json.loads(gated.stdout)
    rates = {run: Run.load(run, Store(db)).summary().overall.success_rate for run in ("gpt41", "ft")}
    assert gated.returncode == (0 if rates["ft"] >= 0.5 else 1), (rates, gated.stdout)
    assert verdict["passed"] is (rates["ft"] >= 0.5)
    ranked = _cli("rank", "--runs", "gpt41", "ft", "--store", db, "--json")
    assert ranked.returncode == 0, ranked.stderr
    assert {row["model"] for row in json.loads(ranked.stdout)["models"]} == {"gpt41", "ft"}
    import httpx

    from assay.server import create_app
    from tests.server.support import serving

    with serving(create_app(Store(db))) as url:
        listed = httpx.get(f"{url}/api/runs").json()
        page = httpx.get(f"{url}/runs/ft")
    assert {"gpt41", "ft"} <= {r["run_id"] for r in listed}
    assert page.status_code == 200 and "ft" in page.text


def _broken(root: Path, tmp_path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    raw = json.loads((root / "simulations" / "mock_e2e.json").read_text())
    edit(raw)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(raw) if not isinstance(raw, str) else raw)
    return path


def _first_call(raw: dict) -> dict:  # type: ignore[type-arg]
    return next(c for m in raw["simulations"][0]["messages"] for c in m.get("tool_calls") or [])


def _first_tool_message(raw: dict) -> dict:  # type: ignore[type-arg]
    return next(m for m in raw["simulations"][0]["messages"] if m["role"] == "tool")


def test_a_changed_output_and_a_changed_verdict_are_reported(
    root: Path, suites: dict[str, Path], tmp_path: Path
) -> None:
    def edit(raw: dict) -> None:  # type: ignore[type-arg]
        _first_tool_message(raw)["content"] = '{"task_id": "task_99"}'
        raw["simulations"][0]["reward_info"]["action_checks"][0]["action_match"] = False

    path = _broken(root, tmp_path, edit)
    report = regrade_tau2(path, suite=suites["mock"], store=str(tmp_path / "s.db"))
    [mismatch] = report.mismatches
    assert mismatch.tool == "create_task" and mismatch.expected == '{"task_id": "task_99"}'
    assert mismatch.got is not None and "task_2" in mismatch.got
    assert report.agreement["actions"].disagreements and report.evaluator["actions"].disagreements
    proc = _cli("regrade", str(path), "--suite", str(suites["mock"]), "--store", str(tmp_path / "c.db"))
    assert proc.returncode == 1 and "mismatch" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda raw: raw["simulations"][0].pop("termination_reason"), "termination_reason: Field required"),
        (lambda raw: _first_call(raw).pop("name"), "name: Field required"),
        (
            lambda raw: [
                c.update(name="frobnicate")
                for m in raw["simulations"][0]["messages"]
                for c in m.get("tool_calls") or []
            ],
            "tool 'frobnicate' is not a tool of tau2 domain mock",
        ),
        (lambda raw: raw["simulations"][0].update(task_id="nope"), "task nope is not in the file's tasks"),
        (lambda raw: raw["info"]["environment_info"].update(domain_name="airline"), "is not tau2's airline"),
    ],
)
def test_malformed_files_give_one_line_naming_file_and_simulation(
    edit,
    message: str,
    root: Path,
    suites: dict[str, Path],
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    path = _broken(root, tmp_path, edit)
    proc = _cli("regrade", str(path), "--suite", str(suites["mock"]), "--store", str(tmp_path / "s.db"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and message in proc.stderr and str(path) in proc.stderr
    assert "Traceback" not in proc.stderr
    if "termination" in message or "frobnicate" in message or "name:" in message:
        assert "simulation d44599b1" in proc.stderr


def test_wrong_json_and_missing_options(root: Path, suites: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"info": ')
    proc = _cli("regrade", str(path), "--suite", str(suites["mock"]))
    assert (
        proc.returncode == 2
        and "not a readable tau2 results file" in proc.stderr
        and str(path) in proc.stderr
    )
    proc = _cli("regrade", str(root / "simulations" / "mock_e2e.json"))
    assert proc.returncode == 2 and "--suite DIR" in proc.stderr
    proc = _cli("regrade", str(root / "simulations" / "mock_e2e.json"), "--format", "tau3")
    assert proc.returncode == 2 and "tau2" in proc.stderr


def test_a_recording_cut_short_ends_where_it_ended(
    root: Path, suites: dict[str, Path], tmp_path: Path
) -> None:
    raw = json.loads((root / "simulations" / "telecom_e2e.json").read_text())
    simulation = raw["simulations"][0]
    simulation["messages"] = simulation["messages"][:30]
    simulation["termination_reason"] = "max_steps"
    simulation["reward_info"] = {"reward": 0.0, "info": {"note": "Simulation terminated prematurely."}}
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(raw))
    report = regrade_tau2(path, suite=suites["telecom"], store=str(tmp_path / "s.db"))
    assert report.mismatches == [] and report.flow == [] and report.tool_outputs == 10
    assert report.agreement["reward"].agreed == report.agreement["reward"].compared == 1
    assert report.agreement["db"].compared == 0  # tau2 records no components then
    [result] = Run.load(report.run_id, Store(str(tmp_path / "s.db"))).results
    assert (result.reward, result.termination) == (0, "max_turns")
