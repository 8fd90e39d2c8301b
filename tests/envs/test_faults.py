"""Fault injection: each kind, the seeded schedule, truthful snapshots, plans from files
and spec strings, and faults reaching the agent as tool results (never harness errors)."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from tests.toydomain import DOMAIN

from assay.core import Config, InitialState, Limits, Task, Trial, UserScenario
from assay.core.results import TrialResult
from assay.envs import InvalidToolCall, ToolError
from assay.envs.faults import (
    FAULT_ATTRIBUTE,
    FaultPlan,
    FaultSpecError,
    FaultyEnvironment,
    InjectedFault,
    load_fault_plan,
    parse_fault_spec,
    wrap_with_faults,
)
from assay.runner import RunContext, TrialJob, orchestrator

NOW = datetime(2025, 1, 1)


def env_with(spec: str | FaultPlan, seed: int = 1) -> FaultyEnvironment:
    plan = spec if isinstance(spec, FaultPlan) else parse_fault_spec(spec)
    env = wrap_with_faults(DOMAIN.environment(Task(id="t"), NOW), plan, seed)
    assert isinstance(env, FaultyEnvironment)
    env.reset(0)
    return env


def clean_env():
    env = DOMAIN.environment(Task(id="t"), NOW)
    env.reset(0)
    return env


# --- each kind ----------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "words"), [("timeout", "timed out after 30 s"), ("rate_limit", "429")])
def test_error_kinds_are_tool_errors_and_change_nothing(kind: str, words: str) -> None:
    env = env_with(f"deposit:{kind}#1")
    before = env.snapshot()
    with pytest.raises(InjectedFault) as caught:
        env.call("deposit", {"account_id": "A1", "amount": 5})
    assert isinstance(caught.value, ToolError) and not isinstance(caught.value, InvalidToolCall)
    assert words in str(caught.value) and "not processed" in str(caught.value)
    assert caught.value.kind == env.last_fault == kind
    assert env.snapshot() == before  # the write did not happen
    env.call("deposit", {"account_id": "A1", "amount": 5})  # call 2 is not faulted
    assert env.last_fault is None
    assert env.snapshot()["accounts"]["A1"]["balance"] == before["accounts"]["A1"]["balance"] + 5


def test_empty_results_keep_their_type_and_writes_apply() -> None:
    env = env_with("get_balance:empty#1,deposit:empty#1")
    assert env.call("get_balance", {"account_id": "A1"}) == "{}"
    assert env.call("deposit", {"account_id": "A1", "amount": 5}) == ""
    reference = clean_env()
    reference.call("deposit", {"account_id": "A1", "amount": 5})
    assert env.snapshot() == reference.snapshot()


def test_drop_fields() -> None:
    named = FaultPlan(
        rules=[{"tool": "get_balance", "kind": "drop_fields", "calls": [1], "fields": ["balance"]}]
    )
    assert json.loads(env_with(named).call("get_balance", {"account_id": "A1"})) == {"account_id": "A1"}
    seeded = json.loads(env_with("get_balance:drop_fields#1").call("get_balance", {"account_id": "A1"}))
    assert len(seeded) == 1 and set(seeded) < {"account_id", "balance"}
    assert env_with("deposit:drop_fields#1").call("deposit", {"account_id": "A1", "amount": 1}) == "null"


def test_partial_success_applies_the_write_and_cuts_the_answer() -> None:
    env, reference = env_with("deposit:partial#1"), clean_env()
    args = {"account_id": "A1", "amount": 7}
    cut, full = env.call("deposit", args), reference.call("deposit", args)
    assert full.startswith(cut) and 0.25 * len(full) <= len(cut) <= 0.75 * len(full)
    assert env.snapshot() == reference.snapshot() and env.last_fault == "partial"


def test_format_changes() -> None:
    camel = FaultPlan(rules=[{"tool": "get_balance", "kind": "format", "calls": [1], "style": "camel"}])
    assert json.loads(env_with(camel).call("get_balance", {"account_id": "A1"})).keys() == {
        "accountId",
        "balance",
    }
    text = FaultPlan(rules=[{"tool": "get_balance", "kind": "format", "calls": [1], "style": "text"}])
    answer = env_with(text).call("get_balance", {"account_id": "A1"})
    assert answer.startswith("account_id: A1\nbalance: ")
    wrapped = env_with("deposit:format#1").call("deposit", {"account_id": "A1", "amount": 1})
    assert json.loads(wrapped) == {"result": "deposited 1.0 into A1"}


def test_a_real_refusal_wins_over_a_content_fault() -> None:
    env = env_with("get_balance:empty#1")
    with pytest.raises(ToolError, match="does not exist"):
        env.call("get_balance", {"account_id": "nope"})
    assert env.last_fault is None and env.events == []


def test_snapshot_stays_truthful_under_every_kind() -> None:
    """Replaying on a clean environment only the calls that really ran gives the same state."""
    plan = FaultPlan(
        rules=[{"tool": "*", "kind": kind, "rate": 0.15} for kind in ("timeout", "rate_limit", "empty")]
        + [{"tool": "*", "kind": kind, "rate": 0.2} for kind in ("drop_fields", "partial", "format")]
    )
    env, replay, kinds = env_with(plan, seed=5), clean_env(), Counter[str]()
    for i in range(200):
        name, args = (
            ("deposit", {"account_id": f"A{i % 5}", "amount": i % 7 + 1})
            if i % 2
            else (
                "get_balance",
                {"account_id": f"A{i % 5}"},
            )
        )
        try:
            env.call(name, args)
        except InjectedFault:
            kinds[env.last_fault or ""] += 1
            continue  # the tool did not run
        kinds[env.last_fault or "none"] += 1
        replay.call(name, args)
    assert set(kinds) == {"none", "timeout", "rate_limit", "empty", "drop_fields", "partial", "format"}
    assert env.snapshot() == replay.snapshot()
    assert len(env.events) == 200 - kinds["none"]


# --- the schedule -------------------------------------------------------------------
def _schedule(env: FaultyEnvironment, calls: int = 300, other_every: int = 0) -> list[int]:
    faulted = []
    for i in range(1, calls + 1):
        if other_every and i % other_every == 0:
            with contextlib.suppress(InjectedFault):
                env.call("deposit", {"account_id": "A1", "amount": 1})
        with contextlib.suppress(InjectedFault):
            env.call("get_balance", {"account_id": "A1"})
        if env.last_fault:
            faulted.append(i)
    return faulted


def test_schedule_is_seeded_per_trial_tool_and_call() -> None:
    a = _schedule(env_with("get_balance:timeout@0.3", seed=1))
    assert a == _schedule(env_with("get_balance:timeout@0.3", seed=1))
    assert a != _schedule(env_with("get_balance:timeout@0.3", seed=2))
    assert 0.22 < len(a) / 300 < 0.38
    # calls of other tools do not shift this tool's schedule
    assert a == _schedule(env_with("get_balance:timeout@0.3,deposit:rate_limit@0.5", seed=1), other_every=3)
    env = env_with("get_balance:timeout@0.3", seed=1)
    _schedule(env, 50)
    env.reset(0)  # a new trial starts the count again
    assert _schedule(env) == a
    shifted = FaultPlan(rules=[{"tool": "get_balance", "kind": "timeout", "rate": 0.3}], seed=9)
    assert _schedule(env_with(shifted, seed=1)) != a


def test_explicit_calls_caps_and_wildcards() -> None:
    assert _schedule(env_with("get_balance:rate_limit#2+5"), 10) == [2, 5]
    capped = FaultPlan(rules=[{"tool": "*", "kind": "timeout", "rate": 1.0, "max_per_trial": 2}])
    assert _schedule(env_with(capped), 10) == [1, 2]


def test_user_calls_and_unknown_tools_pass_through() -> None:
    env = env_with("*:timeout@1")
    with pytest.raises(InvalidToolCall, match="unknown tool"):
        env.call("no_such_tool", {})
    assert env.last_fault is None and env.events == []


def test_wrapping_and_identity() -> None:
    env = clean_env()
    assert wrap_with_faults(env, None, 1) is env
    assert wrap_with_faults(env, FaultPlan(), 1) is env
    plan = parse_fault_spec("get_balance:timeout@0.5")
    wrapped = wrap_with_faults(env, plan.model_dump(mode="json"), 1)  # as a trial job carries it
    assert isinstance(wrapped, FaultyEnvironment) and wrapped.plan == plan
    assert wrapped.version == f"{env.version}+faults-{plan.hash[:8]}"
    assert wrapped.tools() == env.tools() and wrapped.write_tools() == {"deposit"}


# --- plans --------------------------------------------------------------------------
def test_spec_strings() -> None:
    plan = parse_fault_spec(
        "get_order_details:timeout@0.3, refund_delivered_order:rate_limit@0.2,*:empty#1+3"
    )
    assert [(r.tool, r.kind, r.rate, r.calls) for r in plan.rules] == [
        ("get_order_details", "timeout", 0.3, []),
        ("refund_delivered_order", "rate_limit", 0.2, []),
        ("*", "empty", 0.0, [1, 3]),
    ]
    assert (
        plan.describe() == "get_order_details:timeout@0.3,refund_delivered_order:rate_limit@0.2,*:empty#1+3"
    )
    assert not parse_fault_spec("none") and load_fault_plan("none") == FaultPlan()
    for bad, words in [
        ("get_order_details", "not a fault rule"),
        ("x:explode@0.1", "(kind): Input should be 'timeout'"),
        ("x:timeout", "never fires"),
        ("x:timeout@1.5", "(rate)"),
    ]:
        with pytest.raises(FaultSpecError, match=words.replace("(", r"\(").replace(")", r"\)")):
            parse_fault_spec(bad)


def test_plan_files_and_errors_name_file_line_field(tmp_path: Path) -> None:
    good = tmp_path / "plan.yaml"
    good.write_text(
        "faults:\n  seed: 3\n  rules:\n    - get_balance:timeout@0.5\n"
        "    - {tool: deposit, kind: partial, rate: 1}\n"
    )
    plan = load_fault_plan(str(good))
    assert plan is not None and plan.seed == 3 and [r.kind for r in plan.rules] == ["timeout", "partial"]
    listed = tmp_path / "list.yaml"
    listed.write_text(
        "- {tool: deposit, kind: empty, calls: [1]}\n- {tool: deposit, kind: format, rate: 2}\n"
    )
    with pytest.raises(
        FaultSpecError, match=r"list\.yaml:2: rules\.1\.rate: Input should be less than or equal to 1"
    ):
        load_fault_plan(listed)
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - tool: deposit\n    kind: explode\n    rate: 0.1\n")
    with pytest.raises(FaultSpecError, match=r"bad\.yaml:3: rules\.0\.kind: Input should be"):
        load_fault_plan(bad)
    with pytest.raises(FaultSpecError, match=r"missing\.yaml: cannot read"):
        load_fault_plan(tmp_path / "missing.yaml")
    with pytest.raises(FaultSpecError, match=r"faults: rules\.0\.tool"):
        load_fault_plan({"rules": [{"tool": "", "kind": "timeout", "rate": 1}]})


# --- through the orchestrator -------------------------------------------------------
async def run_faulted(job: TrialJob, plan: FaultPlan | None) -> TrialResult:
    """``run_trial`` of ``job`` with ``plan`` injected (the run context carries it)."""
    context = replace(job.run, faults=plan.model_dump(mode="json") if plan else None)
    return await orchestrator.run_trial(replace(job, run=context))


def _toy_job() -> TrialJob:
    task = Task(
        id="t",
        user=UserScenario(
            opening="Hi", goal="Please deposit 5 dollars.", known={"account_id": "A1", "amount": 5}
        ),
        initial_state=InitialState(seed=0),
        graders=[{"state": "gold"}],
        reference={"actions": [{"name": "deposit", "args": {"account_id": "A1", "amount": 5}}]},
    )
    agent = "python:tests.toyagents:DepositAgent"
    return TrialJob(RunContext("r", Config(agent=agent), domain="toy"), task, Trial("t", 0, 11), Limits())


async def test_faults_reach_the_agent_as_tool_results_never_harness_errors() -> None:
    clean = await run_faulted(_toy_job(), None)
    assert clean.reward == 1
    for kind in ("timeout", "rate_limit", "empty", "partial"):
        result = await run_faulted(_toy_job(), parse_fault_spec(f"deposit:{kind}#1"))
        assert result.termination == "user_stop" and result.reward is not None  # graded, not excluded
        assert result.transcript is not None
        (tool_message,) = [m for m in result.transcript.messages if m.role == "tool"]
        (span,) = [s for s in result.transcript.spans if s.kind == "tool"]
        assert span.attributes[FAULT_ATTRIBUTE] == kind
        if kind in ("timeout", "rate_limit"):  # the deposit never happened: the agent failed
            assert (
                tool_message.error
                and tool_message.content.startswith("Error: ")
                and "deposit" in tool_message.content
            )
            assert span.attributes["error"] == "refused"
            assert result.reward == 0 and result.root_cause == "AGENT"
        else:  # the deposit happened; only the answer was damaged
            assert not tool_message.error and result.reward == 1
        assert result.env_version.endswith(f"+faults-{parse_fault_spec(f'deposit:{kind}#1').hash[:8]}")
