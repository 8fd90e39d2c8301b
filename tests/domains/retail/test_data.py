"""The retail data generator: deterministic from its seed, big enough, consistent."""

from __future__ import annotations

import re
from collections import Counter
from datetime import date

from assay.domains.retail import DOMAIN, REFERENCE_DATE
from assay.domains.retail.data import STATUSES, generate, next_refund_id, order_total


def test_same_seed_same_database_other_seed_other_database():
    assert generate(3).hash() == generate(3).hash()
    assert generate(3).hash() != generate(4).hash()
    assert generate(3).snapshot() == generate(3).snapshot()


def test_counts_and_statuses():
    db = generate(0)
    assert db.count("users") >= 50
    assert db.count("products") >= 20
    assert db.count("orders") >= 200
    assert db.count("transfers") == 0
    statuses = Counter(o["status"] for o in db.rows("orders"))
    assert set(statuses) == set(STATUSES)
    assert db.count("refunds") == statuses["refunded"]


def test_records_are_consistent():
    db = generate(11)
    users = {u["user_id"]: u for u in db.rows("users")}
    assert len({u["email"] for u in users.values()}) == len(users)
    assert len({(u["first_name"], u["last_name"], u["zip"]) for u in users.values()}) == len(users)
    for user in users.values():
        assert re.fullmatch(r"[1-9]\d{4}", user["zip"]), "generated zips never start with 0"
        assert user["address"].endswith(user["zip"])
    for order in db.rows("orders"):
        assert re.fullmatch(r"#W[1-9]\d{6}", order["order_id"])
        assert order["user_id"] in users
        assert order["total"] == order_total(order["items"]) > 0
        created = date.fromisoformat(order["created_at"])
        assert created <= REFERENCE_DATE
        if order["status"] in ("delivered", "refunded"):
            delivered = date.fromisoformat(order["delivered_at"])
            assert created <= delivered <= REFERENCE_DATE
        else:
            assert order["delivered_at"] is None
        if order["status"] == "refunded":
            refund = db.get("refunds", order["refund_id"])
            assert refund is not None and refund["order_id"] == order["order_id"]
            assert refund["amount"] == order["total"]
        else:
            assert order["refund_id"] is None


def test_refund_ids_are_numbered_and_the_next_one_follows():
    db = generate(5)
    ids = sorted(r["refund_id"] for r in db.rows("refunds"))
    assert ids == [f"R-{n:04d}" for n in range(1, len(ids) + 1)]
    assert next_refund_id(db) == f"R-{len(ids) + 1:04d}"


def test_domain_caches_and_copies_the_base_state():
    first = DOMAIN.base_state(9)
    first.update("users", next(iter(first.rows("users")))["user_id"], first_name="Changed")
    assert DOMAIN.base_state(9).hash() == generate(9).hash()
