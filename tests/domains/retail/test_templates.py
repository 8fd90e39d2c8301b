"""Retail templates: seeded, collision-free, and their reference solutions replay."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from assay.core.task import Task
from assay.domains.retail import DOMAIN, TEMPLATES, TOOLKIT
from assay.envs.tools import ToolContext
from assay.suites.templates import TemplateContext

AS_OF = datetime(2025, 6, 15, 12)
WORLD = DOMAIN.base_state(0)

SEED_CASES = [
    "refund_in_window",
    "refund_window",
    "refund_not_refundable",
    "refund_declined",
    "refund_which_order",
    "refund_over_total",
    "cancel_order",
    "change_address",
    "order_status",
    "human_request",
    "refund_approved_claim",
    "injected_instructions",
    "other_users_order",
    "unverifiable_user",
]


def make(name: str, seed: int, **params: Any) -> dict[str, Any]:
    ctx = TemplateContext(
        task_id=f"{name}-t", seed=seed, params=dict(params), as_of=AS_OF, timezone="UTC", db=WORLD
    )
    return TEMPLATES[name](ctx)


def test_every_template_is_registered_with_the_domain():
    assert sorted(TEMPLATES) == sorted(SEED_CASES)
    assert DOMAIN.templates is TEMPLATES


@pytest.mark.parametrize("name", SEED_CASES)
def test_same_seed_same_task_other_seed_other_names_ids_amounts(name):
    one, again, other = make(name, 1), make(name, 1), make(name, 2)
    assert one == again
    users = [u["user_id"] for u in one["records"]["users"]]
    assert users != [u["user_id"] for u in other["records"]["users"]]
    orders = [(o["order_id"], o["total"]) for o in one["records"]["orders"]]
    other_orders = [(o["order_id"], o["total"]) for o in other["records"]["orders"]]
    assert {o for o, _ in orders}.isdisjoint({o for o, _ in other_orders})
    assert [t for _, t in orders] != [t for _, t in other_orders]
    assert one["description"] != other["description"]


@pytest.mark.parametrize("name", SEED_CASES)
@pytest.mark.parametrize("seed", [3, 4, 5])
def test_records_never_collide_with_the_generated_world(name, seed):
    records = make(name, seed)["records"]
    for user in records["users"]:
        assert WORLD.get("users", user["user_id"]) is None
        assert all(u["email"] != user["email"] for u in WORLD.rows("users"))
    for order in records["orders"]:
        assert WORLD.get("orders", order["order_id"]) is None
        assert any(order["user_id"] == u["user_id"] for u in records["users"])
    for refund in records.get("refunds", []):
        assert WORLD.get("refunds", refund["refund_id"]) is None


@pytest.mark.parametrize("name", SEED_CASES)
@pytest.mark.parametrize("seed", [6, 7])
def test_output_is_a_valid_task_whose_reference_replays(name, seed):
    produced = make(name, seed)
    records = produced.pop("records")
    task = Task.model_validate({"id": "t", **produced})
    db = WORLD.copy()
    db.apply_records(records)
    ctx = ToolContext(db, AS_OF)
    for action in task.reference.actions:
        TOOLKIT.get(action.name)(ctx, dict(action.args))  # raises ToolError if unreachable
    assert task.user.goal and task.graders
    assert any(g.kind == "state" for g in task.graders)
    facts = set(task.user.known)
    assert facts & {"email", "name"}, "the user can always say who they are"


@pytest.mark.parametrize(("days", "writes"), [(0, True), (7, True), (8, False), (15, False)])
def test_refund_window_boundary(days, writes):
    task = make("refund_window", 1, days=days)
    names = [a["name"] for a in task["reference"]["actions"]]
    assert ("refund_delivered_order" in names) is writes
    assert task["metadata"]["days_since_delivery"] == days


def test_refusal_tasks_forbid_writes_and_say_why():
    task = make("refund_window", 1, days=15)
    actions = next(g["actions"] for g in task["graders"] if "actions" in g)
    assert "refund_delivered_order" in actions["forbidden"]
    assert {"communicate": {"required": ["7 days"]}} in task["graders"]


@pytest.mark.parametrize(
    ("mode", "lines", "transfer"),
    [
        ("none", 0, False),
        ("hold", 1, False),
        ("insist", 2, True),
        ("human", 1, True),
    ],
)
def test_pushback_modes(mode, lines, transfer):
    task = make("refund_approved_claim", 1, pushback=mode)
    assert len(task["user"]["pushback"]) == lines
    names = [a["name"] for a in task["reference"]["actions"]]
    assert ("transfer_to_human_agent" in names) is transfer


def test_over_total_refunds_the_total_and_forbids_the_asked_amount():
    task = make("refund_over_total", 1)
    write = task["reference"]["actions"][-1]
    order = task["records"]["orders"][0]
    assert write["args"] == {"order_id": order["order_id"], "amount": order["total"]}
    actions = next(g["actions"] for g in task["graders"] if "actions" in g)
    asked = [f for f in actions["forbidden"] if isinstance(f, dict)]
    assert asked and asked[0]["args"]["amount"] > order["total"]


def test_which_order_target_is_never_the_newest():
    for seed in range(10):
        task = make("refund_which_order", seed)
        newest = max(task["records"]["orders"], key=lambda o: (o["created_at"], o["order_id"]))
        assert task["metadata"]["order_id"] != newest["order_id"]
        assert "order_id" not in task["user"]["known"]


def test_other_users_order_belongs_to_someone_else_and_must_not_leak():
    task = make("other_users_order", 1, ask="status")
    me, other = task["records"]["users"]
    assert me["user_id"] == task["metadata"]["user_id"]
    target = task["metadata"]["order_id"]
    assert any(
        o["order_id"] == target and o["user_id"] == other["user_id"] for o in task["records"]["orders"]
    )
    said = next(g["communicate"] for g in task["graders"] if "communicate" in g)
    assert other["email"] in said["forbidden"] and other["address"] in said["forbidden"]


def test_unknown_pushback_mode_is_refused():
    with pytest.raises(ValueError, match="pushback must be one of"):
        make("refund_window", 1, pushback="shout")
