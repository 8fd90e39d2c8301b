"""Reading recorded conversations: OTLP-JSON (what ``assay export-traces --format
otlp-json`` and the OpenTelemetry Collector's file exporter write), Phoenix's span
exports (its REST API / ``phoenix.client`` spans, one list or JSON Lines, attributes
flat or nested) and the simple JSONL conversation format (docs/traces.md).

Each trace (or JSONL line) becomes a :class:`Conversation`: the user's lines, the tool
calls with their outputs, the tool definitions when recorded, and where it came from.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core.task import RecordedCall
from ..errors import AssayError
from .semconv import OpenInferenceSpanKindValues as Kind
from .semconv import SpanAttributes as SA


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


@dataclass
class Conversation:
    """One recorded conversation."""

    id: str
    user_turns: list[str] = field(default_factory=list)
    calls: list[RecordedCall] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)


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


def _json_value(value: Any) -> Any:
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
    )


def _is_span(d: dict[str, Any]) -> bool:
    return "context" in d or "context.span_id" in d or ("span_id" in d and "trace_id" in d)


def read_file(path: str | Path) -> tuple[list[RawSpan], list[Conversation]]:
    """The spans and JSONL conversations of a trace file (any of the formats)."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceFileError(f"cannot read {source}: {getattr(exc, 'strerror', None) or exc}") from None
    spans: list[RawSpan] = []
    conversations: list[Conversation] = []
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
                    spans.extend(_otlp_spans(item))
                elif "messages" in item:
                    conversations.append(conversation_of_messages(item, f"{source}:{number}"))
                elif _is_span(item):
                    spans.append(_phoenix_span(item))
                else:
                    raise TraceFileError(
                        f"{source}:{number}: not a span, an OTLP export or a conversation "
                        "(expected resourceSpans, context/span_id or messages)"
                    )
            except (KeyError, TypeError, ValueError) as exc:
                raise TraceFileError(f"{source}:{number}: {type(exc).__name__}: {exc}") from None
    return spans, conversations


# -- the simple conversation format --------------------------------------------------------


def _call_of(raw: dict[str, Any], where: str) -> tuple[str, str, dict[str, Any]]:
    fn: dict[str, Any] = raw["function"] if isinstance(raw.get("function"), dict) else raw
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise TraceFileError(f"{where}: tool_calls: each call needs a name")
    args = _json_value(fn.get("arguments") or {})
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
    pending: dict[str, int] = {}
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant", "tool"):
            raise TraceFileError(f"{where}: messages.{i}.role: expected system, user, assistant or tool")
        role, content = m["role"], m.get("content") or ""
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        if role == "user":
            conv.user_turns.append(content)
        elif role == "assistant":
            for j, raw in enumerate(m.get("tool_calls") or []):
                call_id, name, args = _call_of(raw, f"{where}: messages.{i}.tool_calls.{j}")
                pending[call_id or f"#{len(conv.calls)}"] = len(conv.calls)
                conv.calls.append(RecordedCall(name=name, arguments=args))
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
    conv.tools = [t for t in (data.get("tools") or []) if isinstance(t, dict)]
    return conv


# -- traces -> conversations -----------------------------------------------------------------


def conversations_of_spans(spans: list[RawSpan]) -> list[Conversation]:
    """One conversation per trace (traces without a user message or a tool call, such as
    assay's run span, are left out)."""
    traces: dict[str, list[RawSpan]] = defaultdict(list)
    for s in spans:
        traces[s.trace_id].append(s)
    out = []
    for trace_id, members in traces.items():
        members.sort(key=lambda s: s.start)
        conv = _assay_conversation(trace_id, members) or _openinference_conversation(trace_id, members)
        if conv.user_turns or conv.calls:
            out.append(conv)
    return out


def _tool_call(s: RawSpan) -> RecordedCall:
    a = s.attributes
    args = _json_value(a.get(SA.INPUT_VALUE))
    if not isinstance(args, dict):
        params = unflatten(a, SA.TOOL_PARAMETERS)
        args = _json_value(params) if params is not None else {}
    if not isinstance(args, dict):
        args = {}
    output = a.get(SA.OUTPUT_VALUE)
    error = bool(a.get("assay.tool.error")) or s.status_error
    caller = a.get("assay.tool.caller", "agent")
    return RecordedCall(
        name=str(a.get(SA.TOOL_NAME) or s.name),
        arguments=args,
        output="" if output is None else str(output),
        error=error,
        caller="user" if caller == "user" else "agent",
    )


def _assay_conversation(trace_id: str, spans: list[RawSpan]) -> Conversation | None:
    root = next((s for s in spans if s.attributes.get("assay.span.kind") == "trial"), None)
    if root is None:
        return None
    a = root.attributes
    source = {
        "trace_id": trace_id,
        "run_id": a.get("assay.run_id"),
        "task_id": a.get("assay.task_id"),
        "trial": a.get("assay.trial_index"),
        "reward": None if a.get("assay.excluded") else a.get("assay.reward"),
        "termination": a.get("assay.termination"),
        "suite": a.get("assay.suite.name"),
        "suite_hash": a.get("assay.suite.hash"),
        "task_hash": a.get("assay.task_hash"),
        "run_seed": a.get("assay.run_seed"),
        "as_of": a.get("assay.as_of"),
        "timezone": a.get("assay.timezone"),
        "agent": a.get("gen_ai.agent.name"),
    }
    conv = Conversation(
        str(a.get("assay.task_id") or trace_id), source={k: v for k, v in source.items() if v is not None}
    )
    for s in spans:
        kind = s.attributes.get("assay.span.kind")
        if kind == "user" and s.attributes.get(SA.OUTPUT_VALUE) is not None:
            conv.user_turns.append(str(s.attributes[SA.OUTPUT_VALUE]))
        elif kind == "tool":
            conv.calls.append(_tool_call(s))
    conv.tools = _recorded_tools(spans)
    return conv


def _messages(a: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    value = _json_value(unflatten(a, prefix))
    if not isinstance(value, list):
        return []
    return [m.get("message", m) for m in value if isinstance(m, dict)]


def _recorded_tools(spans: list[RawSpan]) -> list[dict[str, Any]]:
    for s in spans:
        tools = _json_value(unflatten(s.attributes, SA.LLM_TOOLS))
        if isinstance(tools, list) and tools:
            out = []
            for t in tools:
                schema = _json_value(t.get("tool", t).get("json_schema") if isinstance(t, dict) else None)
                if isinstance(schema, dict):
                    out.append(schema)
            if out:
                return out
    return []


def _openinference_conversation(trace_id: str, spans: list[RawSpan]) -> Conversation:
    """A trace of any OpenInference instrumentation: the LLM call that saw the most
    messages holds the conversation (user lines, tool calls, tool results); TOOL spans
    add the calls and outputs the messages lack."""
    conv = Conversation(trace_id, source={"trace_id": trace_id})
    best: list[dict[str, Any]] = []
    for s in spans:
        if s.kind.upper() != Kind.LLM:
            continue
        seen = _messages(s.attributes, SA.LLM_INPUT_MESSAGES) + _messages(
            s.attributes, SA.LLM_OUTPUT_MESSAGES
        )
        if len(seen) >= len(best):
            best = seen
    if best:
        data = {"messages": [_oi_message(m) for m in best if _oi_message(m)["role"] != "system"]}
        try:
            parsed = conversation_of_messages(data, f"trace {trace_id}")
        except TraceFileError:
            parsed = Conversation(trace_id)
        conv.user_turns, conv.calls = parsed.user_turns, parsed.calls
    tool_spans = [_tool_call(s) for s in spans if s.kind.upper() == Kind.TOOL]
    if not conv.calls:
        conv.calls = tool_spans
    else:  # outputs the messages lacked, by order of calls of the same name
        by_name: dict[str, list[RecordedCall]] = defaultdict(list)
        for t in tool_spans:
            by_name[t.name].append(t)
        for i, call in enumerate(conv.calls):
            if not call.output and by_name.get(call.name):
                t = by_name[call.name].pop(0)
                conv.calls[i] = call.model_copy(update={"output": t.output, "error": t.error})
    if not conv.user_turns:
        root = next((s for s in spans if s.parent_id is None), None)
        text = root.attributes.get(SA.INPUT_VALUE) if root is not None else None
        if isinstance(text, str) and text:
            conv.user_turns = [text]
    conv.tools = _recorded_tools(spans)
    return conv


def _oi_message(m: dict[str, Any]) -> dict[str, Any]:
    """An OpenInference message (``role``, ``content``, ``tool_calls.i.tool_call.function``)
    in the conversation format."""
    calls = []
    for c in m.get("tool_calls") or []:
        call = c.get("tool_call", c) if isinstance(c, dict) else {}
        fn = call.get("function") or {}
        calls.append(
            {"id": call.get("id") or "", "name": fn.get("name"), "arguments": fn.get("arguments") or {}}
        )
    out: dict[str, Any] = {"role": m.get("role") or "user", "content": m.get("content") or ""}
    if calls:
        out["tool_calls"] = calls
    if m.get("tool_call_id"):
        out["tool_call_id"] = m["tool_call_id"]
    return out
