"""Messages as OpenInference attributes: the flattened ``PREFIX.i.message.*`` keys of a
list of messages, an assistant message as one output value, and the JSON text both use."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..core.messages import Message
from .semconv import MessageAttributes as MA
from .semconv import ToolCallAttributes as TC
from .semconv import message_key, tool_call_key


def attribute_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def message_attributes(prefix: str, messages: Iterable[Message]) -> dict[str, Any]:
    """OpenInference's flattened messages: ``PREFIX.i.message.role`` ..."""
    out: dict[str, Any] = {}
    for i, m in enumerate(messages):
        out[message_key(prefix, i, MA.MESSAGE_ROLE)] = m.role
        if m.content:
            out[message_key(prefix, i, MA.MESSAGE_CONTENT)] = m.content
        if m.tool_call_id:
            out[message_key(prefix, i, MA.MESSAGE_TOOL_CALL_ID)] = m.tool_call_id
        if m.name:
            out[message_key(prefix, i, MA.MESSAGE_NAME)] = m.name
        p = f"{prefix}.{i}"
        for j, call in enumerate(m.tool_calls):
            out[tool_call_key(p, j, TC.TOOL_CALL_ID)] = call.id
            out[tool_call_key(p, j, TC.TOOL_CALL_FUNCTION_NAME)] = call.name
            out[tool_call_key(p, j, TC.TOOL_CALL_FUNCTION_ARGUMENTS_JSON)] = attribute_json(call.arguments)
    return out


def assistant_output(m: Message) -> str:
    if not m.tool_calls:
        return m.content
    return attribute_json(
        {
            "content": m.content,
            "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in m.tool_calls],
        }
    )
