"""Traces as conversations: the spans of one trace (OTLP-JSON or Phoenix, read by
:mod:`.readers`) become one :class:`~.readers.Conversation` — assay's own traces from
their user, agent, tool and evaluator spans; any OpenInference trace from its LLM spans
(the call that saw the most messages holds the conversation) and TOOL spans. Evaluator
spans, error statuses and annotations become the conversation's verdicts (:mod:`.verdicts`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from ..core.task import RecordedCall
from .readers import (
    Annotation,
    Conversation,
    RawSpan,
    TraceFileError,
    conversation_of_messages,
    json_value,
    unflatten,
)
from .semconv import OpenInferenceSpanKindValues as Kind
from .semconv import SpanAttributes as SA
from .verdicts import evaluator_verdict, is_evaluator, reward_verdict, status_verdict


def conversations_of_spans(
    spans: list[RawSpan], annotations: Iterable[Annotation] = (), span_traces: dict[str, str] | None = None
) -> list[Conversation]:
    """One conversation per trace (traces without a user message or a tool call, such as
    assay's run span, are left out), with the annotations of its spans and of itself
    (``span_traces``: span id -> trace id of every span read, when annotations may name
    spans of other files)."""
    traces: dict[str, list[RawSpan]] = defaultdict(list)
    for s in spans:
        traces[s.trace_id].append(s)
    owner = span_traces if span_traces is not None else {s.span_id: s.trace_id for s in spans}
    notes: dict[str, list[Annotation]] = defaultdict(list)
    for a in annotations:
        trace = a.trace_id or owner.get(a.span_id or "")
        if trace is not None:
            notes[trace].append(a)
    out = []
    for trace_id, members in traces.items():
        members.sort(key=lambda s: s.start)
        conv = _assay_conversation(trace_id, members) or _openinference_conversation(trace_id, members)
        conv.verdicts.extend(a.verdict for a in notes.get(trace_id, []))
        if conv.user_turns or conv.calls:
            out.append(conv)
    return out


def _tool_call(s: RawSpan) -> RecordedCall:
    a = s.attributes
    args = json_value(a.get(SA.INPUT_VALUE))
    if not isinstance(args, dict):
        params = unflatten(a, SA.TOOL_PARAMETERS)
        args = json_value(params) if params is not None else {}
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
            conv.messages.append({"role": "user", "content": conv.user_turns[-1]})
        elif kind == "agent" and s.attributes.get(SA.OUTPUT_VALUE) is not None:
            conv.messages.append(_assistant_message(s.attributes))
        elif kind == "tool":
            conv.calls.append(_tool_call(s))
            conv.messages.append(_tool_message(conv.calls[-1]))
        elif kind == "evaluator":
            conv.verdicts.append(evaluator_verdict(s.name, s.attributes, s.span_id))
    reward = reward_verdict(a)
    if reward is not None:
        conv.verdicts.append(reward)
    conv.tools = _recorded_tools(spans)
    return conv


def _assistant_message(a: dict[str, Any]) -> dict[str, Any]:
    """An agent step's output: its text, or (JSON) its text and tool calls."""
    value = a[SA.OUTPUT_VALUE]
    parsed = json_value(value) if a.get(SA.OUTPUT_MIME_TYPE) == "application/json" else None
    if isinstance(parsed, dict) and isinstance(parsed.get("tool_calls"), list):
        return {
            "role": "assistant",
            "content": str(parsed.get("content") or ""),
            "tool_calls": parsed["tool_calls"],
        }
    return {"role": "assistant", "content": str(value)}


def _tool_message(call: RecordedCall) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "tool", "name": call.name, "content": call.output}
    if call.error:
        out["error"] = True
    return out


def _messages(a: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    value = json_value(unflatten(a, prefix))
    if not isinstance(value, list):
        return []
    return [m.get("message", m) for m in value if isinstance(m, dict)]


def _recorded_tools(spans: list[RawSpan]) -> list[dict[str, Any]]:
    for s in spans:
        tools = json_value(unflatten(s.attributes, SA.LLM_TOOLS))
        if isinstance(tools, list) and tools:
            out = []
            for t in tools:
                schema = json_value(t.get("tool", t).get("json_schema") if isinstance(t, dict) else None)
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
        conv.user_turns, conv.calls, conv.messages = parsed.user_turns, parsed.calls, parsed.messages
    tool_spans = [_tool_call(s) for s in spans if s.kind.upper() == Kind.TOOL]
    for s in spans:
        if is_evaluator(s.kind, s.attributes):
            conv.verdicts.append(evaluator_verdict(s.name, s.attributes, s.span_id))
        elif s.status_error and s.kind.upper() != Kind.TOOL:
            conv.verdicts.append(status_verdict(s.name, s.status_message, s.span_id))
    if not conv.calls:
        conv.calls = tool_spans
        conv.messages.extend(_tool_message(c) for c in tool_spans)
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
            conv.messages.insert(0, {"role": "user", "content": text})
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
