"""A new user's own agent, as the README writes it: a file in the current folder, a
function or a class, sync or async; a wrong signature is a setup error, not 0%."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.support.cli import assay_main

from assay.store import Store

FUNCTION = """
def agent(conversation, tools):          # sync or async
    return "Hello! How can I help?"      # or {"text": ..., "tool_calls": [...]}
"""
SYNC_CLASS = """
class Agent:
    def __init__(self, ctx):
        self.seed = ctx.seed

    def respond(self, conversation, tools):
        return {"text": "Let me look at that.", "tool_calls": []}
"""
ASYNC_CLASS = """
from assay.agents import AgentTurn

class Agent:
    async def respond(self, conversation, tools):
        return AgentTurn(text="Let me check.")
"""
WRONG = """
class Agent:
    def respond(self, conversation):
        return "hi"
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    return tmp_path


@pytest.mark.parametrize(
    ("name", "source", "attr"),
    [
        ("fn_agent", FUNCTION, "agent"),
        ("sync_agent", SYNC_CLASS, "Agent"),
        ("async_agent", ASYNC_CLASS, "Agent"),
    ],
)
def test_an_agent_in_the_current_folder_runs(folder: Path, name: str, source: str, attr: str) -> None:
    (folder / f"{name}.py").write_text(source)
    result = assay_main(
        "run", "retail", "--agent", f"python:{name}:{attr}", "-k", "1", "--task", "cancel-pending", "--json"
    )
    assert result.code == 0, result
    summary = json.loads(result.stdout)
    assert summary["overall"]["trials"] == 3 and summary["excluded"]["trials"] == 0
    assert summary["terminations"].get("agent_error") is None  # the agent ran: it just did not help


def test_a_wrong_signature_is_a_setup_error_and_stores_no_run(folder: Path) -> None:
    (folder / "wrong_agent.py").write_text(WRONG)
    result = assay_main("run", "retail", "--agent", "python:wrong_agent:Agent", "-k", "1")
    assert result.code == 2, result
    assert "respond takes 1 argument(s) besides self; it must be respond(conversation, tools)" in result.err
    assert "Traceback" not in result.stderr
    assert Store().list_runs() == []
    missing = assay_main("run", "retail", "--agent", "python:no_such_module:agent", "-k", "1")
    assert missing.code == 2 and "cannot import no_such_module:agent" in missing.err


def test_init_writes_a_starter_that_runs_and_gates_at_once(folder: Path) -> None:
    made = assay_main("init", "shop")
    assert made.code == 0 and "wrote shop/evals/suite.yaml" in made.err, made
    again = assay_main("init", "shop")
    assert again.code == 2 and "exists; give --force" in again.err
    import os

    os.chdir(folder / "shop")
    ran = assay_main("run", "evals", "--json")
    assert ran.code == 0, ran
    summary = json.loads(ran.stdout)
    assert summary["overall"]["success_rate"] == 1.0 and summary["overall"]["trials"] == 9
    assert assay_main("show", "latest").code == 0
    gated = assay_main("gate", "latest", "--policy", "evals/gate.yaml")
    assert gated.code == 0, gated
    missing = assay_main("show", "latest~5")
    assert missing.code == 2 and "fewer runs" in missing.err


def test_the_module_in_the_current_folder_wins_over_one_of_that_name_loaded_before(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two folders with their own ``my_agent.py``, used one after the other in one process
    (a notebook, the pytest plugin, the docs test): each run gets its folder's module."""
    for sub, source in (("a", FUNCTION), ("b", SYNC_CLASS.replace("class Agent", "class Other"))):
        (folder / sub).mkdir()
        (folder / sub / "my_agent.py").write_text(source)
    monkeypatch.delitem(sys.modules, "my_agent", raising=False)
    monkeypatch.chdir(folder / "a")
    args = ["run", "retail", "-k", "1", "--task", "cancel-pending", "--json"]
    assert assay_main(*args, "--agent", "python:my_agent:agent").code == 0
    monkeypatch.chdir(folder / "b")
    result = assay_main(*args, "--agent", "python:my_agent:Other")
    assert result.code == 0, result
    assert sys.modules["my_agent"].__file__ == str(folder / "b" / "my_agent.py")
