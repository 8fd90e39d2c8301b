"""Carrying out one command: ``assay`` in this process, other programs in processes of their
own, servers started and checked, and the checks of commands that are not run
(``pip install``, the development loop). Used by :mod:`tests.docs.runner`."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import tomllib

from .extract import ROOT, Command, DocsTestError

#: development-loop programs -> the distribution of the test extra that provides them
DEV_TOOLS = {"pytest": "pytest", "ruff": "ruff", "mypy": "mypy", "lint-imports": "import-linter"}


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    def last_line(self) -> str:
        """The command's last word to the reader (stderr first), for the log."""
        lines = [ln.strip() for ln in (self.stderr or self.stdout).splitlines() if ln.strip()]
        return lines[-1][:100] if lines else ""


@contextlib.contextmanager
def environment(
    env: dict[str, str], cwd: Path | None = None, path: list[str] | None = None, purge: Path | None = None
) -> Iterator[None]:
    """``os.environ`` updated by ``env``, the working folder ``cwd`` and ``path`` first on
    ``sys.path``, for the duration; modules imported from under ``purge`` are forgotten
    afterwards (a page's ``my_agent.py`` is not another page's)."""
    saved_env, saved_cwd, saved_path = dict(os.environ), os.getcwd(), list(sys.path)
    saved_modules = set(sys.modules)
    os.environ.update(env)
    sys.path[:0] = path or []
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        sys.path[:] = saved_path
        if purge is not None:
            for name in set(sys.modules) - saved_modules:
                if (getattr(sys.modules[name], "__file__", None) or "").startswith(str(purge)):
                    del sys.modules[name]


def exit_code(exc: SystemExit) -> int:
    return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)


def assay_in_process(args: list[str], env: dict[str, str], stdin: str = "") -> Result:
    """``assay ARGS`` through ``main()`` in this process (as ``tests.support.cli`` does),
    with ``stdin`` as what the reader types."""
    from assay.cli import main

    out, err = io.StringIO(), io.StringIO()
    argv, saved_stdin = sys.argv, sys.stdin
    sys.argv, sys.stdin = ["assay", *args], io.StringIO(stdin)
    code = 0
    try:
        with environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = exit_code(exc)
    finally:
        sys.argv, sys.stdin = argv, saved_stdin
    return Result(code, out.getvalue(), err.getvalue())


def python_in_process(script: Path, args: list[str], env: dict[str, str], cwd: Path, purge: Path) -> Result:
    """``python SCRIPT ARGS`` with ``runpy``, in this process."""
    import runpy

    out, err = io.StringIO(), io.StringIO()
    argv, code = sys.argv, 0
    sys.argv = [str(script), *args]
    try:
        with (
            environment(env, cwd, purge=purge),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        code = exit_code(exc)
    finally:
        sys.argv = argv
    return Result(code, out.getvalue(), err.getvalue())


def process_env(env: dict[str, str]) -> dict[str, str]:
    """The environment of a child process: this checkout's ``src`` importable first."""
    merged = {**os.environ, **env}
    merged["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p
    )
    return merged


def in_process_of_its_own(argv: list[str], cwd: Path, env: dict[str, str]) -> Result:
    proc = subprocess.run(argv, cwd=cwd, env=process_env(env), capture_output=True, text=True, timeout=600)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_and_ask(argv: list[str], cwd: Path, env: dict[str, str], url: str, within_s: float = 60) -> None:
    """Start a server, wait until ``url`` answers 200, stop it (raises if it never does)."""
    proc = subprocess.Popen(
        argv, cwd=cwd, env=process_env(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(
                    f"exited {proc.returncode} before answering: {proc.stderr.read()[-2000:]}"
                )
            try:
                with urllib.request.urlopen(url, timeout=5) as page:
                    if page.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        raise AssertionError(f"did not answer on {url} within {within_s:.0f} s")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def check_pip(argv: list[str]) -> str:
    """``pip install`` of this project (``.``, ``-e .``, ``assay``) with declared extras."""
    if argv[1:2] != ["install"]:
        raise AssertionError(f"only `pip install` is understood, not `{' '.join(argv)}`")
    targets = [a for a in argv[2:] if not a.startswith("-")]
    if not targets:
        raise AssertionError("`pip install` names nothing to install")
    extras = set(_pyproject()["project"]["optional-dependencies"])
    for t in targets:
        m = re.fullmatch(r"(?P<what>\.|assay)(?:\[(?P<extras>[^\]]*)\])?", t)
        if m is None:
            raise AssertionError(f"`pip install {t}`: not this project (., -e . or assay[...])")
        missing = [
            e.strip() for e in (m.group("extras") or "").split(",") if e.strip() and e.strip() not in extras
        ]
        if missing:
            raise AssertionError(
                f"`pip install {t}`: no extra {missing} in pyproject.toml (it has {sorted(extras)})"
            )
    return "extras declared in pyproject.toml"


def check_dev_tool(cmd: Command, venvs: set[str]) -> str:
    """A development-loop program (the test suite, linters, CI, a venv): installed and
    declared, not run (they are the test suite and CI themselves)."""
    prog = cmd.program
    if prog in DEV_TOOLS:
        if not (shutil.which(prog) or (Path(sys.executable).parent / prog).exists()):
            raise AssertionError(f"`{prog}` is not installed")
        test_deps = {
            re.split(r"[<>=\[ ]", d)[0].lower()
            for d in _pyproject()["project"]["optional-dependencies"]["test"]
        }
        if DEV_TOOLS[prog] not in test_deps:
            raise AssertionError(f"`{prog}` ({DEV_TOOLS[prog]}) is not in the test extra of pyproject.toml")
        return f"{prog} installed, in the test extra"
    if prog == ".ci/run":
        if not os.access(ROOT / ".ci" / "run", os.X_OK):
            raise AssertionError(".ci/run is not an executable file of the repository")
        return "an executable file of the repository"
    if prog in ("python", "python3") and cmd.argv[1:3] == ["-m", "venv"] and len(cmd.argv) == 4:
        import venv  # noqa: F401  (the module the command runs)

        venvs.add(cmd.argv[3])
        return "the venv module is there"
    if prog == "." and len(cmd.argv) == 2:
        if not any(cmd.argv[1] == f"{v}/bin/activate" for v in venvs):
            raise AssertionError(f"`. {cmd.argv[1]}`: not the activate script of a venv made before")
        return "activates the venv made before"
    raise DocsTestError(
        f"{cmd.where}: no rule to run `{prog}`: add one to tests/docs/runner.py, or a docs-test skip marker"
    )
