"""The gold actions of every task of each domain's tasks.json run on the port. tau2
ignores gold actions that fail; the ones that fail here are tau2's own data (a user's
wrong email or zip, a product id given where an item id is expected, two writes the
scenario expects to be refused), listed below with their reasons."""

from __future__ import annotations

import pytest

from assay.domains.tau2 import Tau2Domain, gold_environment, load_tasks

# Gold actions that change nothing and fail in tau2's data: lookups with a user's
# mistaken identifier (tasks meant to make the agent recover).
RETAIL_FAILING_READS = {
    ("2", "get_product_details", "Product not found"),
    ("3", "get_product_details", "Product not found"),
    ("4", "get_product_details", "Product not found"),
    ("35", "find_user_id_by_email", "User not found"),
    ("37", "find_user_id_by_email", "User not found"),
    ("38", "find_user_id_by_email", "User not found"),
    ("39", "find_user_id_by_name_zip", "User not found"),
    ("46", "get_order_details", "Order not found"),
    ("47", "get_order_details", "Order not found"),
    ("54", "find_user_id_by_email", "User not found"),
    ("55", "find_user_id_by_email", "User not found"),
    ("67", "find_user_id_by_name_zip", "User not found"),
    ("68", "find_user_id_by_name_zip", "User not found"),
}
# Gold writes that tau2's data expects to be refused (the DB target keeps them undone).
RETAIL_FAILING_WRITES = {
    ("64", "exchange_delivered_order_items", "Non-delivered order cannot be exchanged"),
    (
        "105",
        "exchange_delivered_order_items",
        "Insufficient gift card balance to pay for the price difference",
    ),
}


def _failures(domain: Tau2Domain) -> tuple[int, set[tuple[str, str, str]], set[tuple[str, str, str]]]:
    tasks = load_tasks(domain.loaded.tasks_path)
    reads, writes = set(), set()
    for task in tasks:
        env, errors = gold_environment(domain, task)
        actions = task.evaluation_criteria.actions if task.evaluation_criteria else []
        for index, error in errors:
            action = actions[index]  # type: ignore[index]
            (writes if env.mutates(action.name) else reads).add((task.id, action.name, error))
    return len(tasks), reads, writes


@pytest.mark.parametrize(("name", "count"), [("airline", 50), ("telecom", 114), ("mock", 10)])
def test_every_gold_action_runs(name: str, count: int, request: pytest.FixtureRequest) -> None:
    n, reads, writes = _failures(request.getfixturevalue(name))
    assert n == count
    assert reads == set() and writes == set()


def test_retail_gold_actions_fail_only_where_tau2_data_expects(retail: Tau2Domain) -> None:
    n, reads, writes = _failures(retail)
    assert n == 114
    assert reads == RETAIL_FAILING_READS
    assert writes == RETAIL_FAILING_WRITES


def test_gold_replay_changes_the_state(airline: Tau2Domain) -> None:
    """A gold write lands in the state (the check above is not vacuous)."""
    task = next(t for t in load_tasks(airline.loaded.tasks_path) if t.id == "7")
    env, errors = gold_environment(airline, task)
    assert errors == []
    base = airline.environment_for()
    base.reset(0)
    assert env.snapshot().hash() != base.snapshot().hash()
