"""Round trip: a run exported as OTLP-JSON, imported as traces, replayed. The same agent
replays every trial with no divergence and the same reward; the hasty agent diverges,
and the report names the first call that differs. Also the JSONL conversation format
and the replay environment's rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.core.task import RecordedCall, Replay
from assay.envs.environment import NO_DOMAIN
from assay.envs.replay import RECORDED, REPEATED, UNRECORDED, ReplayEnvironment, divergence
from assay.envs.tools import ToolError
from assay.graders.replay import calls_made
from assay.store import Store
from tests.support.cli import assay_main

from .conftest import jsonl_conversations


def _replay(recorded: dict[str, Any], run_id: str, *args: str) -> dict[str, Any]:
    out = assay_main(
        "replay", str(recorded["suite"]), "--store", recorded["store"], "--run-id", run_id, "--json", *args
    )
    assert out.code == 0, out.stderr
    return json.loads(out.stdout)


def test_same_agent_replays_with_no_divergence_and_the_same_rewards(recorded: dict[str, Any]) -> None:
    run = recorded["run"]
    rewards = {r.task_id: r.reward for r in run.results}
    assert set(rewards.values()) == {0, 1}, "the recording holds passes and failures"
    assert recorded["import"]["tasks"] == len(rewards) == recorded["import"]["matched_to_suite_tasks"]
    report = _replay(recorded, "same", "--agent", "builtin:retail-flaky", "-p", "slip=0.35")
    assert report["trials"] == len(rewards)
    assert report["no_divergence"] == report["trials"], [
        r for r in report["trials_detail"] if r["diverged_at"]
    ]
    assert report["same_reward"] == report["recorded_rewards"] == report["trials"]
    for row in report["trials_detail"]:
        assert row["reward"] == rewards[row["task_id"]] == row["recorded_reward"]
        assert row["unrecorded_calls"] == 0 and row["unused_recorded_calls"] == 0
    # every tool call was answered from the recording
    st = Store(recorded["store"])
    for task_id in st.task_ids("same"):
        for transcript in st.load_transcripts("same", task_id).values():
            assert all(s.attributes.get("replay") == RECORDED for s in transcript.spans if s.kind == "tool")


def test_hasty_agent_diverges_at_the_first_differing_call(recorded: dict[str, Any]) -> None:
    report = _replay(recorded, "hasty", "--agent", "builtin:retail-hasty")
    st = Store(recorded["store"])
    original = {tid: st.load_transcripts("orig", tid)[0] for tid in st.task_ids("orig")}
    diverged = 0
    for row in report["trials_detail"]:
        new = st.load_transcripts("hasty", row["task_id"])[row["trial_index"]]
        before = [(c.name, c.arguments) for c in original[row["task_id"]].tool_calls()]
        after = [(c.name, c.arguments) for c in new.tool_calls()]
        # the first position where the two call sequences differ, computed here directly
        first = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), None)
        if first is None and len(before) != len(after):
            first = min(len(before), len(after))
        expected = None if first is None else first + 1
        assert row["diverged_at"] == expected, (row, before, after)
        diverged += expected is not None
    assert diverged >= len(report["trials_detail"]) // 2
    assert report["no_divergence"] == len(report["trials_detail"]) - diverged


def test_unrecorded_calls_get_an_error_or_the_live_domain(recorded: dict[str, Any]) -> None:
    suite = recorded["suite"]
    live = recorded["tmp"] / "live"
    otlp = next(recorded["tmp"].glob("orig.otlp.jsonl"))
    out = assay_main("import", "traces", str(otlp), "-o", str(live), "--no-redact", "--unrecorded", "live")
    assert out.code == 0, out.stderr
    errors = _replay(recorded, "hasty-error", "--agent", "builtin:retail-hasty")
    lived = _replay({**recorded, "suite": live}, "hasty-live", "--agent", "builtin:retail-hasty")
    assert suite != live
    st = Store(recorded["store"])

    def replies(run_id: str) -> set[str]:
        return {
            str(s.attributes.get("replay"))
            for tid in st.task_ids(run_id)
            for t in st.load_transcripts(run_id, tid).values()
            for s in t.spans
            if s.kind == "tool"
        }

    assert UNRECORDED in replies("hasty-error") and "unrecorded-live" not in replies("hasty-error")
    assert "unrecorded-live" in replies("hasty-live") and UNRECORDED not in replies("hasty-live")

    # an error tells the agent the call was not recorded; the live domain answers instead
    def said(run_id: str, text: str) -> bool:
        return any(
            text in m.content
            for tid in st.task_ids(run_id)
            for t in st.load_transcripts(run_id, tid).values()
            for m in t.messages
            if m.role == "tool"
        )

    assert said("hasty-error", "no recorded output") and not said("hasty-live", "no recorded output")
    assert errors["no_divergence"] == lived["no_divergence"] < errors["trials"]


def test_jsonl_conversations_replay_without_a_live_domain(recorded: dict[str, Any]) -> None:
    path = recorded["tmp"] / "conversations.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in jsonl_conversations(recorded)) + "\n")
    suite = recorded["tmp"] / "from-jsonl"
    out = assay_main("import", "traces", str(path), "-o", str(suite), "--json")
    assert out.code == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["matched_to_suite_tasks"] == 0 and info["redacted_values"] > 0  # redacted by default
    tasks = [json.loads(line) for line in (suite / "tasks.jsonl").read_text().splitlines()]
    assert all("@example.com" not in json.dumps(t) for t in tasks)
    assert all(t["graders"] == [{"kind": "replay"}] for t in tasks)
    # no live domain: the tools the agent sees come from the recording
    report = _replay({**recorded, "suite": suite}, "jsonl", "--agent", "builtin:retail-careful")
    assert report["trials"] == len(tasks)
    hasty = _replay({**recorded, "suite": suite}, "jsonl-hasty", "--agent", "builtin:retail-hasty")
    assert hasty["no_divergence"] < hasty["trials"]
    rewards = {r["task_id"]: r["reward"] for r in hasty["trials_detail"]}
    for row in hasty["trials_detail"]:  # the replay grader decides: a divergence fails
        assert rewards[row["task_id"]] == (0 if row["diverged_at"] else 1)


def test_bad_trace_files_are_one_line_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n{not json\n')
    out = assay_main("import", "traces", str(bad), "-o", str(tmp_path / "o"))
    assert out.code == 2 and "bad.jsonl:2" in out.err
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text('{"messages": [{"role": "robot", "content": "hi"}]}\n')
    out = assay_main("import", "traces", str(wrong), "-o", str(tmp_path / "o"))
    assert out.code == 2 and "wrong.jsonl:1" in out.err and "messages.0.role" in out.err
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    out = assay_main("import", "traces", str(empty), "-o", str(tmp_path / "o"))
    assert out.code == 2 and "no conversation" in out.err


# -- the replay environment -----------------------------------------------------------------


def _env(**kw: Any) -> ReplayEnvironment:
    from datetime import datetime

    from assay.core.task import Task

    replay = Replay(
        calls=[
            RecordedCall(name="get", arguments={"id": "1", "ts": 5}, output="one"),
            RecordedCall(name="get", arguments={"id": "2", "ts": 6}, output="two"),
            RecordedCall(name="put", arguments={"id": "1"}, output="Error: refused", error=True),
        ],
        **kw,
    )
    env = ReplayEnvironment(NO_DOMAIN.environment(Task(id="t"), datetime(2025, 1, 1)), replay)
    env.reset(0)
    return env


def test_replay_environment_matching_rules() -> None:
    env = _env()
    assert [t.name for t in env.tools()] == ["get", "put"]  # inferred from the calls
    assert env.call("get", {"id": "2", "ts": 6}) == "two" and env.last_replay == RECORDED
    assert env.call("get", {"id": "2", "ts": 6}) == "two" and env.last_replay == REPEATED
    with pytest.raises(ToolError, match="refused"):
        env.call("put", {"id": "1"})
    with pytest.raises(ToolError, match="no recorded output"):
        env.call("get", {"id": "1", "ts": 99})
    assert env.last_replay == UNRECORDED
    loose = _env(ignore_arguments=["ts"])
    assert loose.call("get", {"id": "1", "ts": 99}) == "one"
    by_name = _env(match="name")
    assert [by_name.call("get", {}), by_name.call("get", {"x": 1})] == ["one", "two"]


def test_divergence_positions() -> None:
    replay = Replay(calls=[RecordedCall(name="a"), RecordedCall(name="b"), RecordedCall(name="c")])
    same = divergence(replay, [("a", {}, "agent"), ("b", {}, "agent"), ("c", {}, "agent")])
    assert same.first is None and same.unrecorded == same.unused == 0
    skipped = divergence(replay, [("a", {}, "agent"), ("c", {}, "agent")])
    assert skipped.first is not None and skipped.first.index == 1 and skipped.unused == 1
    extra = divergence(
        replay, [("a", {}, "agent"), ("b", {}, "agent"), ("c", {}, "agent"), ("d", {}, "agent")]
    )
    assert extra.first is not None and extra.first.index == 3 and extra.first.recorded is None
    assert extra.unrecorded == 1
    assert calls_made(assay.core.transcript.Transcript()) == []
