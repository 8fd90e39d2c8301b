"""Running the ``assay`` command line in process, as ``main()`` does (exit codes, one-line
errors, no traceback), much faster than a subprocess (no interpreter start, no imports).

Keep a subprocess where the process is the point: signals, kill -9, several processes at
once, what a fresh interpreter imports."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    @property
    def err(self) -> str:
        """stderr with whitespace folded (rich wraps long lines)."""
        return " ".join(self.stderr.split())

    @property
    def returncode(self) -> int:
        """The exit code under :class:`subprocess.CompletedProcess`'s name."""
        return self.code


def _apply(env: Mapping[str, str | None]) -> None:
    for name, value in env.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@contextlib.contextmanager
def _environment(env: Mapping[str, str | None]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in env}
    try:
        _apply(env)
        yield
    finally:
        _apply(saved)


def assay_main(
    *args: str,
    env: Mapping[str, str | None] | None = None,
    cwd: str | Path | None = None,
    stdin: str | None = None,
) -> CliResult:
    """``assay ARGS...`` through :func:`assay.cli.main`, in this process.

    ``env`` sets (or, with ``None``, removes) environment variables for the call only;
    ``cwd`` runs it from another folder; ``stdin`` is what it reads from standard input."""
    from assay.cli import main

    out, err = io.StringIO(), io.StringIO()
    argv, stdin_before, cwd_before = sys.argv, sys.stdin, os.getcwd()
    sys.argv = ["assay", *args]
    code = 0
    try:
        if cwd is not None:
            os.chdir(cwd)
        if stdin is not None:
            sys.stdin = io.StringIO(stdin)
        with _environment(env or {}), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv, sys.stdin = argv, stdin_before
        os.chdir(cwd_before)
    return CliResult(code, out.getvalue(), err.getvalue())
