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

from pydantic import ValidationError

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
    origin: str = ""
    """Where it was read: ``FILE:LINE`` (a JSONL line, a JSON file) or ``FILE: trace ID``."""


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


_JSON_KINDS = {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}


def _shape_error(where: str, field: str, expected: str, value: Any) -> TraceFileError:
    got = _JSON_KINDS.get(type(value), "a number")
    return TraceFileError(f"{where}: {field}: expected {expected}, got {got}")


def _list(value: Any, where: str, field: str) -> list[Any]:
    """``value`` if it is a list (absent or empty: ``[]``), else a :class:`TraceFileError`."""
    if not value:
        return []
    if not isinstance(value, list):
        raise _shape_error(where, field, "a list", value)
    return value


def _object(value: Any, where: str, field: str) -> dict[str, Any]:
    """``value`` if it is a JSON object (absent or empty: ``{}``), else a :class:`TraceFileError`."""
    if not value:
        return {}
    if not isinstance(value, dict):
        raise _shape_error(where, field, "an object", value)
    return value


def _otlp_value(v: Any, where: str, field: str) -> Any:
    v = _object(v, where, field)
    try:
        if "stringValue" in v:
            return v["stringValue"]
        if "intValue" in v:
            return int(v["intValue"])
        if "doubleValue" in v:
            return float(v["doubleValue"])
    except (TypeError, ValueError, OverflowError):
        raise _shape_error(where, field, "a number", v.get("intValue", v.get("doubleValue"))) from None
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        here = f"{field}.arrayValue"
        values = _list(_object(v["arrayValue"], where, here).get("values"), where, f"{here}.values")
        return [_otlp_value(x, where, f"{here}.values.{i}") for i, x in enumerate(values)]
    if "kvlistValue" in v:
        here = f"{field}.kvlistValue"
        values = _list(_object(v["kvlistValue"], where, here).get("values"), where, f"{here}.values")
        return _otlp_attributes(values, where, f"{here}.values")
    return None


def _otlp_attributes(items: list[Any], where: str, field: str) -> dict[str, Any]:
    """OTLP key-value pairs (``[{"key", "value": {"stringValue": ...}}]``) as a dict."""
    out: dict[str, Any] = {}
    for i, kv in enumerate(items):
        kv = _object(kv, where, f"{field}.{i}")
        if not isinstance(kv.get("key"), str):
            raise _shape_error(where, f"{field}.{i}.key", "a string", kv.get("key"))
        out[kv["key"]] = _otlp_value(kv.get("value"), where, f"{field}.{i}.value")
    return out


#: OTLP times are unsigned 64-bit nanoseconds since 1970.
_MAX_NANOS = 2**64 - 1


def _nanos(value: Any, where: str, field: str) -> int:
    """An OTLP time (nanoseconds since 1970, a number or its digits)."""
    if not value:
        return 0
    try:
        nanos = int(value)
    except (TypeError, ValueError, OverflowError):
        nanos = -1
    if isinstance(value, bool) or not 0 <= nanos <= _MAX_NANOS:
        shown = (
            value if isinstance(value, str) and len(value) <= 40 else _JSON_KINDS.get(type(value), "a number")
        )
        raise TraceFileError(
            f"{where}: {field}: expected nanoseconds since 1970 (an integer from 0 to 2**64-1), got {shown}"
        )
    return nanos


def _otlp_spans(doc: dict[str, Any], where: str) -> Iterator[RawSpan]:
    for r, rs in enumerate(_list(doc.get("resourceSpans"), where, "resourceSpans")):
        here = f"resourceSpans.{r}"
        rs = _object(rs, where, here)
        scopes = "scopeSpans" if rs.get("scopeSpans") else "instrumentationLibrarySpans"
        for c, ss in enumerate(_list(rs.get(scopes), where, f"{here}.{scopes}")):
            scope = f"{here}.{scopes}.{c}"
            ss = _object(ss, where, scope)
            for i, s in enumerate(_list(ss.get("spans"), where, f"{scope}.spans")):
                field = f"{scope}.spans.{i}"
                s = _object(s, where, field)
                if not s.get("traceId") or not s.get("spanId"):
                    raise TraceFileError(f"{where}: {field}: a span needs a traceId and a spanId")
                attrs = _otlp_attributes(
                    _list(s.get("attributes"), where, f"{field}.attributes"), where, f"{field}.attributes"
                )
                status = _object(s.get("status"), where, f"{field}.status")
                parent = s.get("parentSpanId")
                yield RawSpan(
                    trace_id=str(s["traceId"]),
                    span_id=str(s["spanId"]),
                    parent_id=str(parent) if parent else None,
                    name=str(s.get("name", "")),
                    start=_nanos(s.get("startTimeUnixNano"), where, f"{field}.startTimeUnixNano") / 1e9,
                    kind=str(attrs.get(SA.OPENINFERENCE_SPAN_KIND, "")),
                    status_error=status.get("code") in (2, "STATUS_CODE_ERROR", "ERROR"),
                    attributes=flatten(attrs),
                    status_message=str(status.get("message") or ""),
                )


def _seconds(value: Any, where: str) -> float:
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value) / (1e9 if value > 1e12 else 1)
        if isinstance(value, str) and value:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError):
        pass
    else:
        return 0.0
    shown = repr(value) if isinstance(value, str) and len(value) <= 40 else "an out-of-range value"
    raise TraceFileError(f"{where}: start_time: expected an ISO 8601 time or seconds since 1970, got {shown}")


def _phoenix_span(s: dict[str, Any], where: str) -> RawSpan:
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
        parent_id=str(s["parent_id"]) if s.get("parent_id") else None,
        name=str(s.get("name", "")),
        start=_seconds(s.get("start_time"), where),
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
        except RecursionError:
            raise TraceFileError(f"{source}: {_TOO_DEEP}") from None
        except ValueError as exc:  # an integer longer than Python converts
            raise TraceFileError(f"{source}: not valid JSON ({str(exc).split(';')[0]})") from None
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
            except RecursionError:
                raise TraceFileError(f"{source}:{number}: {_TOO_DEEP}") from None
            except ValueError as exc:  # an integer longer than Python converts
                raise TraceFileError(
                    f"{source}:{number}: not valid JSON ({str(exc).split(';')[0]})"
                ) from None
    for number, doc in docs:
        items = doc if isinstance(doc, list) else doc.get("data", [doc]) if isinstance(doc, dict) else None
        if items is None:
            raise TraceFileError(f"{source}:{number}: expected a JSON object or a list of them")
        for item in items:
            if not isinstance(item, dict):
                raise TraceFileError(f"{source}:{number}: expected a JSON object, got {type(item).__name__}")
            try:
                if "resourceSpans" in item:
                    records.spans.extend(_otlp_spans(item, f"{source}:{number}"))
                elif "messages" in item:
                    records.conversations.append(conversation_of_messages(item, f"{source}:{number}"))
                elif is_annotation(item):
                    records.annotations.append(
                        Annotation(annotation_verdict(item), _id(item, "trace_id"), _id(item, "span_id"))
                    )
                elif _is_span(item):
                    records.spans.append(_phoenix_span(item, f"{source}:{number}"))
                else:
                    raise TraceFileError(
                        f"{source}:{number}: not a span, an OTLP export, an annotation or a conversation "
                        "(expected resourceSpans, context/span_id, name/result or messages)"
                    )
            except RecursionError:
                raise TraceFileError(f"{source}:{number}: {_TOO_DEEP}") from None
            except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
                raise TraceFileError(f"{source}:{number}: {error_line(exc)}") from None
    return records


def error_line(exc: Exception) -> str:
    """An unexpected shape's error as one line (a pydantic error: its first problem)."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{exc.title} {where}: {first['msg']}" if where else f"{exc.title}: {first['msg']}"
    return " ".join(f"{type(exc).__name__}: {exc}".split())


_TOO_DEEP = "values nest too deeply to read (lists and objects inside one another)"


def _id(item: dict[str, Any], key: str) -> str | None:
    value = item.get(key)
    return None if value in (None, "") else str(value)


# -- the simple conversation format --------------------------------------------------------


def _call_of(raw: Any, where: str) -> tuple[str, str, dict[str, Any]]:
    if not isinstance(raw, dict):
        got = _JSON_KINDS.get(type(raw), "a number")
        raise TraceFileError(f"{where}: expected a tool call (an object), got {got}")
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
    metadata = _object(data.get("metadata"), where, "metadata")
    conv = Conversation(str(data.get("id") or ""), source=dict(metadata), origin=where)
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
            for j, raw in enumerate(_list(m.get("tool_calls"), where, f"messages.{i}.tool_calls")):
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
    conv.tools = [t for t in _list(data.get("tools"), where, "tools") if isinstance(t, dict)]
    return conv
