"""The OpenInference attribute names and span kinds assay writes and reads.

They mirror the constants of the ``openinference-semantic-conventions`` package
(``openinference.semconv.trace``), class for class and name for name, so
``SpanAttributes.INPUT_VALUE`` here is ``SpanAttributes.INPUT_VALUE`` there. They are
plain strings because this module is loaded where the ``otel`` extra (which brings the
package) may be missing: building export spans (:mod:`assay.traces.spans`) is pure data,
and reading traces back (``assay import traces``, ``assay replay``, ``assay prompt
diff``) needs no OpenTelemetry at all. ``tests/traces/test_semconv.py`` checks every
name here against the package and every OpenInference attribute an exported trial
carries against this table; the OpenTelemetry side (:mod:`assay.traces.otel`, which
runs only with the extra) uses the package itself.
"""

from __future__ import annotations


class SpanAttributes:
    """``openinference.semconv.trace.SpanAttributes`` (the names assay uses)."""

    OPENINFERENCE_SPAN_KIND = "openinference.span.kind"
    INPUT_VALUE = "input.value"
    INPUT_MIME_TYPE = "input.mime_type"
    OUTPUT_VALUE = "output.value"
    OUTPUT_MIME_TYPE = "output.mime_type"
    LLM_MODEL_NAME = "llm.model_name"
    LLM_PROVIDER = "llm.provider"
    LLM_SYSTEM = "llm.system"
    LLM_INPUT_MESSAGES = "llm.input_messages"
    LLM_OUTPUT_MESSAGES = "llm.output_messages"
    LLM_TOKEN_COUNT_PROMPT = "llm.token_count.prompt"
    LLM_TOKEN_COUNT_COMPLETION = "llm.token_count.completion"
    LLM_TOKEN_COUNT_TOTAL = "llm.token_count.total"
    LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_READ = "llm.token_count.prompt_details.cache_read"
    LLM_COST_TOTAL = "llm.cost.total"
    LLM_PROMPT_TEMPLATE_VERSION = "llm.prompt_template.version"
    LLM_TOOLS = "llm.tools"
    TOOL_NAME = "tool.name"
    TOOL_ID = "tool.id"
    TOOL_PARAMETERS = "tool.parameters"
    METADATA = "metadata"
    TAG_TAGS = "tag.tags"
    USER_ID = "user.id"
    AGENT_NAME = "agent.name"


class MessageAttributes:
    """``openinference.semconv.trace.MessageAttributes``: the keys of one message under
    ``llm.input_messages.<i>.`` / ``llm.output_messages.<i>.``."""

    MESSAGE_ROLE = "message.role"
    MESSAGE_CONTENT = "message.content"
    MESSAGE_NAME = "message.name"
    MESSAGE_TOOL_CALLS = "message.tool_calls"
    MESSAGE_TOOL_CALL_ID = "message.tool_call_id"


class ToolCallAttributes:
    """``openinference.semconv.trace.ToolCallAttributes``: the keys of one tool call
    under ``<message>.message.tool_calls.<j>.``."""

    TOOL_CALL_ID = "tool_call.id"
    TOOL_CALL_FUNCTION_NAME = "tool_call.function.name"
    TOOL_CALL_FUNCTION_ARGUMENTS_JSON = "tool_call.function.arguments"


class OpenInferenceSpanKindValues:
    """The values of ``openinference.span.kind`` assay gives
    (``openinference.semconv.trace.OpenInferenceSpanKindValues``, an enum there)."""

    AGENT = "AGENT"
    CHAIN = "CHAIN"
    LLM = "LLM"
    TOOL = "TOOL"
    EVALUATOR = "EVALUATOR"


def message_key(prefix: str, index: int, attribute: str) -> str:
    """``llm.input_messages.0.message.role``: a message attribute of the ``index``-th
    message under ``prefix`` (OpenInference's flattened lists)."""
    return f"{prefix}.{index}.{attribute}"


def tool_call_key(message_prefix: str, index: int, attribute: str) -> str:
    """``<message prefix>.message.tool_calls.0.tool_call.id``."""
    return f"{message_prefix}.{MessageAttributes.MESSAGE_TOOL_CALLS}.{index}.{attribute}"
