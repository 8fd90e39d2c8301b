"""The built-in retail suite: loads, validates, covers every stratum, and every
task's gold state is reachable."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from assay.core.task import GraderSpec
from assay.domains.retail import DOMAIN, SUITE_DIR
from assay.envs.state import state_hash
from assay.graders import build_grader
from assay.suites import instantiate, load_suite

SUITE = load_suite("retail")


def test_suite_header():
    assert (SUITE_DIR / "suite.yaml").is_file()
    assert SUITE.name == "retail" and SUITE.domain == "retail"
    assert SUITE.canary and "5d414477-8e7d-4b2d-ad21-7cb23b4ceac0" in SUITE.canary
    assert SUITE.defaults.trials == 4
    assert SUITE.defaults.as_of is not None and SUITE.defaults.timezone
    assert SUITE.hash == load_suite("retail").hash


def test_at_least_forty_tasks_over_every_stratum_and_split():
    tasks = instantiate(SUITE, 0)
    assert len(tasks) >= 40
    assert len({t.id for t in tasks}) == len(tasks)
    strata = Counter(t.stratum for t in tasks)
    splits = Counter(t.split for t in tasks)
    assert set(strata) == {"normal", "edge", "adversarial", "high_risk"}
    assert splits["regression"] > splits["capability"] > splits["holdout"] > 0
    assert {t.difficulty for t in tasks} == {1, 2, 3}
    tags = {tag for t in tasks for tag in t.tags}
    assert {
        "identity-check",
        "refund",
        "cancel",
        "address",
        "policy-window",
        "multi-order",
        "injection",
        "privacy",
        "transfer",
    } <= tags
    templated = [t for t in tasks if t.template]
    assert len(templated) > 0.8 * len(tasks)
    assert any(not t.template and t.initial_state.records for t in tasks)


def test_a_different_seed_changes_templated_tasks_only():
    first = {t.id: t for t in instantiate(SUITE, 0)}
    second = {t.id: t for t in instantiate(SUITE, 1)}
    assert first.keys() == second.keys()
    for task_id, task in first.items():
        same = task.input_hash() == second[task_id].input_hash()
        assert same is (task.template is None), task_id
    again = {t.id: t.input_hash() for t in instantiate(SUITE, 0)}
    assert again == {t.id: t.input_hash() for t in first.values()}


@pytest.mark.parametrize("seed", [0, 1])
def test_every_gold_state_is_reachable_and_consistent(seed):
    for task in instantiate(SUITE, seed):
        grader = build_grader(GraderSpec(kind="state", params="gold"), DOMAIN)
        gold = grader.gold_state(task)  # ToolError if a reference action fails
        env = DOMAIN.environment(task, task.as_of)
        env.reset(task.initial_state.seed)
        initial = env.snapshot()
        writes = {a.name for a in task.reference.actions} & DOMAIN.toolkit.write_tools()
        transfers = any(a.name == "transfer_to_human_agent" for a in task.reference.actions)
        changed = state_hash(gold) != state_hash(initial)
        assert changed is bool(writes or transfers), task.id
        for spec in task.graders:
            if spec.kind == "actions" and not writes:
                forbidden = {f if isinstance(f, str) else f["name"] for f in spec.params["forbidden"]}
                assert DOMAIN.toolkit.write_tools() <= forbidden, task.id


def test_initial_state_is_identical_across_resets():
    task = instantiate(SUITE, 0)[0]
    hashes = set()
    for _ in range(3):
        env = DOMAIN.environment(task, task.as_of)
        env.reset(task.initial_state.seed)
        hashes.add(state_hash(env.snapshot()))
    assert len(hashes) == 1


def test_a_copy_with_changes_is_hashed_again_and_instances_do_not_inherit_their_specs_hash(
    tmp_path: Path,
) -> None:
    from assay.core.task import Task
    from assay.suites import load_suite
    from assay.suites.instantiate import instantiate

    task = Task.model_validate({"id": "a", "user": {"opening": "Say hello."}})
    cached = task.input_hash()
    assert task.model_copy().input_hash() == cached  # the same input: the same hash
    changed = task.model_copy(update={"id": "b"})
    assert (
        changed.input_hash()
        == Task.model_validate({"id": "b", "user": {"opening": "Say hello."}}).input_hash()
    )
    assert changed.input_hash() != cached
    (tmp_path / "suite.yaml").write_text(
        'name: s\ntasks:\n  - id: t\n    instances: 2\n    user: {opening: "Say hello."}\n'
    )
    suite = load_suite(tmp_path)
    fresh = [t.input_hash() for t in instantiate(suite, 0)]
    suite.tasks[0].input_hash()  # a hash asked of the spec itself (the traces importer does)
    assert [t.input_hash() for t in instantiate(suite, 0)] == fresh and len(set(fresh)) == 2
