"""The ``assay`` Typer application, shared options and console helpers."""

from __future__ import annotations

import json
import sys
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
out = Console()
err = Console(stderr=True)

StoreOpt = Annotated[
    str | None,
    typer.Option("--store", help="Store path or SQLAlchemy URL (default $ASSAY_STORE or .assay/assay.db)."),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print machine-readable JSON (see docs/json-output.md).")
]


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def parse_params(items: list[str]) -> dict[str, Any]:
    """``["temperature=0", "mode=fast"]`` -> ``{"temperature": 0, "mode": "fast"}``
    (values are JSON when they parse as JSON, else strings)."""
    from ..errors import AssayError

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise AssayError(f"--param {item!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out
