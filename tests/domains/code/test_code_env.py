"""The code domain's environment: a workspace per trial, tools run in the sandbox,
snapshots that are the files, and the ``workspace`` template."""

from __future__ import annotations

import gc
from datetime import datetime
from pathlib import Path

import pytest

from assay.core import InitialState, Task
from assay.envs import ToolError, diff
from assay.envs.registry import get_domain
from assay.envs.sandbox import SandboxUnavailable, runner
from assay.envs.sandbox.bwrap import find_bwrap
from assay.errors import SuiteError
from assay.suites import instantiate, load_suite

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed")

FILES = [
    {"path": "app.py", "content": "def greet(name):\n    return 'hi ' + name\n"},
    {
        "path": "tests/test_app.py",
        "content": "from app import greet\n\ndef test_greet():\n    assert greet('a') == 'hi a'\n",
    },
]


def env_for(files=FILES):  # type: ignore[no-untyped-def]
    task = Task(id="t", initial_state=InitialState(records={"files": files}))
    env = get_domain("code").environment(task, datetime(2025, 1, 1))
    env.reset(0)
    return env


def test_tools_run_in_the_workspace_and_the_state_is_the_files() -> None:
    env = env_for()
    assert [t.name for t in env.tools()] == [
        "list_files",
        "read_file",
        "write_file",
        "run_command",
        "run_tests",
    ]
    assert env.write_tools() == {"write_file", "run_command"}
    initial = env.snapshot()
    assert set(initial["files"]) == {"app.py", "tests/test_app.py"}
    listing = env.call("list_files", {})
    assert "app.py\t" in listing and "tests/test_app.py\t" in listing
    assert env.call("read_file", {"path": "app.py"}) == FILES[0]["content"]
    assert env.call("run_tests", {}).startswith("exit code 0")
    new = "def greet(name):\n    return 'hello ' + name\n"
    assert env.call("write_file", {"path": "app.py", "content": new}) == f"wrote {len(new)} bytes to app.py"
    failing = env.call("run_tests", {"tests": "tests/test_app.py"})
    assert failing.startswith("exit code 1") and "1 failed" in failing
    made = env.call("run_command", {"command": "mkdir -p out && echo done > out/log.txt && echo ok"})
    assert made.startswith("exit code 0") and "ok" in made
    final = env.snapshot()
    changes = {(c["op"], c["key"]) for c in diff(initial, final)}
    assert changes == {("change", "app.py"), ("add", "out/log.txt")}
    assert final["files"]["app.py"]["content"] == new


def test_tool_misuse_is_a_tool_error_for_the_agent() -> None:
    env = env_for()
    for args in ({"path": "../outside.txt", "content": "x"}, {"path": "/etc/x", "content": "x"}):
        with pytest.raises(ToolError, match="relative path inside the workspace"):
            env.call("write_file", args)
    with pytest.raises(ToolError, match=r"cannot read missing\.py"):
        env.call("read_file", {"path": "missing.py"})
    slow = env.call("run_command", {"command": "sleep 30", "timeout_s": 1})
    assert slow.startswith("timed out after")


def test_links_and_fifos_left_by_the_agent_never_reach_the_host(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("HOST-SECRET")
    env = env_for()
    env.call(
        "run_command", {"command": f"ln -s {secret} leak.txt && ln -s /etc/hostname host.txt && mkfifo pipe"}
    )
    files = env.snapshot()["files"]
    assert files["leak.txt"] == {"path": "leak.txt", "symlink": str(secret)}
    assert "pipe" not in files and all("HOST-SECRET" not in str(r) for r in files.values())
    with pytest.raises(ToolError):
        env.call("read_file", {"path": "leak.txt"})  # the host file does not exist in the sandbox
    with pytest.raises(ToolError, match="relative path inside the workspace"):
        env.call("read_file", {"path": str(secret)})


def test_the_workspace_folder_is_private_and_removed() -> None:
    env = env_for()
    root = env.root
    assert root is not None and root.is_dir()
    env.reset(0)
    assert not root.exists() and env.root is not None and env.root.is_dir()
    second = env.root
    del env
    gc.collect()
    assert not second.exists()


def test_unknown_tables_and_no_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="one table, 'files'"):
        env_for_records = Task(id="t", initial_state=InitialState(records={"orders": [{"id": 1}]}))
        get_domain("code").environment(env_for_records, datetime(2025, 1, 1))
    monkeypatch.setattr(runner, "find_bwrap", lambda: None)
    monkeypatch.delenv(runner.UNSAFE_ENV, raising=False)
    with pytest.raises(SandboxUnavailable):
        env_for()


def test_workspace_template_reads_a_suite_folder(tmp_path: Path) -> None:
    (tmp_path / "repo" / "pkg").mkdir(parents=True)
    (tmp_path / "repo" / "pkg" / "mod.py").write_text("X = 1\n")
    (tmp_path / "repo" / "pkg" / "__pycache__").mkdir()
    (tmp_path / "repo" / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / "suite.yaml").write_text(
        "name: s\ndomain: code\ntasks:\n"
        "  - id: a\n    template: workspace\n    params: {dir: repo, files: {extra.txt: hello}}\n"
        "    graders: [{tests: {fail_to_pass: [{script: pkg/mod.py}]}}]\n"
    )
    (task,) = instantiate(load_suite(tmp_path))
    assert task.initial_state.records["files"] == [
        {"path": "extra.txt", "content": "hello"},
        {"path": "pkg/mod.py", "content": "X = 1\n"},
    ]
    (tmp_path / "suite.yaml").write_text(
        "name: s\ndomain: code\ntasks:\n  - id: a\n    template: workspace\n    params: {dir: nope}\n"
    )
    with pytest.raises(SuiteError, match=r"suite.yaml:5: tasks\[0\].template: .*'nope' does not exist"):
        load_suite(tmp_path)
