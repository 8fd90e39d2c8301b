"""How a tau2 tool result becomes the text of its tool message.

tau2 (``Environment.to_json_str``) returns strings unchanged and JSON-encodes anything
else with ``json.dumps(..., default=str)`` (default separators, keys in insertion
order, non-ASCII escaped) after a conversion pass that dumps pydantic models as they
are but turns every *bare* number or boolean into its ``str()`` (so a tool returning
``{"charge": 4.0}`` renders ``{"charge": "4.0"}`` while a model's ``4.0`` stays a
number). :class:`Model` marks a record that tau2 would hold as a pydantic model.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any


class Model:
    """A record that tau2 holds as a pydantic model: rendered as its dump, unconverted."""

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any]):
        self.data = data

    def __repr__(self) -> str:
        return f"Model({self.data!r})"


def _process(value: Any) -> Any:
    if isinstance(value, Model):
        return value.data
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, (int, float, bool)):
        return str(value)
    if isinstance(value, list):
        return [_process(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_process(v) for v in value)
    if isinstance(value, dict):
        return {k: _process(v) for k, v in value.items()}
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    raise ValueError(f"Unsupported type: {type(value)}")


def to_json_str(value: Any) -> str:
    """The tool message content tau2 writes for a tool's return value."""
    if isinstance(value, str):
        return value
    return json.dumps(_process(value), default=str)


def loads_or_text(content: str) -> Any:
    """A tool message content as tau2 compares it when replaying: parsed JSON if it is
    JSON, else the text itself."""
    try:
        return json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return content


__all__ = ["Model", "loads_or_text", "to_json_str"]
