"""Process metrics every trial gets: turns, tool calls, invalid and redundant calls,
tool precision and recall against the reference's necessary tools."""

from __future__ import annotations

from ..core.hashing import canonical_json
from ..core.task import Task
from ..core.transcript import Transcript


def process_metrics(task: Task, transcript: Transcript) -> dict[str, float]:
    messages = transcript.messages
    calls = transcript.tool_calls()
    invalid = sum(1 for s in transcript.spans if s.kind == "tool" and s.attributes.get("error") == "invalid")
    tool_errors = sum(1 for m in messages if m.role == "tool" and m.error)
    seen: set[tuple[str, str]] = set()
    redundant = 0
    for c in calls:
        key = (c.name, canonical_json(c.arguments))
        redundant += key in seen
        seen.add(key)
    out: dict[str, float] = {
        "turns": float(
            sum(1 for m in messages if m.role in ("user", "assistant") and (m.content or m.role == "user"))
        ),
        "user_turns": float(sum(1 for m in messages if m.role == "user")),
        "agent_messages": float(sum(1 for m in messages if m.role == "assistant" and m.content)),
        "tool_calls": float(len(calls)),
        "invalid_calls": float(invalid),
        "tool_errors": float(tool_errors),
        "redundant_calls": float(redundant),
    }
    necessary = task.reference.necessary_tools()
    used = {c.name for c in calls}
    hit = len(used & necessary)
    if used:
        out["tool_precision"] = hit / len(used)
    if necessary:
        out["tool_recall"] = hit / len(necessary)
    return out
