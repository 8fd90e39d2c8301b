"""Process metrics every trial gets: turns, tool calls, invalid and redundant calls,
tool precision and recall against the reference's necessary tools."""

from __future__ import annotations

from ..core.hashing import canonical_json
from ..core.task import Task
from ..core.transcript import Transcript


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
    seen: set[tuple[str, str]] = set()
    redundant = 0
    for c in calls:
        key = (c.name, canonical_json(c.arguments))
        redundant += key in seen
        seen.add(key)
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
