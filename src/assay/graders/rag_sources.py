"""What a RAG trial retrieved and answered, read from its transcript.

Two sources, chosen by the graders' ``source`` parameter:

- **tools** (agents): the outputs of the agent's retrieval tool calls (``tools``: their
  names; default every tool). Each output is parsed into ranked documents by
  ``format``: ``json`` (a list of objects, or an object holding one under
  ``results_path`` or a ``results``/``documents``/``docs``/``hits``/``items`` key;
  ids from ``id_field``, text from the first of ``text_fields``), ``blocks`` (tau2's
  ``KB_search`` text: ``N. title`` / ``ID: ...`` / ``Score: ...`` / ``Content: ...``),
  ``regex`` (``id_pattern``, group 1 is an id; no text), or ``auto`` (JSON, then blocks,
  then ``id_pattern`` if given). Outputs of failed calls are ignored. The ranked list
  of a trial is every call's documents in call order (``calls: first|last`` keeps
  one call), each document at its first rank.
- **answer** (plain RAG pipelines): the final assistant message is a JSON object
  ``{"answer": "...", "retrieved": [...]}`` (optionally in a ```json fence);
  ``retrieved`` lists ids, best first, or objects ``{"id", "text"|"content", "title"}``.
  :func:`rag_answer` writes one. ``auto`` (the default) uses the ``retrieved`` field
  when the final message has one, else the tool calls.

The answer the generation graders read is the ``answer`` field of such a message, else
the final assistant message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import Field, field_validator

from ..core.task import Task
from ..core.transcript import Transcript
from .base import Params

Format = Literal["auto", "json", "blocks", "regex"]
_RESULT_KEYS = ("results", "documents", "docs", "hits", "items", "data")
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
_ID_LINE = re.compile(r"^\s*ID:\s*(\S+)\s*$")
_TITLE_LINE = re.compile(r"^\s*\d+\.\s+(.*\S)\s*$")
_CONTENT = re.compile(r"^\s*Content:\s?(.*)$")
_TRAILER = re.compile(r"^\s*\[Timing:.*\]\s*$")


@dataclass(frozen=True, slots=True)
class Doc:
    """A retrieved (or corpus) document: its id, and its text and title when known."""

    id: str
    text: str = ""
    title: str = ""


@dataclass
class Retrieved:
    """The ranked, de-duplicated documents of a trial and where they came from."""

    docs: list[Doc] = field(default_factory=list)
    source: Literal["tools", "answer"] = "tools"
    calls: int = 0

    @property
    def ids(self) -> list[str]:
        return [d.id for d in self.docs]

    def by_id(self) -> dict[str, Doc]:
        return {d.id: d for d in self.docs}


@runtime_checkable
class Corpus(Protocol):
    """The documents a citation may name. A domain offers one through a method
    ``corpus(task) -> Corpus | None``; without it, "exists" means "was retrieved"."""

    def get(self, doc_id: str) -> Doc | None: ...


def corpus_of(domain: Any, task: Task) -> Corpus | None:
    """The domain's corpus for ``task``, or None if the domain has none."""
    method = getattr(domain, "corpus", None)
    return method(task) if callable(method) else None


class SourceParams(Params):
    """Where the retrieved documents are read from (see the module docstring)."""

    source: Literal["auto", "tools", "answer"] = "auto"
    tools: list[str] | None = Field(None, description="retrieval tools; default: every tool")
    format: Format = "auto"
    id_pattern: str | None = Field(None, description="regex whose group 1 is a document id")
    id_field: str = "id"
    text_fields: list[str] = Field(default_factory=lambda: ["content", "text", "page_content", "snippet"])
    title_field: str = "title"
    results_path: str | None = Field(None, description="dotted path to the result list in JSON outputs")
    calls: Literal["all", "first", "last"] = "all"

    @field_validator("id_pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"id_pattern is not a valid regular expression: {exc}") from None
        return value


# parsing tool outputs ----------------------------------------------------------------
def _as_id(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int)):
        text = str(value).strip()
        return text or None
    return None


def _doc_of(item: Any, p: SourceParams) -> Doc | None:
    if not isinstance(item, Mapping):
        doc_id = _as_id(item)
        return Doc(doc_id) if doc_id else None
    doc_id = _as_id(item.get(p.id_field))
    if doc_id is None:
        return None
    text = next((str(item[f]) for f in p.text_fields if isinstance(item.get(f), str)), "")
    title = item.get(p.title_field)
    return Doc(doc_id, text, title if isinstance(title, str) else "")


def _json_items(value: Any, p: SourceParams) -> list[Any] | None:
    if p.results_path:
        for part in p.results_path.split("."):
            if isinstance(value, Mapping) and part in value:
                value = value[part]
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                return None
    if isinstance(value, list):
        return value
    if isinstance(value, Mapping):
        for key in _RESULT_KEYS:
            if isinstance(value.get(key), list):
                return list(value[key])
        if p.id_field in value:
            return [value]
    return None


def parse_json_docs(text: str, p: SourceParams) -> list[Doc] | None:
    """Documents of a JSON tool output, or None when the output is not such JSON."""
    m = _FENCE.match(text)
    try:
        value = json.loads(m.group(1) if m else text)
    except (json.JSONDecodeError, TypeError):
        return None
    items = _json_items(value, p)
    if items is None:
        return None
    docs = [d for d in (_doc_of(item, p) for item in items) if d is not None]
    return docs if docs or not items else None


def parse_blocks(text: str) -> list[Doc]:
    """Documents of tau2's ``KB_search`` text (title line, ``ID:``, ``Score:``,
    ``Content:`` and the content's further lines)."""
    lines = text.splitlines()
    id_rows = [i for i, line in enumerate(lines) if _ID_LINE.match(line)]
    docs = []
    for n, row in enumerate(id_rows):
        m = _TITLE_LINE.match(lines[row - 1]) if row > 0 else None
        title = m.group(1) if m else ""
        end = id_rows[n + 1] - 1 if n + 1 < len(id_rows) else len(lines)
        content: list[str] = []
        started = False
        for line in lines[row + 1 : end]:
            c = _CONTENT.match(line) if not started else None
            if c is not None:
                started = True
                content.append(c.group(1))
            elif started and not _TRAILER.match(line):
                content.append(line)
        match = _ID_LINE.match(lines[row])
        assert match is not None
        docs.append(Doc(match.group(1), "\n".join(content).strip(), title))
    return docs


def parse_tool_output(text: str, p: SourceParams) -> list[Doc]:
    """The ranked documents of one tool output (see the module docstring)."""
    if p.format in ("auto", "json"):
        docs = parse_json_docs(text, p)
        if docs is not None or p.format == "json":
            return docs or []
    if p.format in ("auto", "blocks"):
        docs = parse_blocks(text)
        if docs or p.format == "blocks":
            return docs
    if p.id_pattern:
        pattern = re.compile(p.id_pattern, re.MULTILINE)
        return [Doc(m.group(1) if pattern.groups else m.group(0)) for m in pattern.finditer(text)]
    return []


def merge_ranked(lists: Iterable[Iterable[Doc]]) -> list[Doc]:
    """Concatenate ranked lists; each id once, at its first rank, with the first
    non-empty text and title seen for it."""
    order: dict[str, Doc] = {}
    for docs in lists:
        for d in docs:
            old = order.get(d.id)
            if old is None:
                order[d.id] = d
            elif (not old.text and d.text) or (not old.title and d.title):
                order[d.id] = Doc(d.id, old.text or d.text, old.title or d.title)
    return list(order.values())


# the structured answer of plain RAG pipelines ---------------------------------------
def rag_answer(answer: str, retrieved: Sequence[str | Mapping[str, Any]]) -> str:
    """The final message of a plain RAG pipeline: its answer and what it retrieved
    (ids best first, or ``{"id", "text", "title"}`` objects), as graders read it."""
    items = [r if isinstance(r, str) else dict(r) for r in retrieved]
    return json.dumps({"answer": answer, "retrieved": items}, ensure_ascii=False)


def _structured(transcript: Transcript) -> dict[str, Any] | None:
    texts = transcript.agent_texts()
    if not texts:
        return None
    m = _FENCE.match(texts[-1])
    try:
        value = json.loads(m.group(1) if m else texts[-1])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) and ("retrieved" in value or "answer" in value) else None


def answer_text(transcript: Transcript) -> str:
    """The answer generation graders read: the ``answer`` field of a structured final
    message, else the final assistant message ("" if the agent said nothing)."""
    data = _structured(transcript)
    if data is not None and isinstance(data.get("answer"), str):
        return str(data["answer"])
    texts = transcript.agent_texts()
    return texts[-1] if texts else ""


def _from_answer(data: dict[str, Any], p: SourceParams) -> Retrieved:
    items = data.get("retrieved")
    docs = [d for d in (_doc_of(i, p) for i in (items if isinstance(items, list) else [])) if d]
    return Retrieved(merge_ranked([docs]), "answer", 0)


def _from_tools(transcript: Transcript, p: SourceParams) -> Retrieved:
    results = transcript.tool_results()
    lists = []
    for call in transcript.tool_calls():
        if p.tools is not None and call.name not in p.tools:
            continue
        message = results.get(call.id)
        if message is None or message.error:
            continue
        docs = parse_tool_output(message.content, p)
        if docs or p.tools is not None:
            lists.append(docs)
    if p.calls == "first":
        lists = lists[:1]
    elif p.calls == "last":
        lists = lists[-1:]
    return Retrieved(merge_ranked(lists), "tools", len(lists))


def retrieved_docs(transcript: Transcript, p: SourceParams) -> Retrieved:
    """The documents a trial retrieved, ranked (see the module docstring)."""
    if p.source != "tools":
        data = _structured(transcript)
        if data is not None and "retrieved" in data:
            return _from_answer(data, p)
        if p.source == "answer":
            return Retrieved([], "answer", 0)
    return _from_tools(transcript, p)


def render_docs(docs: Sequence[Doc], max_chars: int = 4000) -> str:
    """Documents as ``[id] title`` followed by their text (each cut at ``max_chars``)."""
    parts = []
    for d in docs:
        head = f"[{d.id}] {d.title}".rstrip()
        text = d.text if len(d.text) <= max_chars else d.text[:max_chars] + " [...]"
        parts.append(f"{head}\n{text or '(no text)'}")
    return "\n\n".join(parts)
