"""Reading recorded conversations: OTLP-JSON (what ``assay export-traces --format
otlp-json`` and the OpenTelemetry Collector's file exporter write), Phoenix's span
exports (its REST API / ``phoenix.client`` spans, one list or JSON Lines, attributes
flat or nested) and the simple JSONL conversation format (docs/traces.md).

Each trace (or JSONL line) becomes a :class:`Conversation` (``conversations.py`` for
traces): the user's lines, the tool calls with their outputs, the tool definitions when
recorded, the messages, what evaluators and annotators said (:mod:`.verdicts`) and
where it came from. Phoenix's span and trace annotations may sit in the same files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core.task import RecordedCall
from ..errors import AssayError
from .semconv import SpanAttributes as SA
from .verdicts import Verdict, annotation_verdict, is_annotation, metadata_verdicts


class TraceFileError(AssayError):
    """A trace file that cannot be read (names file, line and field)."""


@dataclass
class RawSpan:
    """A span as read from any format: flat dotted attributes, start in seconds."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: float
    kind: str = ""
    status_error: bool = False
    attributes: dict[str, Any] = field(default_factory=dict)
    status_message: str = ""


@dataclass
class Conversation:
    """One recorded conversation."""

    id: str
    user_turns: list[str] = field(default_factory=list)
    calls: list[RecordedCall] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The conversation as messages (role, content, tool_calls, name, error), for excerpts."""
    verdicts: list[Verdict] = field(default_factory=list)
    """What evaluators, annotators and the application said about it."""


@dataclass
class Annotation:
    """A Phoenix span or trace annotation, before it is joined to its trace."""

    verdict: Verdict
    trace_id: str | None = None
    span_id: str | None = None


@dataclass
class TraceRecords:
    """What one trace file holds."""

    spans: list[RawSpan] = field(default_factory=list)
    conversations: list[Conversation] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)


# -- attributes ---------------------------------------------------------------------------


def flatten(value: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Nested attributes (Phoenix's ``{"llm": {"token_count": ...}}``) as dotted keys;
    lists get their indexes as segments (``llm.input_messages.0.message.role``)."""
    out = {} if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            flatten(v, f"{prefix}.{i}", out)
    else:
        out[prefix] = value
    return out


def unflatten(flat: dict[str, Any], prefix: str) -> Any:
    """The value under ``prefix``: the attribute itself, or the nested structure its
    dotted sub-keys make (numeric segments become list positions)."""
    if prefix in flat:
        return flat[prefix]
    head = prefix + "."
    tree: dict[str, Any] = {}
    for key, value in flat.items():
        if key.startswith(head):
            node = tree
            parts = key[len(head) :].split(".")
            for part in parts[:-1]:
                child = node.setdefault(part, {})
                if not isinstance(child, dict):
                    break
                node = child
            else:
                node[parts[-1]] = value
    return _lists(tree) if tree else None


def _lists(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    converted = {k: _lists(v) for k, v in node.items()}
    if converted and all(k.isdigit() for k in converted):
        return [converted[k] for k in sorted(converted, key=int)]
    return converted


def json_value(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


# -- formats ------------------------------------------------------------------------------


def _otlp_value(v: dict[str, Any]) -> Any:
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        return float(v["doubleValue"])
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        return [_otlp_value(x) for x in v["arrayValue"].get("values", [])]
    if "kvlistValue" in v:
        return {kv["key"]: _otlp_value(kv["value"]) for kv in v["kvlistValue"].get("values", [])}
    return None


def _otlp_spans(doc: dict[str, Any]) -> Iterator[RawSpan]:
    for rs in doc.get("resourceSpans") or []:
        for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []:
            for s in ss.get("spans") or []:
                attrs = {a["key"]: _otlp_value(a.get("value") or {}) for a in s.get("attributes") or []}
                status = s.get("status") or {}
                yield RawSpan(
                    trace_id=str(s["traceId"]),
                    span_id=str(s["spanId"]),
                    parent_id=s.get("parentSpanId") or None,
                    name=str(s.get("name", "")),
                    start=int(s.get("startTimeUnixNano") or 0) / 1e9,
                    kind=str(attrs.get(SA.OPENINFERENCE_SPAN_KIND, "")),
                    status_error=status.get("code") in (2, "STATUS_CODE_ERROR", "ERROR"),
                    attributes=flatten(attrs),
                    status_message=str(status.get("message") or ""),
                )


def _seconds(value: Any) -> float:
    if isinstance(value, (int, float)):
        return float(value) / (1e9 if value > 1e12 else 1)
    if isinstance(value, str) and value:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    return 0.0


def _phoenix_span(s: dict[str, Any]) -> RawSpan:
    """A span of Phoenix's REST API / client (``context``, ``span_kind``, ``attributes``),
    or a row of its spans dataframe (``context.span_id``, ``attributes.KEY`` columns)."""
    flat = flatten(s)
    context: dict[str, Any] = s["context"] if isinstance(s.get("context"), dict) else {}
    attrs = {k[len("attributes.") :]: v for k, v in flat.items() if k.startswith("attributes.")}
    if not attrs and isinstance(s.get("attributes"), dict):
        attrs = flatten(s["attributes"])
    kind = str(s.get("span_kind") or attrs.get(SA.OPENINFERENCE_SPAN_KIND) or "")
    return RawSpan(
        trace_id=str(context.get("trace_id") or s.get("context.trace_id") or s.get("trace_id")),
        span_id=str(context.get("span_id") or s.get("context.span_id") or s.get("span_id")),
        parent_id=s.get("parent_id") or None,
        name=str(s.get("name", "")),
        start=_seconds(s.get("start_time")),
        kind=kind,
        status_error=str(s.get("status_code", "")).upper() == "ERROR",
        attributes=attrs,
        status_message=str(s.get("status_message") or ""),
    )


def _is_span(d: dict[str, Any]) -> bool:
    return "context" in d or "context.span_id" in d or ("span_id" in d and "trace_id" in d)


def read_file(path: str | Path) -> tuple[list[RawSpan], list[Conversation]]:
    """The spans and JSONL conversations of a trace file (any of the formats)."""
    records = read_records(path)
    return records.spans, records.conversations


def read_records(path: str | Path) -> TraceRecords:
    """The spans, JSONL conversations and annotations of a trace file."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceFileError(f"cannot read {source}: {getattr(exc, 'strerror', None) or exc}") from None
    records = TraceRecords()
    stripped = text.lstrip()
    whole: Any = None
    if stripped[:1] in "[{":
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None  # JSON Lines
    docs: list[tuple[int, Any]]
    if whole is not None:
        docs = [(1, whole)]
    else:
        docs = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                docs.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise TraceFileError(f"{source}:{number}: not valid JSON ({exc.msg})") from None
    for number, doc in docs:
        items = doc if isinstance(doc, list) else doc.get("data", [doc]) if isinstance(doc, dict) else None
        if items is None:
            raise TraceFileError(f"{source}:{number}: expected a JSON object or a list of them")
        for item in items:
            if not isinstance(item, dict):
                raise TraceFileError(f"{source}:{number}: expected a JSON object, got {type(item).__name__}")
            try:
                if "resourceSpans" in item:
                    records.spans.extend(_otlp_spans(item))
                elif "messages" in item:
                    records.conversations.append(conversation_of_messages(item, f"{source}:{number}"))
                elif is_annotation(item):
                    records.annotations.append(
                        Annotation(annotation_verdict(item), _id(item, "trace_id"), _id(item, "span_id"))
                    )
                elif _is_span(item):
                    records.spans.append(_phoenix_span(item))
                else:
                    raise TraceFileError(
                        f"{source}:{number}: not a span, an OTLP export, an annotation or a conversation "
                        "(expected resourceSpans, context/span_id, name/result or messages)"
                    )
            except (KeyError, TypeError, ValueError) as exc:
                raise TraceFileError(f"{source}:{number}: {type(exc).__name__}: {exc}") from None
    return records


def _id(item: dict[str, Any], key: str) -> str | None:
    value = item.get(key)
    return None if value in (None, "") else str(value)


# -- the simple conversation format --------------------------------------------------------


def _call_of(raw: dict[str, Any], where: str) -> tuple[str, str, dict[str, Any]]:
    fn: dict[str, Any] = raw["function"] if isinstance(raw.get("function"), dict) else raw
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise TraceFileError(f"{where}: tool_calls: each call needs a name")
    args = json_value(fn.get("arguments") or {})
    if not isinstance(args, dict):
        raise TraceFileError(f"{where}: tool_calls: the arguments of {name} must be a JSON object")
    return str(raw.get("id") or ""), name, args


def conversation_of_messages(data: dict[str, Any], where: str) -> Conversation:
    """A line of the JSONL conversation format: ``{"id", "messages": [...], "tools"?,
    "metadata"?}`` with OpenAI-style messages (user, assistant with ``tool_calls``,
    tool with ``tool_call_id``; ``"error": true`` marks a failed tool call)."""
    messages = data.get("messages")
    if not isinstance(messages, list):
        raise TraceFileError(f"{where}: messages: expected a list of messages")
    conv = Conversation(str(data.get("id") or ""), source=dict(data.get("metadata") or {}))
    conv.verdicts = metadata_verdicts(data)
    pending: dict[str, int] = {}
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant", "tool"):
            raise TraceFileError(f"{where}: messages.{i}.role: expected system, user, assistant or tool")
        role, content = m["role"], m.get("content") or ""
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        shown: dict[str, Any] = {"role": role, "content": content}
        if role != "system":
            conv.messages.append(shown)
        if role == "user":
            conv.user_turns.append(content)
        elif role == "assistant":
            for j, raw in enumerate(m.get("tool_calls") or []):
                call_id, name, args = _call_of(raw, f"{where}: messages.{i}.tool_calls.{j}")
                pending[call_id or f"#{len(conv.calls)}"] = len(conv.calls)
                conv.calls.append(RecordedCall(name=name, arguments=args))
                shown.setdefault("tool_calls", []).append({"name": name, "arguments": args})
        elif role == "tool":
            key = str(m.get("tool_call_id") or "")
            index = pending.pop(key, None)
            if index is None:  # no id: the oldest call still without an output
                index = next((v for v in pending.values()), None)
                if index is not None:
                    pending = {k: v for k, v in pending.items() if v != index}
            if index is None:
                raise TraceFileError(f"{where}: messages.{i}: a tool result that answers no tool call")
            error = bool(m.get("error")) or content.startswith("Error:")
            conv.calls[index] = conv.calls[index].model_copy(update={"output": content, "error": error})
            shown["name"] = conv.calls[index].name
            if error:
                shown["error"] = True
    conv.tools = [t for t in (data.get("tools") or []) if isinstance(t, dict)]
    return conv
