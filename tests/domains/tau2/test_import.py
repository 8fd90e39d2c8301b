"""``assay import tau2``: tau2's domains as assay suites, and the gold-replay check that
port, import and graders agree (every task whose gold actions are complete scores 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.core import Task
from assay.domains.tau2 import Tau2DataError, load_tasks, tau2_domain
from assay.domains.tau2.importer import convert_task, import_tau2
from assay.envs import get_domain
from assay.runner.api import run
from assay.suites import instantiate, load_suite
from tests.support.cli import CliResult, assay_main

#: Tasks of tau2's data whose gold actions do not reach what their criteria ask (see docs/tau2.md).
INCOMPLETE_GOLD = {
    "mock": {
        # env assertion: task_2 completed; the task has no gold actions at all
        "update_task_with_history_and_env_assertions",
        # env assertion: the user dismissed notif_1; the gold actions have only the agent's update
        "update_task_with_user_tools",
    }
}
COUNTS = {"airline": 50, "retail": 114, "telecom": 114, "mock": 10}


@pytest.fixture(scope="module")
def suites(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("imported")
    out = {}
    for name in COUNTS:
        import_tau2(data_dir, name, root / name)
        out[name] = root / name
    return out


@pytest.mark.parametrize("name", list(COUNTS))
def test_gold_replay_scores_one_on_every_task_with_complete_gold(
    name: str, suites: dict[str, Path], tmp_path: Path
) -> None:
    result = run(
        suites[name], agent="builtin:gold-replay", trials=1, split="all", store=str(tmp_path / "s.db")
    )
    rewards = {r.task_id: r.reward for r in result.results}
    assert len(rewards) == COUNTS[name]
    failed = {t for t, r in rewards.items() if r != 1}
    assert failed == INCOMPLETE_GOLD.get(name, set())
    for r in result.results:
        if r.task_id in failed:  # they fail for the reason documented, nothing else
            [bad] = [g for g in r.grades if g.gating and g.passed is False]
            assert bad.grader == "env_assertions"


def test_import_writes_a_self_contained_hashed_suite(suites: dict[str, Path], data_dir: Path) -> None:
    telecom = suites["telecom"]
    assert sorted(p.name for p in (telecom / "data").iterdir()) == [
        "LICENSE",
        "db.toml",
        "main_policy.md",
        "tech_support_manual.md",
        "tech_support_workflow.md",
        "user_db.toml",
    ]
    suite = load_suite(telecom)
    assert suite.imported_modules == ["assay.domains.tau2 (domain)"]
    domain = get_domain(suite.domain_ref)
    assert domain.name == "tau2-telecom"
    assert domain.loaded.folder == (telecom / "data").resolve()  # type: ignore[attr-defined]
    assert domain.policy == tau2_domain("telecom", data_dir).policy
    before = suite.hash
    db = telecom / "data" / "user_db.toml"
    original = db.read_text()
    try:
        db.write_text(original.replace("true", "false", 1))
        assert load_suite(telecom).hash != before  # a .toml record is part of the suite
    finally:
        db.write_text(original)
    assert load_suite(telecom).hash == before


def test_splits_and_basis_become_splits_and_gating_graders(suites: dict[str, Path], data_dir: Path) -> None:
    airline = load_suite(suites["airline"])
    split = json.loads((data_dir / "domains" / "airline" / "split_tasks.json").read_text())
    by_id = {t.id: t for t in airline.tasks}
    assert {t for t in by_id if by_id[t].split == "holdout"} == set(split["test"])
    assert {t for t in by_id if by_id[t].split == "regression"} == set(split["train"])
    telecom = {t.id: t for t in load_suite(suites["telecom"]).tasks}
    task = telecom["[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]"]
    graders = {g.label: g for g in task.graders}
    assert graders["env_assertions"].gating and not graders["db"].gating and not graders["actions"].gating
    assert graders["actions"].params["rule"] == "tau2"
    assert [(a.name, a.requestor) for a in task.reference.actions] == [
        ("toggle_data", "user"),
        ("refuel_data", "agent"),
    ]
    assert [a.name for a in task.user.actions] == ["toggle_data"]
    assert [(a.name, a.requestor) for a in task.initial_state.actions] == [
        ("set_user_info", "user"),
        ("turn_data_off", "user"),
        ("set_data_usage", "agent"),
    ]
    assert task.tags == ["mobile_data_issue"]
    retail = {t.id: t for t in load_suite(suites["retail"]).tasks}
    judged = [t for t in retail.values() if any(g.kind == "judge" for g in t.graders)]
    assert len(judged) == 40
    judge = next(g for g in judged[0].graders if g.kind == "judge")
    assert judge.gating and all(d["weight"] == "veto" for d in judge.params["rubric"]["dimensions"])


def test_history_data_and_compare_args_are_carried(data_dir: Path) -> None:
    tasks = {t.id: t for t in load_tasks(data_dir / "domains" / "mock" / "tasks.json")}
    history = Task.model_validate(convert_task(tasks["update_task_with_message_history"]))
    assert [m.role for m in history.initial_state.history] == ["user", "assistant", "tool", "assistant"]
    assert history.initial_state.history[1].tool_calls[0].name == "create_task"
    data = Task.model_validate(convert_task(tasks["update_task_with_initialization_data"]))
    assert set(data.initial_state.data) == {"agent"}
    impossible = Task.model_validate(convert_task(tasks["impossible_task_1"]))
    assert impossible.reference.actions[0].compare_args == []
    mock = tau2_domain("mock", data_dir)
    env = mock.environment(history, history.as_of)  # type: ignore[arg-type]
    env.reset(0)
    assert env.snapshot()["tasks"]["task_2"]["title"] == "Project Review"  # the history's call replayed
    env = mock.environment(data, data.as_of)  # type: ignore[arg-type]
    env.reset(0)
    assert env.snapshot()["users"]["user_1"]["tasks"] == ["task_1", "task_2"]


def test_history_opens_the_transcript(suites: dict[str, Path], tmp_path: Path) -> None:
    result = run(
        suites["mock"],
        agent="builtin:gold-replay",
        trials=1,
        task_ids=["update_task_with_message_history"],
        store=str(tmp_path / "s.db"),
    )
    transcript = result.transcript("update_task_with_message_history", 0)
    assert transcript is not None
    assert transcript.messages[0].content == "I need to create a task for the project review meeting."
    assert transcript.messages[3].role == "assistant" and "task_2" in transcript.messages[3].content
    assert transcript.messages[4].role == "user"  # no greeting: the history's assistant spoke last
    assert result.results[0].reward == 1


def test_instantiated_tasks_take_the_greeting_from_the_defaults(suites: dict[str, Path]) -> None:
    task = instantiate(load_suite(suites["airline"]))[0]
    assert task.first_speaker == "agent" and task.greeting == "Hi! How can I help you today?"


def test_import_errors_are_one_line(data_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(Tau2DataError, match="--domain 'bank': tau2 domains are"):
        import_tau2(data_dir, "bank", tmp_path / "x")
    with pytest.raises(Tau2DataError, match="no tau2 data for domain 'airline'"):
        import_tau2(tmp_path, "airline", tmp_path / "x")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "suite.yaml").write_text("name: mine\n")
    with pytest.raises(Tau2DataError, match="holds another suite"):
        import_tau2(data_dir, "mock", tmp_path / "other")
    broken = tmp_path / "broken" / "domains" / "mock"
    broken.mkdir(parents=True)
    for f in (data_dir / "domains" / "mock").iterdir():
        (broken / f.name).write_bytes(f.read_bytes())
    (broken / "tasks.json").write_text('[{"id": "a", "evaluation_criteria": {"reward_basis": ["XYZ"]}}]')
    with pytest.raises(Tau2DataError, match=r"tasks.json: task a: evaluation_criteria.reward_basis.0"):
        import_tau2(tmp_path / "broken", "mock", tmp_path / "y")


def _cli(*args: str) -> CliResult:
    return assay_main(*args)


def test_cli_import(data_dir: Path, tmp_path: Path) -> None:
    proc = _cli("import", "tau2", str(data_dir), "--domain", "mock", "-o", str(tmp_path / "m"), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["tasks"] == 10 and report["gating"]["env_assertions"] == 3
    proc = _cli("import", "tau2", str(data_dir), "--domain", "banking_knowledge", "-o", str(tmp_path / "b"))
    try:
        import assay.domains.tau2.banking_knowledge  # noqa: F401
    except ModuleNotFoundError:
        assert (
            proc.returncode == 2 and "banking_knowledge cannot be imported by this assay yet" in proc.stderr
        )
        assert "Traceback" not in proc.stderr
    else:  # the full suite (its tools and reward: test_banking.py); the retrieval-only one
        assert proc.returncode == 0, proc.stderr
        assert "name: tau2-banking_knowledge\n" in (tmp_path / "b" / "suite.yaml").read_text()
        out = str(tmp_path / "r")
        rag = _cli("import", "tau2", str(data_dir), "--domain", "banking_knowledge-rag", "-o", out)
        assert rag.returncode == 0, rag.stderr
        assert "name: tau2-banking-knowledge\n" in (tmp_path / "r" / "suite.yaml").read_text()
    proc = _cli("import", "tau2", str(tmp_path), "--domain", "airline", "-o", str(tmp_path / "a"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
