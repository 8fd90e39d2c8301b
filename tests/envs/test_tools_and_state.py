from datetime import datetime

import pytest
from tests.toydomain import DOMAIN, deposit, generate, get_balance

from assay.envs import Database, InvalidToolCall, ToolContext, ToolError, Toolkit, diff, state_hash, tool
from assay.envs.environment import ToolEnvironment


def test_schema_from_hints_and_docstring() -> None:
    spec = deposit.spec()
    assert spec.name == "deposit" and spec.write
    assert spec.description == "Deposit money into an account."
    assert spec.parameters["properties"]["amount"] == {
        "type": "number",
        "description": "Dollars to deposit; must be positive.",
    }
    assert spec.parameters["required"] == ["account_id", "amount"]
    assert spec.parameters["additionalProperties"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"account_id": "A1"}, "missing required argument 'amount'"),
        ({"account_id": "A1", "amount": "lots"}, "argument 'amount': should be a valid number"),
        ({"account_id": "A1", "amount": 1, "note": "x"}, "unexpected argument 'note'"),
    ],
)
def test_bad_arguments_explain_themselves(args: dict, message: str) -> None:
    env = DOMAIN.environment(_task(), datetime(2025, 1, 1))
    env.reset(0)
    with pytest.raises(InvalidToolCall) as exc:
        env.call("deposit", args)
    assert message in str(exc.value)
    assert "(arguments: account_id, amount)" in str(exc.value)


def test_unknown_tool_lists_available_ones() -> None:
    env = DOMAIN.environment(_task(), datetime(2025, 1, 1))
    env.reset(0)
    with pytest.raises(
        InvalidToolCall, match="unknown tool 'withdraw'; available tools: deposit, get_balance"
    ):
        env.call("withdraw", {})


def test_tool_refusal_is_a_tool_error_not_invalid() -> None:
    env = DOMAIN.environment(_task(), datetime(2025, 1, 1))
    env.reset(0)
    with pytest.raises(ToolError) as exc:
        env.call("deposit", {"account_id": "A1", "amount": -5})
    assert not isinstance(exc.value, InvalidToolCall)
    assert "amount must be positive" in str(exc.value)


def test_snapshot_is_independent_and_hash_deterministic() -> None:
    db = generate(3)
    snap = db.snapshot()
    h = db.hash()
    db.update("accounts", "A1", balance=-1)
    assert snap["accounts"]["A1"]["balance"] != -1
    assert state_hash(snap) == h != db.hash()
    assert generate(3).hash() == h
    assert generate(4).hash() != h


def test_diff_lists_changes_added_and_removed_records() -> None:
    before = generate(1).snapshot()
    db = Database({"accounts": "account_id"}, generate(1).snapshot())
    db.update("accounts", "A0", balance=999)
    db.insert("accounts", {"account_id": "Z", "owner": "z", "balance": 0})
    db.delete("accounts", "A4")
    changes = diff(before, db.snapshot())
    assert [(c["op"], c["key"]) for c in changes] == [("change", "A0"), ("remove", "A4"), ("add", "Z")]
    assert changes[0]["field"] == "balance" and changes[0]["new"] == 999
    assert diff(before, before) == []


def test_reset_gives_identical_initial_state() -> None:
    task = _task(records={"accounts": [{"account_id": "X", "owner": "x", "balance": 5}]})
    hashes = set()
    for _ in range(3):
        env = DOMAIN.environment(task, datetime(2025, 1, 1))
        env.reset(7)
        env.call("deposit", {"account_id": "X", "amount": 1})  # mutate: must not leak into the next trial
        env2 = DOMAIN.environment(task, datetime(2025, 1, 1))
        env2.reset(7)
        hashes.add(state_hash(env2.snapshot()))
    assert len(hashes) == 1


def _task(records: dict | None = None):
    from assay.core import InitialState, Task

    return Task(id="t", initial_state=InitialState(seed=0, records=records or {}))


def test_diff_reports_paths_into_nested_records() -> None:
    keys = {"reservations": "reservation_id"}
    record = {
        "reservation_id": "R1",
        "status": None,
        "flights": [{"flight_number": "HAT1", "status": "ok"}, {"flight_number": "HAT2", "status": "ok"}],
        "payment_history": [{"payment_id": "p1", "amount": 100}],
        "meta": {"tags": {"a": 1}},
    }
    db = Database(keys, {"reservations": {"R1": record}})
    before = db.snapshot()
    changed = {
        **record,
        "status": "cancelled",
        "flights": [record["flights"][0], {"flight_number": "HAT2", "status": "delayed"}],
        "payment_history": [*record["payment_history"], {"payment_id": "p1", "amount": -100}],
        "meta": {"tags": {"a": 2, "b": 3}},
    }
    db.update("reservations", "R1", **changed)
    changes = diff(before, db.snapshot())
    got = [(c["field"], c["path"], c["old"], c["new"]) for c in changes]
    assert got == [
        ("flights[1].status", ["flights", 1, "status"], "ok", "delayed"),
        ("meta.tags.a", ["meta", "tags", "a"], 1, 2),
        ("meta.tags.b", ["meta", "tags", "b"], None, 3),
        ("payment_history[1]", ["payment_history", 1], None, {"payment_id": "p1", "amount": -100}),
        ("status", ["status"], None, "cancelled"),
    ]
    # the plain-dict path gives the same answer as the layered one
    assert diff(before.to_dict(), db.snapshot().to_dict()) == changes
    # a shorter list removes indices; a value that changes type is reported whole
    db.update("reservations", "R1", flights=[], meta=None)
    changes = diff(before, db.snapshot())
    got = [(c["field"], c["old"], c["new"]) for c in changes if c["field"].startswith(("flights", "meta"))]
    assert got == [
        ("flights[0]", record["flights"][0], None),
        ("flights[1]", record["flights"][1], None),
        ("meta", record["meta"], None),
    ]


def test_arguments_of_exactly_their_types_are_taken_as_the_schema_would() -> None:
    given = {"amount": 2.5, "account_id": "A1"}
    assert deposit.validate(given) == {"account_id": "A1", "amount": 2.5}
    assert list(deposit.validate(given)) == ["account_id", "amount"]  # in declaration order
    coerced = deposit.validate({"account_id": "A1", "amount": 2})  # not exactly a float: the schema
    assert coerced == {"account_id": "A1", "amount": 2.0} and type(coerced["amount"]) is float
    with pytest.raises(InvalidToolCall, match="unexpected argument 'note'"):
        deposit.validate({"account_id": "A1", "note": 2.5})


def test_a_result_renders_as_sorted_json() -> None:
    import json

    from assay.envs import render_result

    value = {"b": [1, 2.5, None], "a": "é", "when": datetime(2025, 1, 1)}
    assert render_result(value) == json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    assert render_result("text") == "text"


calls: list[str] = []


@tool
def audited_balance(ctx: ToolContext, account_id: str, note: str = "") -> dict:
    """A read that writes now and then (not marked ``write``): a note is kept.

    Args:
        account_id: The account id.
        note: Kept as the owner when given.
    """
    calls.append(account_id)
    account = ctx.db.get("accounts", account_id)
    if account is None:
        raise ToolError(f"account {account_id} does not exist")
    if note:
        ctx.db.update("accounts", account_id, owner=note)
    return {"account_id": account_id, "balance": account["balance"], "rng": ctx.rng.random()}


TOOLKIT = Toolkit([get_balance, deposit, audited_balance])
TASK = _task({"accounts": [{"account_id": "Z", "owner": "z", "balance": 3}]})
BASES: dict = {}  # the generated state by seed, shared as a domain shares it


def _env(memo: bool) -> ToolEnvironment:
    """A trial's environment of TASK (the trials of a task start from one frozen state)."""
    now = datetime(2025, 1, 1)
    env = ToolEnvironment(
        TOOLKIT, generate, now=now, cache=BASES, initial=TASK.initial_state, memo_reads=memo
    )
    env.reset(4)
    return env


def _session(env: ToolEnvironment) -> list[object]:
    out: list[object] = []
    for name, args in [
        ("audited_balance", {"account_id": "A1"}),
        ("audited_balance", {"account_id": "A1"}),
        ("audited_balance", {"account_id": "nope"}),
        ("audited_balance", {"account_id": 1}),
        ("audited_balance", {"account_id": "A2", "note": "n"}),
        ("get_balance", {"account_id": "A1"}),
        ("deposit", {"account_id": "A1", "amount": 5.0}),
        ("audited_balance", {"account_id": "A1"}),
    ]:
        try:
            out.append(env.call(name, args))
        except ToolError as exc:
            out.append((type(exc).__name__, str(exc)))
        out.append(env.snapshot().hash())
    return out


def test_memoised_reads_give_what_the_tools_give() -> None:
    """With ``memo_reads`` the results and refusals of reads are memoised on the frozen
    state a trial starts from: every trial of the task gets what the tools give, and
    only reads that wrote nothing, before anything was written, skip the tool."""
    plain = _session(_env(memo=False))
    calls.clear()
    first = _session(_env(memo=True))
    assert first == plain
    assert calls == ["A1", "nope", "A2", "A1"]  # the same read again: memoised
    calls.clear()
    again = _env(memo=True)
    assert _session(again) == plain
    # memoised: the reads of A1 and "nope" (also a refusal); not the one that wrote,
    # nor any read after a write
    assert calls == ["A2", "A1"]
    with pytest.raises(InvalidToolCall):  # an invalid call is refused as such again
        _env(memo=True).call("audited_balance", {"account_id": 1})


def test_reads_are_memoised_per_frozen_state() -> None:
    env = _env(memo=True)
    before = env.db.reads()
    assert before is not None and before is _env(memo=True).db.reads()  # trials of a task share it
    env.call("deposit", {"account_id": "A1", "amount": 1.0})
    assert env.db.reads() is None  # written since the snapshot: nothing memoised
    env.snapshot()
    assert env.db.reads() is not None and env.db.reads() is not before
