"""Running the ``assay`` command line in process, as ``main()`` does (exit codes, one-line
errors, no traceback), much faster than a subprocess."""

from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    @property
    def err(self) -> str:
        """stderr with whitespace folded (rich wraps long lines)."""
        return " ".join(self.stderr.split())


def assay_main(*args: str) -> CliResult:
    """``assay ARGS...`` through :func:`assay.cli.main`, in this process."""
    from assay.cli import main

    out, err = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = ["assay", *args]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = argv
    return CliResult(code, out.getvalue(), err.getvalue())
