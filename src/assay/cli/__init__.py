"""The ``assay`` command line: thin shells over the library.

Exit codes: 0 ok, 1 gate failed, 2 bad input or usage, 3 harness failure, 4 the store
cannot be used (read-only, corrupt, full, locked, unreachable).
"""

from __future__ import annotations

import sys

import typer
from rich.markup import escape

from ..core.terminal import printable
from ..errors import AssayError, HarnessError
from .app import app, err, root_command

__all__ = ["app", "main"]


def main() -> None:
    """Entry point: user mistakes print one line and exit 2; never a traceback. What an
    error quotes from an input file is printed with its control characters escaped."""
    try:
        code = root_command()(standalone_mode=False)
    except AssayError as exc:
        err.print(f"[red]error:[/] {escape(printable(str(exc)))}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except HarnessError as exc:
        err.print(f"[red]harness failure:[/] {escape(printable(str(exc)))}", highlight=False, soft_wrap=True)
        sys.exit(3)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(130)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # usage errors of the (click-based) parser: show, exit 2
        show = getattr(exc, "show", None)
        if show is None or not hasattr(exc, "exit_code"):
            raise
        show()
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
