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


def _owner(record: dict) -> object:
    return record["owner"]


@pytest.mark.parametrize("seed", range(10))
def test_an_index_answers_as_a_scan_while_the_table_is_unchanged(seed: int) -> None:
    rng = random.Random(seed)
    db = generate(seed).copy()
    mutate(db, rng)
    assert db.indexed("accounts", _owner, "user1") is None  # changed since the snapshot: scan
    db = db.copy()
    owners = {r["owner"] for r in db.rows("accounts")}
    for owner in [*sorted(owners), "nobody"]:
        assert db.indexed("accounts", _owner, owner) == [
            r for r in db.rows("accounts") if r["owner"] == owner
        ]
    assert db.indexed("accounts", _owner, ["unhashable"]) is None
    db.update("accounts", next(iter(db.rows("accounts")))["account_id"], owner="new")
    assert db.indexed("accounts", _owner, "new") is None
    assert db.copy().indexed("accounts", _owner, "new") == [
        r for r in db.rows("accounts") if r["owner"] == "new"
    ]


def test_no_index_over_a_record_it_cannot_read_nor_without_a_snapshot() -> None:
    db = generate(0)
    assert db.indexed("accounts", _owner, "user1") is None  # no frozen state under it
    db.insert("accounts", {"account_id": "X", "balance": 1})  # no owner
    assert db.copy().indexed("accounts", _owner, "user1") is None


@pytest.mark.parametrize("seed", range(10))
def test_states_made_alike_from_one_state_diff_as_plain_states(seed: int) -> None:
    """Two trials that make the same changes from one frozen state (an end state and its
    gold) have no differences; any other pair differs as the plain states do."""
    base = generate(seed).copy()
    states = []
    for twin in (seed, seed, seed + 1):
        db = base.copy()
        mutate(db, random.Random(twin))
        states.append(db.snapshot())
    first, same, other = states
    assert diff(first, same) == [] == diff(first.to_dict(), same.to_dict())
    assert diff(first, other) == diff(first.to_dict(), other.to_dict())
    assert diff(other, same) == diff(other.to_dict(), same.to_dict())
