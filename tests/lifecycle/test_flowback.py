"""The acceptance path of the golden-set loop, through the command line: a hasty-agent run
→ clustered badcases → one promoted (redacted) → accepted (version bump, changelog,
archive) → ``assay suite diff`` shows exactly that task → the careful agent passes it
while the hasty agent fails it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from assay.domains.retail import SUITE_DIR
from assay.lifecycle.duplicates import content_hash, near_duplicates, shape
from assay.lifecycle.versions import next_version, set_version
from assay.suites.instantiate import instantiate
from assay.suites.loader import load_suite
from tests.support.cli import assay_main


def cli(*args: str, code: int = 0) -> str:
    result = assay_main(*args)
    assert result.code == code, f"exit {result.code}\n{result.stdout}\n{result.stderr}"
    return result.stdout if code == 0 else result.err


@pytest.fixture(scope="module")
def loop(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """One hasty run on a copy of the retail suite, its badcases, one promoted and accepted."""
    root = tmp_path_factory.mktemp("loop")
    suite = root / "retail"
    shutil.copytree(SUITE_DIR, suite, ignore=shutil.ignore_patterns("__pycache__"))
    db = str(root / "loop.db")
    cli(
        "run",
        str(suite),
        "-a",
        "builtin:retail-hasty",
        "-k",
        "2",
        "--run-id",
        "hasty",
        "--store",
        db,
        "--json",
    )
    proposal = json.loads(cli("badcase", "from-run", "hasty", "--store", db, "--json"))
    address = next(b for b in proposal["proposed"] if "update_order_address" in b["phenomenon"])
    promoted = json.loads(
        cli("badcase", "promote", address["badcase_id"], "--suite", str(suite), "--store", db, "--json")
    )
    before = root / "retail-v1"
    shutil.copytree(suite, before, ignore=shutil.ignore_patterns(".*", "__pycache__"))
    accepted = json.loads(
        cli("suite", "accept", str(suite), promoted["task"]["id"], "-m", "flow-back", "--store", db, "--json")
    )
    return {
        "root": root,
        "suite": suite,
        "db": db,
        "proposal": proposal,
        "badcase": address,
        "promoted": promoted,
        "accepted": accepted,
        "before": before,
    }


def test_from_run_clusters_a_hundred_failures_into_a_handful(loop: dict) -> None:
    proposal = loop["proposal"]
    assert proposal["failed_trials"] == 100  # 52 tasks (holdout left out) x 2 trials, 4 passed
    assert proposal["badcases"] == 6 and proposal["new"] == 6
    assert sum(b["trials"] for b in proposal["proposed"]) == proposal["failed_trials"]
    again = json.loads(cli("badcase", "from-run", "hasty", "--store", loop["db"], "--json"))
    assert again["new"] == 0 and again["known"] == 6  # proposing again adds no copies
    layers = {b["layer"] for b in proposal["proposed"]}
    assert layers <= {"policy", "planning"} and "policy" in layers


def test_evidence_is_redacted(loop: dict) -> None:
    case = json.loads(cli("badcase", "show", loop["badcase"]["badcase_id"], "--store", loop["db"], "--json"))
    text = json.dumps(case["evidence"])
    assert "@example.com" not in text and case["evidence"]["redaction"]["total"] > 0
    assert (
        case["evidence"]["transcript"]
        and case["evidence"]["grader_reasons"][0]["category"] == "forbidden_action"
    )
    assert case["schema"] == "assay.badcase/1" and case["status"] == "golden"  # accepted into the suite
    assert case["candidate"]["state"] == "accepted"


def test_promoted_candidate_is_a_redacted_regression_task(loop: dict) -> None:
    task = loop["promoted"]["task"]
    assert task["split"] == "regression" and "flow-back" in task["tags"]
    assert task["metadata"]["badcase"]["id"] == loop["badcase"]["badcase_id"]
    text = json.dumps(task)
    assert "@example.com" not in text and "<ADDRESS_" in text  # personal data pseudonymised consistently
    assert loop["promoted"]["near_duplicates"][0]["task_id"] == "address-change-delivered"


def test_accept_bumps_the_version_and_diff_shows_exactly_that_task(loop: dict) -> None:
    suite, accepted = loop["suite"], loop["accepted"]
    task_id = loop["promoted"]["task"]["id"]
    assert (accepted["old_version"], accepted["new_version"]) == ("1", "2")
    assert load_suite(suite).version == "2" and not any((suite / ".review").iterdir())
    changelog = (suite / "CHANGELOG.md").read_text()
    assert "## version 2" in changelog and task_id in changelog and loop["badcase"]["badcase_id"] in changelog
    for old in (f"{suite}@1", str(loop["before"])):
        diff = json.loads(cli("suite", "diff", old, str(suite), "--json"))
        assert [t["id"] for t in diff["added"]] == [task_id]
        assert diff["removed"] == [] and diff["changed"] == [] and diff["unchanged"] == 57
        assert diff["old"]["version"] == "1" and diff["new"]["version"] == "2"
    text = " ".join(cli("suite", "diff", f"{suite}@1", str(suite)).split())
    assert f"+ {task_id}" in text and "1 added, 0 removed, 0 changed, 57 unchanged" in text


def test_careful_passes_the_new_task_and_hasty_fails_it(loop: dict) -> None:
    task_id = loop["promoted"]["task"]["id"]
    rates = {}
    for agent in ("careful", "hasty"):
        out = cli(
            "run",
            str(loop["suite"]),
            "-a",
            f"builtin:retail-{agent}",
            "-k",
            "3",
            "--task",
            task_id,
            "--store",
            loop["db"],
            "--json",
        )
        doc = json.loads(out)
        assert doc["overall"]["trials"] == 3
        rates[agent] = doc["overall"]["success_rate"]
    assert rates == {"careful": 1.0, "hasty": 0.0}


def test_runs_of_two_versions_compare_on_shared_tasks_and_say_so(loop: dict) -> None:
    db = loop["db"]
    cli(
        "run",
        str(loop["suite"]),
        "-a",
        "builtin:retail-careful",
        "-k",
        "1",
        "--run-id",
        "careful-v2",
        "--store",
        db,
    )
    err = cli("compare", "hasty", "careful-v2", "--store", db, code=2)
    assert "different suite versions; pass --common-only" in err
    doc = json.loads(cli("compare", "hasty", "careful-v2", "--common-only", "--store", db, "--json"))
    versions = [n for n in doc["comparisons"][0]["notes"] if n.startswith("different suite versions")]
    assert len(versions) == 1
    assert "compared only on the 52 task(s) both versions share" in versions[0]
    assert "1 only in careful-v2" in versions[0]
    policy = Path(loop["root"]) / "gate.yaml"
    policy.write_text("relative: [{metric: quality, margin: 0.05}]\ncommon_only: true\n")
    gate = json.loads(
        cli("gate", "careful-v2", "--policy", str(policy), "--baseline", "hasty", "--store", db, "--json")
    )
    assert any("compared only on the 52 task(s)" in n for n in gate["notes"])


def test_accept_refuses_an_exact_duplicate_and_names_candidates(loop: dict, tmp_path: Path) -> None:
    suite = tmp_path / "s"
    shutil.copytree(loop["suite"], suite)
    existing = next(t for t in instantiate(load_suite(suite), 0) if t.id == "static-refund-headphones")
    copy = existing.model_dump(mode="json", exclude_defaults=True) | {"id": "static-refund-again"}
    (suite / ".review").mkdir(exist_ok=True)
    (suite / ".review" / "static-refund-again.yaml").write_text(
        yaml.safe_dump({"candidate": {}, "task": copy})
    )
    err = cli("suite", "accept", str(suite), "static-refund-again", "--store", loop["db"], code=2)
    assert "same content as task static-refund-headphones" in err and "--force" in err
    assert "no candidate 'nope'" in cli("suite", "accept", str(suite), "nope", code=2)
    listed = json.loads(cli("suite", "accept", str(suite), "--list", "--json"))
    assert [c["task_id"] for c in listed] == ["static-refund-again"]
    done = json.loads(cli("suite", "accept", str(suite), "--all", "--force", "--json"))
    assert done["new_version"] == "3" and done["accepted"] == ["static-refund-again"]


def test_near_duplicates_and_versions() -> None:
    suite = load_suite("retail")
    tasks = instantiate(suite, 0)
    a = next(t for t in tasks if t.id == "refund-in-window-email-1")
    b = next(t for t in tasks if t.id == "refund-in-window-email-3")
    assert content_hash(a) != content_hash(b)
    assert len(shape(a) & shape(b)) / len(shape(a) | shape(b)) == pytest.approx(8 / 9)  # same complaint
    found = near_duplicates(a, tasks, threshold=0.85)
    assert [(m.task_id, m.exact) for m in found] == [("refund-in-window-email-3", False)]
    twin = a.model_copy(update={"id": "twin", "tags": ["other"], "description": "same content"})
    assert near_duplicates(twin, tasks)[0].exact and near_duplicates(twin, tasks)[0].task_id == a.id
    assert next_version("3") == "4" and next_version("1.9") == "1.10"
    assert (
        set_version("name: x\nversion: 3  # v\ndomain: d\n", "4") == "name: x\nversion: 4  # v\ndomain: d\n"
    )
    assert set_version("name: x\ndomain: d\n", "2") == "name: x\nversion: 2\ndomain: d\n"
