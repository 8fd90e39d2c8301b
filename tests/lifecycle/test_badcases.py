"""Badcase records: the clustering rule, proposals from a run, triage, export, the viewer."""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

import assay
from assay.core.results import GradeResult, TrialResult
from assay.domains.retail import SUITE_DIR
from assay.lifecycle.badcase import Badcase, BadcaseError, apply_changes
from assay.lifecycle.clustering import cluster_failures, jaccard, normalize_reason, reason_tokens, signature
from assay.lifecycle.propose import layer_of
from assay.store import Store
from tests.support.cli import assay_main


def trial(
    task: str,
    index: int,
    *fails: tuple[str, str, str],
    reward: int | None = 0,
    termination: str = "user_stop",
) -> TrialResult:
    grades = [GradeResult(g, g, False, reason=r, category=c) for g, c, r in fails]
    return TrialResult("r", task, index, 0, "h", reward, termination, grades=grades)  # type: ignore[arg-type]


def test_reasons_are_normalised_so_instances_of_one_failure_match() -> None:
    a = "forbidden action taken: refund_delivered_order(order_id='#W1234567'); no explicit confirmation"
    b = "forbidden action taken: refund_delivered_order(order_id='#W7654321'); no explicit confirmation"
    assert normalize_reason(a) == normalize_reason(b)
    assert normalize_reason("the agent said 'lena@example.com' and $12.50 for #W1") == (
        "the agent said <q> and $ <n> for <id>"
    )


def test_the_clustering_rule() -> None:
    confirm = (
        "actions",
        "forbidden_action",
        "forbidden action taken: refund_delivered_order; "
        "no explicit confirmation before refund_delivered_order",
    )
    cancel = (
        "actions",
        "forbidden_action",
        "forbidden action taken: cancel_pending_order; no explicit confirmation before cancel_pending_order",
    )
    window = ("communicate", "missing_information", "the agent never said '7 days'")
    results = [
        trial("t1", 0, confirm),
        trial("t2", 0, confirm),
        trial("t3", 0, cancel),  # same graders, similar reason (Jaccard 0.78): same cluster
        trial("t4", 0, window),  # other grader: another cluster
        trial("t5", 0, reward=0, termination="max_turns"),  # no failing grader: its termination
        trial("t6", 0, reward=1),  # passed: not a badcase
        trial("t7", 0, reward=None, termination="harness_error"),  # excluded: only on request
    ]
    clusters = cluster_failures(results)
    assert [(c.signature, [r.task_id for r in c.trials]) for c in clusters] == [
        (("actions:forbidden_action",), ["t1", "t2", "t3"]),
        (("communicate:missing_information",), ["t4"]),
        (("termination:max_turns",), ["t5"]),
    ]
    assert jaccard(reason_tokens(results[0]), reason_tokens(results[2])) == pytest.approx(7 / 9)
    assert len(cluster_failures(results, threshold=0.9)) == 4  # stricter: cancel apart
    with_excluded = cluster_failures(results, include_excluded=True)
    assert signature(results[6]) == ("excluded:harness_error:?",) and len(with_excluded) == 4
    shuffled = results[:]
    random.Random(3).shuffle(shuffled)
    again = cluster_failures(shuffled)
    assert [[r.key for r in c.trials] for c in again] == [[r.key for r in c.trials] for c in clusters]
    assert layer_of(clusters[0].signature) == "policy" and layer_of(clusters[2].signature) == "unknown"
    assert layer_of(("excluded:harness_error:HARNESS",)) == "harness"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("bc") / "bc.db"
    assay.run("retail", agent="builtin:retail-hasty", trials=1, store=Store(db), run_id="hasty")
    assay.run("retail", agent="builtin:retail-careful", trials=1, store=Store(db), run_id="careful")
    return db


def cli(db: Path, *args: str, code: int = 0) -> str:
    result = assay_main(*args, "--store", str(db))
    assert result.code == code, f"exit {result.code}\n{result.stdout}\n{result.stderr}"
    return result.stdout if code == 0 else result.err


def test_list_show_triage_export(store: Path, tmp_path: Path) -> None:
    proposal = json.loads(cli(store, "badcase", "from-run", "hasty", "--json"))
    assert proposal["failed_trials"] == 50 and 3 <= proposal["badcases"] <= 8
    listed = json.loads(cli(store, "badcase", "list", "--json"))
    assert listed["schema"] == "assay.badcase-list/1" and len(listed["badcases"]) == proposal["badcases"]
    first = listed["badcases"][0]["badcase_id"]
    assert json.loads(cli(store, "badcase", "list", "--status", "triaged", "--json"))["badcases"] == []
    cli(
        store,
        "badcase",
        "triage",
        first,
        "--status",
        "triaged",
        "--layer",
        "policy",
        "--root-cause",
        "writes without asking",
        "--owner",
        "ana",
        "--reproduced-by",
        "hasty",
        "--by",
        "lead",
    )
    case = json.loads(cli(store, "badcase", "show", first, "--json"))
    assert (case["status"], case["owner"], case["root_cause"]) == ("triaged", "ana", "writes without asking")
    assert [h["field"] for h in case["history"]][:1] == ["status"] and case["history"][0]["by"] == "lead"
    assert case["links"][0] == {**case["links"][0], "run_id": "hasty", "kind": "reproduces"}
    assert "cannot go back to new" in cli(store, "badcase", "triage", first, "--status", "new", code=2)
    assert "choose from" in cli(store, "badcase", "triage", first, "--layer", "brain", code=2)
    err = cli(store, "badcase", "triage", first, "--verified-by", "hasty", code=2)
    assert "does not verify the fix" in err
    cli(store, "badcase", "triage", first, "--verified-by", "careful")
    case = json.loads(cli(store, "badcase", "show", first, "--json"))
    assert case["status"] == "verified" and case["links"][-1]["kind"] == "verifies"
    out = tmp_path / "bc.jsonl"
    cli(store, "badcase", "export", "-o", str(out))
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == proposal["badcases"] and all(x["schema"] == "assay.badcase/1" for x in lines)
    assert "@example.com" not in out.read_text()
    assert "no badcase 'nope'" in cli(store, "badcase", "show", "nope", code=2)


def test_status_moves_forward_and_reopens() -> None:
    case = Badcase(badcase_id="b", created_at="t0", updated_at="t0", phenomenon="x")
    assert apply_changes(case, {"status": "fixed", "owner": None}, "t1") == ["status"]
    apply_changes(case, {"status": "triaged"}, "t2")  # reopen
    with pytest.raises(BadcaseError, match="cannot go back"):
        apply_changes(case, {"status": "new"}, "t3")
    assert [h.new for h in case.history] == ["fixed", "triaged"] and case.updated_at == "t2"


def test_viewer_lists_badcases(store: Path) -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from assay.server import create_app

    json.loads(cli(store, "badcase", "from-run", "hasty", "--json"))
    client = TestClient(create_app(Store(store)), base_url="http://127.0.0.1")
    doc = client.get("/api/badcases").json()
    assert doc["schema"] == "assay.badcase-list/1" and doc["badcases"]
    first = doc["badcases"][0]["badcase_id"]
    page = client.get("/badcases")
    assert page.status_code == 200 and first in page.text and 'href="/badcases"' in page.text
    one = client.get(f"/badcases/{first}")
    assert one.status_code == 200 and "Evidence" in one.text and "@example.com" not in one.text
    assert client.get(f"/api/badcases/{first}").json()["badcase_id"] == first
    assert client.get("/api/badcases/nope").status_code == 404
    assert client.get("/badcases/nope").status_code == 404
    filtered = client.get("/api/badcases", params={"status": "golden"}).json()["badcases"]
    assert filtered == []


def test_evidence_of_a_trial_with_personal_data_is_redacted() -> None:
    from assay.core.results import RunInfo
    from assay.lifecycle.propose import propose

    result = trial(
        "t1", 0, ("communicate", "disclosure", "the agent said 'lena.sky@example.com' to a stranger")
    )
    result = replace(result, run_id="r")
    info = RunInfo.model_validate(
        {
            "run_id": "r",
            "created_at": "t",
            "suite_name": "s",
            "suite_version": "1",
            "suite_hash": "h",
            "suite_source": "s",
            "config": {"agent": "a"},
            "config_hash": "c",
            "seed": 0,
            "trials_per_task": 1,
            "task_ids": ["t1"],
            "spec": {"suite": "s"},
        }
    )
    cases, _ = propose(info, [], [result], lambda task, index: None, at="t")
    text = json.dumps(cases[0].document())
    assert "lena.sky@example.com" not in text and "<EMAIL_1>" in text


def test_a_badcase_added_by_hand_with_a_trial_and_redacted_evidence(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    assay.run(
        "retail",
        agent="builtin:retail-hasty",
        trials=2,
        task_ids=["refund-in-window-email-1"],
        store=Store(db),
        run_id="h",
    )
    report = tmp_path / "report.txt"
    report.write_text(
        "Ticket 881: lena.sky@example.com was refunded without being asked; she called +1 415 555 0100\n"
    )
    out = cli(
        db,
        "badcase",
        "add",
        "--phenomenon",
        "refund without asking lena.sky@example.com",
        "--layer",
        "policy",
        "--severity",
        "high",
        "--root-cause",
        "no confirmation step",
        "--owner",
        "ana",
        "--evidence",
        str(report),
        "--run",
        "h",
        "--task",
        "refund-in-window-email-1",
        "--trial",
        "1",
        "--json",
    )
    case = json.loads(out)
    assert case["schema"] == "assay.badcase/1" and case["source"]["kind"] == "manual"
    assert case["source"]["trials"] == [
        {"run_id": "h", "task_id": "refund-in-window-email-1", "trial_index": 1}
    ]
    assert (case["layer"], case["severity"], case["owner"], case["status"]) == (
        "policy",
        "high",
        "ana",
        "new",
    )
    assert case["suite"]["name"] == "retail" and case["task_ids"] == ["refund-in-window-email-1"]
    ev = case["evidence"]
    assert ev["report"].startswith("Ticket 881: <EMAIL_1> was refunded")  # redacted, one session:
    assert case["phenomenon"] == "refund without asking <EMAIL_1>"  # the same pseudonym
    assert ev["transcript"] and ev["grader_reasons"] and ev["trial"]["trial_index"] == 1
    assert ev["redaction"]["counts"]["EMAIL"] >= 2 and "PHONE" in ev["redaction"]["counts"]
    text = json.dumps(case)
    assert "lena.sky@example.com" not in text and "555 0100" not in text
    assert json.loads(cli(db, "badcase", "show", case["badcase_id"], "--json")) == case
    shown = " ".join(cli(db, "badcase", "show", case["badcase_id"]).split())
    assert (
        "source: manual · run h · 1 trials" in shown and "report: Ticket 881: <EMAIL_1> was refunded" in shown
    )
    from fastapi.testclient import TestClient

    from assay.server import create_app

    page = TestClient(create_app(Store(db)), base_url="http://127.0.0.1").get(
        f"/badcases/{case['badcase_id']}"
    )
    assert (
        page.status_code == 200 and 'id="report"' in page.text and "Ticket 881: &lt;EMAIL_1&gt;" in page.text
    )
    # evidence as JSON from stdin, no trial: the default trial is the task's first failure otherwise
    result = assay_main(
        "badcase", "add", "--phenomenon", "leaks an address", "--layer", "policy", "--severity", "critical",
        "--evidence", "-", "--store", str(db), "--json",
        stdin='{"ticket": 9, "customer": {"email": "omar@example.org"}}',
    )  # fmt: skip
    assert result.code == 0, result.stderr
    second = json.loads(result.stdout)
    assert second["evidence"]["report"] == {"ticket": 9, "customer": {"email": "<EMAIL_1>"}}
    assert second["source"] == {**second["source"], "kind": "manual", "run_id": None, "trials": []}
    rows = json.loads(cli(db, "badcase", "list", "--json"))["badcases"]
    assert {(r["badcase_id"], r["source"]) for r in rows} == {
        (case["badcase_id"], "manual"),
        (second["badcase_id"], "manual"),
    }
    # no trial, nothing to promote: said in one sentence
    suite = tmp_path / "retail"
    shutil.copytree(SUITE_DIR, suite, ignore=shutil.ignore_patterns("__pycache__"))
    err = cli(db, "badcase", "promote", second["badcase_id"], "--suite", str(suite), code=2)
    assert "names no trial to promote (source manual)" in err
    promoted = json.loads(cli(db, "badcase", "promote", case["badcase_id"], "--suite", str(suite), "--json"))
    assert promoted["task"]["id"] == f"refund-in-window-email-1-{case['badcase_id']}"
    base = ["badcase", "add", "--phenomenon", "x", "--layer", "policy", "--severity", "high"]
    assert "choose from" in cli(db, *base[:-1], "urgent", code=2)
    assert "go together" in cli(db, *base, "--task", "t", code=2)
    assert "cannot read it" in cli(db, *base, "--evidence", str(tmp_path / "nope.txt"), code=2)
    assert "one line" in cli(
        db, "badcase", "add", "--phenomenon", "a\nb", "--layer", "policy", "--severity", "low", code=2
    )
    assert "has no trial 7" in cli(
        db, *base, "--run", "h", "--task", "refund-in-window-email-1", "--trial", "7", code=2
    )
