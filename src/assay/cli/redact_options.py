"""Redaction options shared by the commands that write or show what may be shared:
``--redact`` (on request: ``report``, ``export``, ``show``, ``view``), ``--no-redact``
(on by default: ``export-traces``, ``import traces``) and ``--redact-config FILE``
(docs/redaction.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from ..redact import Redactor

RedactOpt = Annotated[
    bool,
    typer.Option(
        "--redact",
        help="Replace secrets and personal data in the trials' content by pseudonyms (docs/redaction.md).",
    ),
]
RedactConfigOpt = Annotated[
    Path | None,
    typer.Option("--redact-config", help="Redaction config YAML (docs/redaction.md).", show_default=False),
]


def redactor_on_request(redact: bool, config: Path | None) -> Redactor | None:
    """The redactor of ``--redact`` (with ``--redact-config FILE``, which implies it), or
    None when neither is given."""
    if not redact and config is None:
        return None
    from ..redact import Redactor, load_config

    return Redactor(load_config(config)) if config is not None else Redactor()
