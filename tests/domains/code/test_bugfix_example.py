"""examples/coding-bugfix: a multi-step coding task. The scripted reference agent and
an LLM agent (real OpenAI SDK over HTTP to a fake endpoint on 127.0.0.1 whose replies
come from the same plan) fix the bug with the tools; wrong fixes are told apart."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.domains.code.agents import BugfixReference
from assay.envs.sandbox.bwrap import find_bwrap
from assay.store import Store
from assay.suites import load_suite
from tests.support.fake_llm_server import FakeLLMServer, FakeToolCall, Reply, to_messages

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed")
EXAMPLE = Path(__file__).parents[3] / "examples" / "coding-bugfix"
HERE = "python:tests.domains.code.agents_for_tests"


def coder_brain(request: dict[str, Any]) -> Reply:
    """The 'model': the reference plan, decided from the conversation on the wire."""
    messages = [m for m in to_messages(request) if m.role != "system"]
    for m in messages:
        m.error = m.role == "tool" and m.content.startswith("Error:")
    turn = asyncio.run(BugfixReference().respond(messages, []))
    return Reply(
        text=turn.text, tool_calls=[FakeToolCall(c.name, dict(c.arguments), id=c.id) for c in turn.tool_calls]
    )


def test_the_example_suite_is_valid() -> None:
    suite = load_suite(EXAMPLE)
    (task,) = suite.tasks
    assert task.template == "workspace" and suite.domain == "code"


def test_reference_agent_fixes_the_bug(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    run = assay.run(EXAMPLE, agent="builtin:code-bugfix-reference", trials=1, store=store)
    (result,) = run.results
    assert result.reward == 1, result.grades
    tests, process = result.grades
    assert tests.reason == "3/3 FAIL_TO_PASS now pass; 6/6 PASS_TO_PASS still pass" and tests.score == 1.0
    assert process.passed is True
    assert result.outcome is not None
    assert [(c["key"], c["field"]) for c in result.outcome.diff] == [("textstats/stats.py", "content")]
    transcript = store.load_transcript(run.run_id, "fix-median-even", 0)
    calls = [c.name for c in transcript.tool_calls()]
    assert calls == ["list_files", "read_file", "run_tests", "write_file", "run_tests"]
    results = [m.content for m in transcript.messages if m.role == "tool"]
    assert results[2].startswith("exit code 1") and results[4].startswith("exit code 0")


def test_wrong_fixes_are_told_apart(tmp_path: Path) -> None:
    broke = assay.run(EXAMPLE, agent=f"{HERE}:BreakingFixAgent", trials=1, store=tmp_path / "a.db").results[0]
    assert broke.reward == 0 and broke.error_category == "broke_tests"
    assert "3/3 FAIL_TO_PASS now pass" in broke.grades[0].reason
    assert "broken: tests/test_stats.py::test_mean (failed)" in broke.grades[0].reason
    idle = assay.run(EXAMPLE, agent=f"{HERE}:GiveUpAgent", trials=1, store=tmp_path / "b.db").results[0]
    assert idle.reward == 0 and idle.error_category == "tests_failed" and idle.grades[0].score == 6 / 9


def test_an_llm_agent_drives_the_tools_through_the_fake_endpoint(tmp_path: Path) -> None:
    with FakeLLMServer(coder_brain) as server:
        run = assay.run(
            EXAMPLE,
            agent="openai:fake-coder",
            trials=1,
            store=tmp_path / "s.db",
            model_options={"base_url": server.openai_base_url, "api_key": "test", "backoff_base_s": 0.01},
        )
        requests = server.request_count
    (result,) = run.results
    assert result.reward == 1, (result.termination, result.outcome, result.grades)
    assert requests == 6  # five tool-calling turns and the final answer
    request = server.requests[0][1]
    assert {t["function"]["name"] for t in request["tools"]} == {
        "list_files",
        "read_file",
        "write_file",
        "run_command",
        "run_tests",
    }
    assert "sandbox" in request["messages"][0]["content"]  # the code domain's policy
