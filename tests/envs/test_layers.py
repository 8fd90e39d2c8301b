"""Copy-on-write layers: snapshots are O(1) and frozen, hashes are incremental but
equal to hashing from scratch, fast diffs equal plain diffs, trials never leak."""

import random

import pytest
from tests.toydomain import generate

from assay.envs import Database, State, diff, state_hash


def mutate(db: Database, rng: random.Random, steps: int = 20) -> None:
    for i in range(steps):
        op = rng.choice(["update", "insert", "delete", "upsert"])
        key = f"A{rng.randint(0, 6)}"
        if op == "update" and db.get("accounts", key) is not None:
            db.update("accounts", key, balance=rng.randint(0, 999))
        elif op == "insert" and db.get("accounts", f"N{i}") is None:
            db.insert("accounts", {"account_id": f"N{i}", "owner": "n", "balance": i})
        elif op == "delete":
            db.delete("accounts", key)
        elif op == "upsert":
            db.upsert("accounts", {"account_id": key, "owner": f"o{i}", "balance": 1})


@pytest.mark.parametrize("seed", range(20))
def test_incremental_hash_and_fast_diff_equal_the_plain_ones(seed: int) -> None:
    rng = random.Random(seed)
    base = generate(seed)
    first = base.copy()
    mutate(first, rng)
    middle = first.snapshot()
    mutate(first, rng)
    end = first.snapshot()
    other = base.copy()
    mutate(other, rng)
    gold = other.snapshot()
    for state in (middle, end, gold):
        assert state.hash() == state_hash(state.to_dict())
    for a, b in ((middle, end), (end, gold), (gold, middle)):
        assert diff(a, b) == diff(a.to_dict(), b.to_dict())
        assert (a.hash() == b.hash()) == (a.to_dict() == b.to_dict())


def test_snapshots_are_frozen_and_copies_independent() -> None:
    db = generate(1)
    before = db.snapshot()
    copy = db.copy()
    db.update("accounts", "A1", balance=-1)
    copy.update("accounts", "A1", balance=-2)
    assert before["accounts"]["A1"]["balance"] not in (-1, -2)
    assert db.get("accounts", "A1")["balance"] == -1 and copy.get("accounts", "A1")["balance"] == -2
    with pytest.raises(TypeError):
        before["accounts"]["X"] = {}  # read-only view
    assert isinstance(before, State) and before.to_dict()["accounts"]["A1"] == before["accounts"]["A1"]


def test_repeated_copies_of_a_base_do_not_grow_its_chain() -> None:
    base = generate(2)
    base.snapshot()
    depth = base._layer.depth
    for _ in range(100):
        base.copy()
    assert base._layer.depth == depth
