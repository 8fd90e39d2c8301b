"""Hostile agent code is contained by the sandbox and counted as the agent's failure;
the run goes on. A sandbox that cannot start is a harness error, never the agent's."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

import assay
from assay.envs.sandbox import runner
from assay.envs.sandbox.bwrap import find_bwrap
from assay.store import Store

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed")
AGENT = "python:tests.domains.code.agents_for_tests:AttackAgent"
ATTACKS = [
    "socket",
    "internet",
    "write-outside",
    "read-secret",
    "fork-bomb",
    "memory",
    "endless",
    "kill-everything",
]
EXAMPLE = Path(__file__).parents[3] / "examples" / "coding-bugfix"


def hostile_suite(folder: Path, port: int, secret: Path, outside: Path) -> Path:
    grader = {
        "tests": {
            "answer": {"path": "solution.py"},
            "files": {"check.py": "import solution\nassert solution.ok()\n"},
            "fail_to_pass": [{"script": "check.py"}],
            "timeout_s": 3,
        }
    }
    tasks = []
    for name in [*ATTACKS, "benign"]:
        opening = json.dumps({"attack": name, "port": port, "secret": str(secret), "outside": str(outside)})
        tasks.append({"id": name, "user": {"opening": opening}, "graders": [grader]})
    folder.mkdir()
    (folder / "suite.yaml").write_text(json.dumps({"name": "hostile", "tasks": tasks}))
    return folder


def test_hostile_code_is_contained_and_is_the_agents_failure(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    connections: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connections.append(server.accept())
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    secret = tmp_path / "secret.txt"
    secret.write_text("HOST-SECRET-42")
    outside = tmp_path / "pwned.txt"
    suite = hostile_suite(tmp_path / "suite", server.getsockname()[1], secret, outside)
    store = Store(tmp_path / "s.db")
    started = time.monotonic()
    try:
        run = assay.run(suite, agent=AGENT, trials=1, concurrency=4, store=store)
    finally:
        stop.set()
        thread.join()
        server.close()
    by_task = {r.task_id: r for r in run.results}
    assert set(by_task) == {*ATTACKS, "benign"}  # the run went on to the end
    assert by_task["benign"].reward == 1
    for name in ATTACKS:
        r = by_task[name]
        assert (r.reward, r.termination, r.root_cause) == (0, "user_stop", "AGENT"), (name, r.grades)
    reasons = {name: by_task[name].grades[0].reason for name in ATTACKS}
    assert "Network is unreachable" in reasons["internet"] and "timed out" in reasons["endless"]
    assert "timed out" in reasons["fork-bomb"] and "MemoryError" in reasons["memory"]
    assert connections == [] and not outside.exists()
    stored = json.dumps([r.grades[0].reason for r in run.results])
    for name in ATTACKS:
        stored += json.dumps([m.content for m in store.load_transcript(run.run_id, name, 0).messages])
    assert "HOST-SECRET-42" not in stored
    assert time.monotonic() - started < 60
    assert os.getpid() > 0  # still here: "kill -1" inside the sandbox cannot reach the harness


def test_no_sandbox_makes_harness_errors_not_agent_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "find_bwrap", lambda: None)
    monkeypatch.delenv(runner.UNSAFE_ENV, raising=False)
    suite = hostile_suite(tmp_path / "suite", 9, tmp_path / "s", tmp_path / "o")  # grading needs the sandbox
    graded = assay.run(suite, agent=AGENT, trials=1, task_ids=["benign", "endless"], store=tmp_path / "a.db")
    tools = assay.run(EXAMPLE, agent="builtin:code-bugfix-reference", trials=1, store=tmp_path / "b.db")
    for r in [*graded.results, *tools.results]:
        assert (r.reward, r.termination, r.root_cause) == (None, "harness_error", "HARNESS"), r
        assert "refuses to run untrusted code without a sandbox" in (r.outcome.error if r.outcome else "")
    summary = graded.summary().to_dict()
    assert summary["excluded"]["trials"] == 2 and summary["excluded"]["by_root_cause"] == {"HARNESS": 2}
    assert summary["overall"]["success_rate"] is None  # nothing counted against the agent
