"""The code domain's tools. Every one runs in the sandbox, in the trial's workspace
(``/workspace`` inside): the agent's commands never touch the host."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from ...envs.sandbox import Sandbox, SandboxLimits, SandboxResult, clean_path
from ...envs.tools import ToolContext, ToolError, Toolkit, tool

#: The longest a command may run, whatever the agent asks for.
MAX_COMMAND_S = 300.0
MAX_LISTED = 500

_LIST = r"""
import os, sys
root, limit, shown = sys.argv[1], int(sys.argv[2]), 0
if not os.path.isdir(root):
    sys.exit(f"{root}: no such folder")
skip = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
for folder, dirs, files in os.walk(root):
    dirs[:] = sorted(d for d in dirs if d not in skip)
    for name in sorted(files):
        path = os.path.normpath(os.path.join(folder, name))
        if shown == limit:
            print(f"... (more files; list a sub-folder)")
            sys.exit(0)
        print(path, os.path.getsize(os.path.join(folder, name)), sep="\t")
        shown += 1
"""
_WRITE = r"""
import os, sys
path = sys.argv[1]
folder = os.path.dirname(path)
if folder:
    os.makedirs(folder, exist_ok=True)
data = sys.stdin.buffer.read()
with open(path, "wb") as fh:
    fh.write(data)
print(len(data))
"""


@dataclass(slots=True)
class CodeContext(ToolContext):
    """A tool's context in the code domain: also the workspace and its sandbox."""

    root: Path = Path(".")
    sandbox: Sandbox | None = None

    def run(
        self, argv: list[str] | str, stdin: str | None = None, timeout_s: float | None = None
    ) -> SandboxResult:
        if self.sandbox is None:
            raise RuntimeError("the code environment has no sandbox")
        limits: SandboxLimits = self.sandbox.limits.merged(timeout_s=timeout_s)
        return self.sandbox.run(argv, self.root, stdin=stdin, limits=limits)


def _path(path: str, folder: bool = False) -> str:
    if folder and path.strip() in ("", ".", "./", "/workspace", "/workspace/"):
        return "."
    try:
        return clean_path(path.removeprefix("/workspace/"))
    except ValueError as exc:
        raise ToolError(str(exc)) from None


@tool
def list_files(ctx: CodeContext, path: str = ".") -> str:
    """List the files of the workspace (or of a folder in it), one per line with its size in bytes.

    Args:
        path: A folder relative to the workspace root; "." for all files.
    """
    folder = _path(path, folder=True)
    result = ctx.run(["python", "-c", _LIST, folder, str(MAX_LISTED)])
    if not result.ok:
        raise ToolError(result.stderr.strip() or result.summary())
    return result.stdout or "(no files)"


@tool
def read_file(ctx: CodeContext, path: str) -> str:
    """Read a text file of the workspace.

    Args:
        path: The file's path relative to the workspace root, such as "src/app.py".
    """
    result = ctx.run(["cat", "--", _path(path)])
    if not result.ok:
        raise ToolError(f"cannot read {path}: {result.stderr.strip() or result.summary()}")
    return result.stdout


@tool(write=True)
def write_file(ctx: CodeContext, path: str, content: str) -> str:
    """Create or replace a file of the workspace with the given content (folders are created).

    Args:
        path: The file's path relative to the workspace root.
        content: The complete new content of the file.
    """
    rel = _path(path)
    result = ctx.run(["python", "-c", _WRITE, rel], stdin=content)
    if not result.ok:
        raise ToolError(f"cannot write {path}: {result.stderr.strip() or result.summary()}")
    return f"wrote {result.stdout.strip()} bytes to {rel}"


@tool(write=True)
def run_command(ctx: CodeContext, command: str, timeout_s: float = 60.0) -> str:
    """Run a shell command in the workspace (sandboxed: no network, limited CPU, memory and time).

    Args:
        command: The command line, run by /bin/sh in the workspace root.
        timeout_s: Seconds before every process of the command is killed (at most 300).
    """
    seconds = min(max(float(timeout_s), 1.0), MAX_COMMAND_S)
    return ctx.run(command, timeout_s=seconds).render()


@tool
def run_tests(ctx: CodeContext, tests: str = "") -> str:
    """Run the workspace's tests with pytest and show the result.

    Args:
        tests: Optional pytest arguments: test files or node ids such as "tests/test_app.py::test_add".
    """
    try:
        extra = shlex.split(tests)
    except ValueError as exc:
        raise ToolError(f"cannot parse tests {tests!r}: {exc}") from None
    argv = ["python", "-m", "pytest", "-q", "--color=no", "-p", "no:cacheprovider", *extra]
    return ctx.run(argv).render()


TOOLKIT = Toolkit([list_files, read_file, write_file, run_command, run_tests])
