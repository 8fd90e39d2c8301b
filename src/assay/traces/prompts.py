"""What changed between two runs' prompts (``assay prompt diff``): the prompt versions of
their configurations and the prompt snapshots their model calls recorded (template ids,
system prompts, tool definitions)."""

from __future__ import annotations

import difflib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..store.store import Store

SYSTEM, TOOLS = "system:", "tools:"


@dataclass
class RunPrompts:
    """The prompts of one run: per role, how often each template, system prompt and
    tool set was used; the texts by hash."""

    run_id: str
    prompt_version: str | None
    templates: dict[str, Counter[str]] = field(default_factory=dict)
    systems: dict[str, Counter[str]] = field(default_factory=dict)
    tools: dict[str, Counter[str]] = field(default_factory=dict)
    texts: dict[str, Any] = field(default_factory=dict)


def run_prompts(store: Store, run_id: str) -> RunPrompts:
    info = store.get_run(run_id)
    out = RunPrompts(run_id, info.config.prompt_version)
    for task_id in store.task_ids(run_id):
        for transcript in store.load_transcripts(run_id, task_id).values():
            out.texts.update(transcript.prompts)
            for s in transcript.spans:
                if s.kind != "llm":
                    continue
                role = str(s.attributes.get("role") or "agent")
                for key, target in (
                    ("prompt_template", out.templates),
                    ("system_hash", out.systems),
                    ("tools_hash", out.tools),
                ):
                    value = s.attributes.get(key)
                    if value:
                        target.setdefault(role, Counter())[str(value)] += 1
    return out


def _common(counter: Counter[str] | None) -> str | None:
    return counter.most_common(1)[0][0] if counter else None


def _tool_lines(definitions: Any) -> list[str]:
    return (
        json.dumps(definitions, indent=2, ensure_ascii=False, sort_keys=True).splitlines()
        if definitions
        else []
    )


def prompt_diff(a: RunPrompts, b: RunPrompts) -> dict[str, Any]:
    """The differences, per role: template ids, system prompts (a unified diff of the
    most used one of each run), tool definitions (names added/removed/changed, and a
    diff). ``same`` is true when nothing differs."""
    roles = sorted(
        set(a.systems) | set(b.systems) | set(a.templates) | set(b.templates) | set(a.tools) | set(b.tools)
    )
    out: dict[str, Any] = {
        "run_a": a.run_id,
        "run_b": b.run_id,
        "prompt_version": {"a": a.prompt_version, "b": b.prompt_version},
        "roles": {},
    }
    same = a.prompt_version == b.prompt_version
    for role in roles:
        entry: dict[str, Any] = {}
        ta, tb = sorted(a.templates.get(role, {})), sorted(b.templates.get(role, {}))
        if ta != tb:
            entry["templates"] = {"a": ta, "b": tb}
        sa, sb = _common(a.systems.get(role)), _common(b.systems.get(role))
        if sa != sb:
            text_a = a.texts.get(SYSTEM + sa, "") if sa else ""
            text_b = b.texts.get(SYSTEM + sb, "") if sb else ""
            entry["system"] = {
                "a": sa,
                "b": sb,
                "diff": list(
                    difflib.unified_diff(
                        str(text_a).splitlines(),
                        str(text_b).splitlines(),
                        f"{a.run_id} ({sa})",
                        f"{b.run_id} ({sb})",
                        lineterm="",
                        n=2,
                    )
                ),
            }
        ha, hb = _common(a.tools.get(role)), _common(b.tools.get(role))
        if ha != hb:
            defs_a = a.texts.get(TOOLS + ha, []) if ha else []
            defs_b = b.texts.get(TOOLS + hb, []) if hb else []
            by_a = {d.get("function", d).get("name"): d for d in defs_a}
            by_b = {d.get("function", d).get("name"): d for d in defs_b}
            entry["tools"] = {
                "a": ha,
                "b": hb,
                "added": sorted(set(by_b) - set(by_a)),
                "removed": sorted(set(by_a) - set(by_b)),
                "changed": sorted(n for n in set(by_a) & set(by_b) if by_a[n] != by_b[n]),
                "diff": list(
                    difflib.unified_diff(
                        _tool_lines(defs_a), _tool_lines(defs_b), a.run_id, b.run_id, lineterm="", n=2
                    )
                ),
            }
        if entry:
            out["roles"][role] = entry
            same = False
    out["same"] = same
    return out
