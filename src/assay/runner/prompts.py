"""Prompt snapshots: each model call of a trial records the template id of the prompt it
was made from and content hashes of its system prompt and tool definitions; the trial
keeps each distinct text once (``Transcript.prompts``), for ``assay prompt diff``."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..core.hashing import stable_hash
from ..core.messages import ToolSpec
from ..llm.meter import CallRecord

SYSTEM, TOOLS = "system:", "tools:"


@lru_cache(maxsize=512)
def text_hash(text: str) -> str:
    """Content hash of a system prompt (cached: a trial's calls share one text)."""
    return stable_hash(text, 12)


def tool_definitions(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    return [t.to_openai() for t in tools]


class PromptSnapshots:
    """The prompts one trial's model calls were made with."""

    __slots__ = ("_tools", "templates", "texts")

    def __init__(self) -> None:
        self.templates: dict[str, str] = {}
        """Template id per call role (agent, user), as the participant declares it."""
        self.texts: dict[str, Any] = {}
        """``system:HASH`` -> text, ``tools:HASH`` -> tool definitions."""
        self._tools: dict[tuple[int, ...], str] = {}

    def declare(self, role: str, participant: Any, fallback: str | None = None) -> None:
        """Note the template id a participant's prompts come from (its ``prompt_template``
        attribute, else the id part of its ``prompt_version``)."""
        template = getattr(participant, "prompt_template", None)
        if not template:
            version = getattr(participant, "prompt_version", None) or fallback
            template = version.partition(":")[0] if isinstance(version, str) and ":" in version else None
        if template:
            self.templates[role] = str(template)

    def attributes(self, record: CallRecord) -> dict[str, Any]:
        """The llm span attributes of one call's prompt."""
        out: dict[str, Any] = {}
        template = self.templates.get(record.role)
        if template:
            out["prompt_template"] = template
        if record.system_prompt is not None:
            digest = text_hash(record.system_prompt)
            out["system_hash"] = digest
            self.texts.setdefault(SYSTEM + digest, record.system_prompt)
        if record.tools:
            names = tuple(id(t) for t in record.tools)  # the trial's own ToolSpec objects: alive
            digest = self._tools.get(names, "")
            definitions = None
            if not digest:
                definitions = tool_definitions(record.tools)
                digest = self._tools[names] = stable_hash(definitions, 12)
            out["tools_hash"] = digest
            if TOOLS + digest not in self.texts:
                self.texts[TOOLS + digest] = definitions or tool_definitions(record.tools)
        return out
