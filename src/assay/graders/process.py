"""Process metrics every trial gets: turns, tool calls, invalid and redundant calls,
tool precision and recall against the reference's necessary tools."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ..core.hashing import canonical_json
from ..core.messages import ToolCall
from ..core.task import Task
from ..core.transcript import Transcript
from ..envs.tools import arguments_key


def _repeated(calls: list[ToolCall]) -> int:
    """How many calls repeat an earlier one: the same tool with the same arguments
    (equal canonical JSON). Plain arguments (str, numbers, bool, None) are compared by
    type and value, sorted by name: the same equality, without writing the JSON."""
    keys: list[Hashable] = []
    for c in calls:
        key = arguments_key(c.arguments)
        if key is None:  # not plain: every call by its canonical JSON
            keys = [(c.name, canonical_json(c.arguments)) for c in calls]
            break
        keys.append((c.name, tuple(sorted(key, key=_name))))
    return len(keys) - len(set(keys))


def _name(item: tuple[Any, ...]) -> str:
    return str(item[0])


def process_metrics(task: Task, transcript: Transcript) -> dict[str, float]:
    messages = transcript.messages
    calls = transcript.tool_calls()
    invalid = sum(
        1
        for s in transcript.spans
        if s.kind == "tool"
        and s.attributes.get("error") == "invalid"
        and s.attributes.get("caller") != "user"
    )
    agent_ids = {c.id for c in calls}
    tool_errors = sum(1 for m in messages if m.role == "tool" and m.error and m.tool_call_id in agent_ids)
    redundant = _repeated(calls)
    said = [m for m in messages if m.role == "user" and (m.content or not m.tool_calls)]  # not tool-only
    out: dict[str, float] = {
        "turns": float(len(said) + sum(1 for m in messages if m.role == "assistant" and m.content)),
        "user_turns": float(len(said)),
        "agent_messages": float(sum(1 for m in messages if m.role == "assistant" and m.content)),
        "tool_calls": float(len(calls)),
        "invalid_calls": float(invalid),
        "tool_errors": float(tool_errors),
        "redundant_calls": float(redundant),
    }
    user_calls = transcript.user_tool_calls()
    if user_calls:
        out["user_tool_calls"] = float(len(user_calls))
    necessary = task.reference.necessary_tools()
    used = {c.name for c in calls}
    hit = len(used & necessary)
    if used:
        out["tool_precision"] = hit / len(used)
    if necessary:
        out["tool_recall"] = hit / len(necessary)
    return out
