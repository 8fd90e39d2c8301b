"""A trial as export spans: the stored span tree with OpenInference, OpenTelemetry GenAI
and assay attributes, and the run as one span every trial links to.

Pure data (no OpenTelemetry import): :func:`trial_spans` gives :class:`OutSpan` records
that :mod:`assay.traces.otel` hands to the OpenTelemetry SDK. Content (inputs, outputs,
tool arguments, messages, errors) is kept apart from the other attributes so that
:func:`redact_spans` can redact exactly what carries text, one trial at a time.
"""

from __future__ import annotations

from ..core.messages import Message
from ..core.results import EXCLUDED_TERMINATIONS, GradeResult, RunInfo, TrialResult
from ..core.transcript import Span, Transcript
from .message_attributes import assistant_output, attribute_json, message_attributes
from .outspan import OutSpan, OutTrace, epoch_ns, ids, run_trace_id, trace_id_of
from .semconv import OpenInferenceSpanKindValues as Kind
from .semconv import SpanAttributes as SA

#: OpenInference span kinds of assay's span kinds.
KINDS = {
    "trial": Kind.AGENT,
    "turn": Kind.CHAIN,
    "agent": Kind.AGENT,
    "llm": Kind.LLM,
    "tool": Kind.TOOL,
    "user": Kind.CHAIN,
    "grader": Kind.CHAIN,
    "evaluator": Kind.EVALUATOR,
    "run": Kind.CHAIN,
}
#: The attribute that says a span's content was redacted before it left.
REDACTED_ATTRIBUTE = "assay.redacted"
_ERROR_TERMINATIONS = frozenset(EXCLUDED_TERMINATIONS) | {"agent_error", "budget"}


def _provider_model(spec: str) -> tuple[str | None, str]:
    provider, sep, model = spec.partition(":")
    return (provider, model) if sep else (None, spec)


class _Cursor:
    """Which message each agent, user and tool span produced (spans and messages come
    in the same order; failed steps produced none)."""

    def __init__(self, transcript: Transcript):
        self.messages = transcript.messages
        self.assistant = [i for i, m in enumerate(self.messages) if m.role == "assistant"]
        self.user = [i for i, m in enumerate(self.messages) if m.role == "user"]
        self.results = {m.tool_call_id: i for i, m in enumerate(self.messages) if m.role == "tool"}

    def take(self, queue: list[int]) -> int | None:
        return queue.pop(0) if queue else None


def trial_spans(info: RunInfo, result: TrialResult, transcript: Transcript | None) -> OutTrace:
    """The export spans of one trial (its transcript's span tree, or only a trial span
    when it has none), plus an evaluator span per grade under the grading span."""
    transcript = transcript or Transcript()
    trace = trace_id_of(result.run_id, result.task_id, result.trial_index)
    t0 = epoch_ns(transcript.started_at or result.started_at or info.created_at)
    stored = transcript.spans or [Span(0, "trial", result.task_id, 0.0, result.latency_s)]
    cursor = _Cursor(transcript)
    msgs = transcript.messages
    step_message: dict[int, int] = {}  # agent span id -> index of its assistant message
    out: list[OutSpan] = []
    for s in stored:
        start = t0 + int(s.start * 1e9)
        end = t0 + int((s.end if s.end is not None else s.start) * 1e9)
        span = OutSpan(s.id, s.parent, s.name, s.kind, start, max(start, end), error=s.error)
        span.attributes[SA.OPENINFERENCE_SPAN_KIND] = KINDS.get(s.kind, Kind.CHAIN)
        span.attributes["assay.span.kind"] = s.kind
        if s.kind == "trial":
            _trial(span, info, result, transcript)
        elif s.kind == "turn":
            span.name = s.name
            span.attributes["assay.turn"] = s.attributes.get("turn")
        elif s.kind == "agent":
            index = cursor.take(cursor.assistant) if s.error is None else None
            _agent(span, s, info, msgs, index)
            if index is not None:
                step_message[s.id] = index
        elif s.kind == "user":
            index = cursor.take(cursor.user) if s.error is None else None
            span.name = "user"
            if index is not None:
                span.content[SA.OUTPUT_VALUE] = msgs[index].content
                before = [m for m in msgs[:index] if m.role == "assistant" and m.content]
                if before:
                    span.content[SA.INPUT_VALUE] = before[-1].content
        elif s.kind == "tool":
            _tool(span, s, msgs, cursor.results)
        elif s.kind == "llm":
            _llm(span, s, msgs, step_message.get(s.parent if s.parent is not None else -1))
        elif s.kind == "grader":
            span.name = "grading"
        _common(span, s, result)
        out.append(span)
    grading = next((s for s in out if s.kind == "grader"), None)
    next_key = max(s.key for s in out) + 1
    for i, grade in enumerate(result.grades):
        out.append(_evaluator(next_key + i, grading, out[0], grade))
    _turn_io(out, msgs)
    run_trace = run_trace_id(result.run_id)
    return OutTrace(trace, out, run_trace, ids(run_trace, 0))


def _common(span: OutSpan, s: Span, result: TrialResult) -> None:
    span.attributes["assay.run_id"] = result.run_id
    span.attributes["assay.task_id"] = result.task_id
    span.attributes["assay.trial_index"] = result.trial_index
    if s.error is not None:
        span.content["exception.message"] = s.error


def _trial(span: OutSpan, info: RunInfo, result: TrialResult, transcript: Transcript) -> None:
    span.name = f"trial {result.task_id}#{result.trial_index}"
    a = span.attributes
    a.update(
        {
            "assay.seed": str(result.seed),
            "assay.reward": -1 if result.reward is None else result.reward,
            "assay.excluded": result.reward is None,
            "assay.termination": result.termination,
            "assay.config_hash": result.config_hash,
            "assay.suite.name": result.suite_name,
            "assay.suite.version": result.suite_version,
            "assay.suite.hash": result.suite_hash,
            "assay.task_hash": result.task_hash,
            "assay.latency_s": result.latency_s,
            "assay.run_seed": str(info.seed),
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": info.config.agent,
            "gen_ai.conversation.id": f"{result.run_id}/{result.task_id}/{result.trial_index}",
            SA.USER_ID: info.config.user,
        }
    )
    optional = {
        "assay.root_cause": result.root_cause,
        "assay.error_category": result.error_category,
        "assay.prompt_version": result.prompt_version,
        "assay.as_of": result.as_of,
        "assay.timezone": result.timezone,
        "assay.env_version": result.env_version or None,
        "assay.cost_usd": result.cost_usd,
        SA.LLM_TOKEN_COUNT_PROMPT: result.input_tokens,
        SA.LLM_TOKEN_COUNT_COMPLETION: result.output_tokens,
        "gen_ai.usage.input_tokens": result.input_tokens,
        "gen_ai.usage.output_tokens": result.output_tokens,
        "gen_ai.request.model": result.model_id,
    }
    a.update({k: v for k, v in optional.items() if v is not None})
    if result.input_tokens is not None and result.output_tokens is not None:
        a[SA.LLM_TOKEN_COUNT_TOTAL] = result.input_tokens + result.output_tokens
    a[SA.METADATA] = attribute_json(
        {
            "run_id": result.run_id,
            "task_id": result.task_id,
            "trial": result.trial_index,
            "reward": result.reward,
            "termination": result.termination,
            "agent": info.config.agent,
            "suite": result.suite_name,
        }
    )
    a[SA.TAG_TAGS] = [t for t in (result.suite_name, result.termination, _reward_tag(result.reward)) if t]
    users = [m.content for m in transcript.messages if m.role == "user"]
    said = [m.content for m in transcript.messages if m.role == "assistant" and m.content]
    if users:
        span.content[SA.INPUT_VALUE] = users[0]
    if said:
        span.content[SA.OUTPUT_VALUE] = said[-1]
    error = result.outcome.error if result.outcome is not None else None
    if result.termination in _ERROR_TERMINATIONS:
        span.error = error or result.termination
    elif error:
        span.content["assay.error"] = error


def _reward_tag(reward: int | None) -> str:
    return "excluded" if reward is None else ("pass" if reward == 1 else "fail")


def _agent(span: OutSpan, s: Span, info: RunInfo, msgs: list[Message], index: int | None) -> None:
    span.name = "agent step"
    span.attributes["gen_ai.operation.name"] = "invoke_agent"
    span.attributes["gen_ai.agent.name"] = info.config.agent
    span.attributes[SA.AGENT_NAME] = info.config.agent
    for key in ("respond_s", "dropped_tool_calls"):
        if key in s.attributes:
            span.attributes[f"assay.{key}"] = s.attributes[key]
    if index is None:
        return
    if index > 0:
        span.content[SA.INPUT_VALUE] = msgs[index - 1].content
    m = msgs[index]
    span.content[SA.OUTPUT_VALUE] = assistant_output(m)
    if m.tool_calls:
        span.attributes[SA.OUTPUT_MIME_TYPE] = "application/json"


def _tool(span: OutSpan, s: Span, msgs: list[Message], results: dict[str | None, int]) -> None:
    args = s.attributes.get("args") or {}
    a = span.attributes
    a.update(
        {
            SA.TOOL_NAME: s.name,
            "gen_ai.tool.name": s.name,
            "gen_ai.operation.name": "execute_tool",
            SA.INPUT_MIME_TYPE: "application/json",
            "assay.tool.caller": s.attributes.get("caller", "agent"),
        }
    )
    span.name = s.name
    call_id = s.attributes.get("call_id")
    if call_id:
        a[SA.TOOL_ID] = a["gen_ai.tool.call.id"] = call_id
    for key in ("error", "fault", "replay", "malformed"):
        if key in s.attributes:
            a[f"assay.tool.{key}"] = s.attributes[key]
    span.content[SA.TOOL_PARAMETERS] = span.content[SA.INPUT_VALUE] = attribute_json(args)
    index = results.get(call_id) if call_id else None
    if index is not None:
        result = msgs[index]
        span.content[SA.OUTPUT_VALUE] = result.content
        if result.error and span.error is None:
            span.error = result.content
    elif s.attributes.get("malformed"):
        span.content[SA.OUTPUT_VALUE] = str(s.attributes["malformed"])


def _llm(span: OutSpan, s: Span, msgs: list[Message], index: int | None) -> None:
    attrs = s.attributes
    provider, model = _provider_model(s.name)
    a = span.attributes
    a.update(
        {
            SA.LLM_MODEL_NAME: model,
            "gen_ai.request.model": model,
            "gen_ai.operation.name": "chat",
            "assay.llm.role": attrs.get("role"),
            "assay.llm.cached": bool(attrs.get("cached")),
            "assay.llm.retries": attrs.get("retries") or 0,
        }
    )
    if provider:
        a[SA.LLM_PROVIDER] = a[SA.LLM_SYSTEM] = a["gen_ai.provider.name"] = a["gen_ai.system"] = provider
    tin, tout, cache = attrs.get("input_tokens"), attrs.get("output_tokens"), attrs.get("cache_read_tokens")
    if tin is not None:
        a[SA.LLM_TOKEN_COUNT_PROMPT] = a["gen_ai.usage.input_tokens"] = tin
    if tout is not None:
        a[SA.LLM_TOKEN_COUNT_COMPLETION] = a["gen_ai.usage.output_tokens"] = tout
    if tin is not None and tout is not None:
        a[SA.LLM_TOKEN_COUNT_TOTAL] = tin + tout
    if cache:
        a[SA.LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_READ] = cache
    if attrs.get("cost_usd") is not None:
        a[SA.LLM_COST_TOTAL] = attrs["cost_usd"]
    if attrs.get("ttft_s") is not None:
        a["assay.llm.ttft_s"] = attrs["ttft_s"]
    if attrs.get("source"):
        a["assay.llm.source"] = attrs["source"]
    for key, name in (
        ("prompt_template", SA.LLM_PROMPT_TEMPLATE_VERSION),
        ("system_hash", "assay.prompt.system_hash"),
        ("tools_hash", "assay.prompt.tools_hash"),
    ):
        if attrs.get(key):
            a[name] = attrs[key]
    if index is not None:  # an agent step's call: what the model saw and said
        before = msgs[:index]
        span.content.update(message_attributes(SA.LLM_INPUT_MESSAGES, before))
        span.content.update(message_attributes(SA.LLM_OUTPUT_MESSAGES, [msgs[index]]))
        if before:
            span.content[SA.INPUT_VALUE] = before[-1].content
        span.content[SA.OUTPUT_VALUE] = assistant_output(msgs[index])


def _evaluator(key: int, grading: OutSpan | None, root: OutSpan, grade: GradeResult) -> OutSpan:
    parent = grading or root
    span = OutSpan(key, parent.key, grade.grader, "evaluator", parent.start_ns, parent.end_ns)
    a = span.attributes
    a.update(
        {
            SA.OPENINFERENCE_SPAN_KIND: Kind.EVALUATOR,
            "assay.span.kind": "evaluator",
            "assay.grade.kind": grade.kind,
            "assay.grade.gating": grade.gating,
            "assay.grade.skipped": grade.skipped,
            "assay.grade.veto": grade.veto,
            "gen_ai.evaluation.name": grade.grader,
            "assay.run_id": root.attributes.get("assay.run_id"),
            "assay.task_id": root.attributes.get("assay.task_id"),
            "assay.trial_index": root.attributes.get("assay.trial_index"),
        }
    )
    label = "skipped" if grade.skipped else ("unknown" if grade.passed is None else str(grade.passed).lower())
    a["assay.grade.passed"] = label
    a["gen_ai.evaluation.score.label"] = label
    if grade.score is not None:
        a["assay.grade.score"] = a["gen_ai.evaluation.score.value"] = grade.score
    if grade.category:
        a["assay.grade.category"] = grade.category
    if grade.judge_model:
        a["assay.grade.judge_model"] = grade.judge_model
    if grade.reason:
        span.content[SA.OUTPUT_VALUE] = span.content["gen_ai.evaluation.explanation"] = grade.reason
    return span


def _turn_io(spans: list[OutSpan], msgs: list[Message]) -> None:
    """A turn's input is its user message, its output the agent's last answer in it."""
    children: dict[int, list[OutSpan]] = {}
    for s in spans:
        if s.parent is not None:
            children.setdefault(s.parent, []).append(s)
    for s in spans:
        if s.kind != "turn":
            continue
        kids = children.get(s.key, [])
        user = next((k for k in kids if k.kind == "user"), None)
        if user is not None and SA.OUTPUT_VALUE in user.content:
            s.content[SA.INPUT_VALUE] = user.content[SA.OUTPUT_VALUE]
        steps = [k for k in kids if k.kind == "agent" and SA.OUTPUT_VALUE in k.content]
        if steps:
            s.content[SA.OUTPUT_VALUE] = steps[-1].content[SA.OUTPUT_VALUE]


def run_span(info: RunInfo, results: list[TrialResult] | None = None) -> OutSpan:
    """The run as one span (its own trace): every trial's root span links to it."""
    start = epoch_ns(info.created_at)
    end = epoch_ns(info.finished_at) if info.finished_at else start
    span = OutSpan(0, None, f"run {info.run_id}", "run", start, max(start, end))
    a = span.attributes
    a.update(
        {
            SA.OPENINFERENCE_SPAN_KIND: Kind.CHAIN,
            "assay.span.kind": "run",
            "assay.run_id": info.run_id,
            "assay.suite.name": info.suite_name,
            "assay.suite.version": info.suite_version,
            "assay.suite.hash": info.suite_hash,
            "assay.config_hash": info.config_hash,
            "assay.agent": info.config.agent,
            "assay.user": info.config.user,
            "assay.run_seed": str(info.seed),
            "assay.trials_per_task": info.trials_per_task,
            "assay.tasks": len(info.task_ids),
            "assay.status": info.status,
            "gen_ai.agent.name": info.config.agent,
        }
    )
    if info.config.prompt_version:
        a["assay.prompt_version"] = info.config.prompt_version
    if results is not None:
        rewards = [r.reward for r in results if r.reward is not None]
        a["assay.trials"] = len(results)
        a["assay.excluded_trials"] = len(results) - len(rewards)
        if rewards:
            a["assay.success_rate"] = sum(rewards) / len(rewards)
    return span
