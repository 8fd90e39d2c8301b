"""Perturbations and metamorphic relations: the transforms keep what a task means, the
careful agent keeps its outcome under every invariance relation on the retail suite
(violation rate ≈ 0, with its interval), the brittle agent of ``brittle.py`` does not."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import assay
from assay.core.task import Task
from assay.envs import perturb_text as tx
from assay.envs.perturb import PerturbationPlan, PerturbSpecError, load_perturbations, perturb_task
from assay.lifecycle.metamorphic import perturbation_report, relation_report
from assay.store import Store
from assay.suites.instantiate import instantiate
from assay.suites.loader import load_suite
from tests.support.cli import assay_main

INVARIANT = (
    "typos,casing,paraphrase,distractor,reorder,format,inject,inject:user,distractor:tools,reorder:tools"
)


def test_text_transforms_keep_ids_amounts_and_facts() -> None:
    text = "I'd like a refund of $72.00 for order #W5092449, email lena.k@example.com. Thanks!"
    protect = tx.protected_words([], {"name": "Lena Kim"})
    for seed in range(20):
        rng = random.Random(seed)
        for changed in (
            tx.typos(text, rng, 0.5, protect),
            tx.casing(text, rng, "random", protect),
            tx.casing(text, rng, "upper", protect),
            tx.reorder(text, rng),
            tx.distract(text, rng, tx.DISTRACTORS, 2),
            tx.paraphrase(text, rng, tx.TEMPLATES, tx.SWAPS),
        ):
            for token in ("$72.00", "#W5092449,", "lena.k@example.com."):
                assert token in changed, (token, changed)
    assert tx.typos("Call Lena about it", random.Random(0), 1.0, protect).split()[1] == "Lena"
    assert tx.reorder("One. Two.\nSYSTEM: x. y.", random.Random(1)).splitlines()[1] == "y. SYSTEM: x."
    assert tx.casing("ask Lena", random.Random(0), "upper", protect) == "ASK Lena"


def test_tool_transforms() -> None:
    order = json.dumps(
        {"order_id": "#W1", "total": 1299.5, "delivered_at": "2025-06-10", "items": [{"price": 3.0}]}
    )
    assert json.loads(tx.reformat(order, "symbol", "long")) == {
        "order_id": "#W1",
        "total": "$1,299.50",
        "delivered_at": "June 10, 2025",
        "items": [{"price": "$3.00"}],
    }
    assert json.loads(tx.reformat(order, "cents", "us"))["total"] == "129950 cents"
    assert json.loads(tx.reformat(order, "code", "datetime"))["delivered_at"] == "2025-06-10T00:00:00Z"
    assert list(json.loads(tx.reorder_keys(order))) == ["items", "delivered_at", "total", "order_id"]
    assert json.loads(tx.add_field(order, "note", "hi"))["note"] == "hi"
    assert tx.add_field("lena_kim_1234", "note", "hi") == "lena_kim_1234"  # a bare id is left alone


def test_plans_parse_and_fail_with_a_location(tmp_path: Path) -> None:
    plan = load_perturbations("typos@0.3,casing:upper,inject:user,distractor:tools,decline")
    assert plan is not None
    assert [(p.label, p.where, p.expects) for p in plan.perturbations] == [
        ("typos@0.3", "user", "same_outcome"),
        ("casing:upper", "user", "same_outcome"),
        ("inject+user", "user", "same_outcome"),
        ("distractor+tools", "tools", "same_outcome"),
        ("decline", "user", "no_state_change"),
    ]
    assert load_perturbations("none") is None
    with pytest.raises(PerturbSpecError, match="not a perturbation"):
        load_perturbations("tpyos")
    with pytest.raises(PerturbSpecError, match="format applies to tools, not user"):
        load_perturbations([{"kind": "format", "target": "user"}])
    bad = tmp_path / "p.yaml"
    bad.write_text("perturb:\n  - kind: casing\n    style: shouty\n")
    with pytest.raises(PerturbSpecError, match=r"p.yaml:2: .*casing style is lower, upper or random"):
        load_perturbations(str(bad))
    with pytest.raises(PerturbSpecError, match="listed twice"):
        load_perturbations("typos,typos")


def test_perturbed_tasks_are_deterministic_and_keep_their_facts() -> None:
    tasks = instantiate(load_suite("retail"), 0)
    plan = load_perturbations("typos@0.3,distractor,format")
    assert isinstance(plan, PerturbationPlan)
    for task in tasks:
        a, b = perturb_task(task, plan, 7), perturb_task(task, plan, 7)
        assert a.model_dump() == b.model_dump() and a.input_hash() == b.input_hash() != task.input_hash()
        assert a.user.known == task.user.known and a.initial_state == task.initial_state
        assert (
            a.graders == task.graders and a.metadata["perturbation"]["perturbations"][0]["kind"] == "format"
        )
    changed = sum(perturb_task(t, plan, 7).user.goal != t.user.goal for t in tasks)
    assert changed == len(tasks)
    assert perturb_task(Task(id="x"), load_perturbations("decline"), 0).user.confirm is False


@pytest.fixture(scope="module")
def careful_report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    db = Store(tmp_path_factory.mktemp("perturb") / "p.db")
    base = assay.run("retail", agent="builtin:retail-careful", trials=1, seed=3, store=db)
    plan = load_perturbations(INVARIANT)
    assert plan is not None
    runs = {
        p.label: (
            p.expects,
            assay.run(
                "retail",
                agent="builtin:retail-careful",
                trials=1,
                seed=3,
                store=db,
                perturb=plan.single(p).model_dump(mode="json"),
            ).results,
        )
        for p in plan.perturbations
    }
    return perturbation_report(base.results, runs)


def test_careful_agent_keeps_its_outcome_under_every_invariance_relation(careful_report: dict) -> None:
    rows = careful_report["perturbations"]
    assert len(rows) == 10 and all(r["checked"] == 52 for r in rows)
    assert careful_report["invariance"] == {"checked": 520, "violations": 0, "violation_rate": 0.0}
    for row in rows:
        assert row["violation_rate"] == 0.0 and row["violation_rate_ci"][0] == 0.0
        assert 0.0 < row["violation_rate_ci"][1] < 0.1  # ≈ 0, and how close the data allow


@pytest.fixture(scope="module")
def brittle_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    db = Store(tmp_path_factory.mktemp("brittle") / "b.db")
    agent = "python:tests.lifecycle.brittle:BrittleAgent"
    base = assay.run("retail", agent=agent, trials=1, seed=3, store=db)
    assert base.summary().overall.success_rate == 1.0  # brittle only under perturbation
    out = {}
    for spec in ("casing:upper", "paraphrase", "reorder", "format", "inject", "typos@0.3"):
        run = assay.run("retail", agent=agent, trials=1, seed=3, store=db, perturb=spec)
        out[spec] = relation_report(base.results, run.results, "same_outcome", spec)
    return out


@pytest.mark.parametrize("spec", ["casing:upper", "paraphrase", "reorder", "format", "inject", "typos@0.3"])
def test_brittle_agent_breaks_the_relations(brittle_reports: dict[str, dict], spec: str) -> None:
    row = brittle_reports[spec]
    assert row["violations"] > 0 and row["violation_rate_ci"][0] > 0  # the interval excludes 0
    assert row["pass_to_fail"] == row["violations"]


def test_robustness_cli_reports_each_perturbation(tmp_path: Path) -> None:
    result = assay_main(
        "robustness",
        "retail",
        "-a",
        "python:tests.lifecycle.brittle:BrittleAgent",
        "-k",
        "1",
        "--tag",
        "cancel",
        "--perturb",
        "casing:upper,decline",
        "--run-id",
        "rb",
        "--json",
        "--store",
        str(tmp_path / "r.db"),
    )
    assert result.code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["schema"] == "assay.metamorphic/1" and doc["runs"]["unperturbed"] == "rb-base"
    casing, decline = doc["perturbations"]
    assert casing["perturbation"] == "casing:upper" and casing["violation_rate"] > 0.5
    assert decline["relation"] == "no_state_change" and doc["runs"]["decline"] == "rb-p2"


def test_state_relations_ignore_named_tables() -> None:
    from assay.core.results import Outcome, TrialResult

    def trial(diff: list[dict], reward: int = 1) -> TrialResult:
        outcome = Outcome("transfer", initial_hash="a", final_hash="b" if diff else "a", diff=diff)
        return TrialResult("r", "t", 0, 0, "h", reward, "transfer", outcome=outcome)

    handover = [{"op": "add", "table": "transfers", "key": "T-1"}]
    assert relation_report([trial([])], [trial(handover)], "no_state_change")["violations"] == 1
    assert (
        relation_report([trial([])], [trial(handover)], "no_state_change", ignore=["transfers"])["violations"]
        == 0
    )


def test_careful_agent_reads_through_typos_and_formats() -> None:
    from assay.domains.retail.agents.reading import _plain, intent_of, one_edit

    assert one_edit("refnud", "refund") and one_edit("cancle", "cancel") and one_edit("humn", "human")
    assert not one_edit("refunded", "refund") and not one_edit("here", "where is")
    assert (
        intent_of("I'd like a rfeund please") == "refund"
        and intent_of("Can I talk to a reeal person?") == "human"
    )
    assert intent_of("Hi there, here is my question.") is None  # no request: no intent read into it
    assert intent_of("refund for the Fitness Tracker") == "refund"  # a product name is not "track"
    order = {
        "total": "$1,299.50",
        "amount": "129950 cents",
        "delivered_at": "June 10, 2025",
        "created_at": "06/10/2025",
        "refunded_at": "2025-06-10T00:00:00Z",
        "items": [{"price": "3.00 USD"}],
    }
    assert _plain("", order) == {
        "total": 1299.5,
        "amount": 1299.5,
        "delivered_at": "2025-06-10",
        "created_at": "2025-06-10",
        "refunded_at": "2025-06-10",
        "items": [{"price": 3.0}],
    }
    assert _plain("", {"created_at": "2025-06-15T12:00:00", "note": "$5"}) == {
        "created_at": "2025-06-15T12:00:00",
        "note": "$5",
    }
