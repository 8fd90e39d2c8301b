"""The ``assay`` Typer application, shared options and console helpers."""

from __future__ import annotations

import contextlib
import json
import signal
import sys
from collections.abc import Iterator
from typing import Annotated, Any

import typer
from rich.console import Console

app = typer.Typer(
    name="assay",
    help="Evaluate AI agents: run suites k times, grade outcome and process, compare, gate.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# No emoji codes (``suite.yaml:100:`` must not print as a 💯); every string that comes
# from input (ids, names, messages) is passed through ``rich.markup.escape``.
out = Console(emoji=False)
err = Console(stderr=True, emoji=False)

StoreOpt = Annotated[
    str | None,
    typer.Option("--store", help="Store path or SQLAlchemy URL (default $ASSAY_STORE or .assay/assay.db)."),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print machine-readable JSON (see docs/json-output.md).")
]


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def parse_params(items: list[str], option: str = "--param") -> dict[str, Any]:
    """``["temperature=0", "mode=fast"]`` -> ``{"temperature": 0, "mode": "fast"}``
    (values are JSON when they parse as JSON, else strings)."""
    from ..errors import AssayError

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise AssayError(f"{option} {item!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Inside the block, SIGTERM (a CI job cancelled, ``kill``) stops the work as Ctrl-C
    does: what finished is kept and the run is marked interrupted."""

    def interrupt(signum: int, frame: Any) -> None:
        # Hand the signal to the SIGINT handler: inside ``asyncio.run`` that cancels the
        # main task (which then marks the run interrupted) instead of raising
        # KeyboardInterrupt in whichever task happens to run.
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler) and handler is not interrupt:
            handler(signal.SIGINT, frame)
            return
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
