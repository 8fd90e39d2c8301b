"""tau2's task and message records, as far as assay reads them (validated at the edge;
unknown fields are kept in the raw dicts, not here)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .store import Tau2DataError

Requestor = Literal["assistant", "user"]
RewardType = Literal["DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE"]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ToolCall(_Lenient):
    """A tool call in a message (tau2 ``ToolCall``)."""

    id: str = ""
    name: str
    arguments: dict[str, Any]
    requestor: Requestor = "assistant"


class Message(_Lenient):
    """A message of a trajectory: ``assistant``, ``user``, ``tool`` (answering the call
    whose ``id`` it carries) or ``system``."""

    role: str
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    id: str | None = None
    requestor: Requestor | None = None
    error: bool = False

    def has_text_content(self) -> bool:
        return self.content is not None and bool(self.content.strip())


class Action(_Lenient):
    """A gold action: a tool call by the agent (``assistant``) or the user."""

    action_id: str = ""
    requestor: Requestor = "assistant"
    name: str
    arguments: dict[str, Any]
    info: str | None = None
    compare_args: list[str] | None = None

    def matches(self, call: ToolCall) -> bool:
        """tau2's ``compare_with_tool_call``: same name and the same values for
        ``compare_args`` (all of the call's arguments when None)."""
        if self.name != call.name:
            return False
        keys = list(call.arguments) if self.compare_args is None else self.compare_args
        if len(keys) == 0:
            return True
        ours = {k: v for k, v in self.arguments.items() if k in keys}
        theirs = {k: v for k, v in call.arguments.items() if k in keys}
        return ours == theirs


class EnvFunctionCall(_Lenient):
    """A call of a toolkit function on the agent (``assistant``) or user side."""

    env_type: Requestor
    func_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class EnvAssertion(EnvFunctionCall):
    """An assertion: the function must return ``assert_value``."""

    assert_value: bool = True
    message: str | None = None


class InitializationData(_Lenient):
    agent_data: dict[str, Any] | None = None
    user_data: dict[str, Any] | None = None


class InitialState(_Lenient):
    """How a task's environment starts: data updates, then function calls, then the
    state changes of a prior conversation."""

    initialization_data: InitializationData | None = None
    initialization_actions: list[EnvFunctionCall] | None = None
    message_history: list[Message] | None = None

    def is_empty(self) -> bool:
        return not (self.initialization_data or self.initialization_actions or self.message_history)


_DEFAULT_BASIS: list[RewardType] = ["DB", "COMMUNICATE"]


class EvaluationCriteria(_Lenient):
    actions: list[Action] | None = None
    env_assertions: list[EnvAssertion] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[RewardType] = Field(default_factory=lambda: _DEFAULT_BASIS.copy())


class StructuredInstructions(_Lenient):
    """tau2's ``StructuredUserInstructions``."""

    domain: str
    reason_for_call: str
    known_info: str | None = None
    unknown_info: str | None = None
    task_instructions: str

    def __str__(self) -> str:  # tau2's rendering, as its user simulator reads it
        tab = "\t"
        lines = [f"Domain: {self.domain}", f"Reason for call:\n{textwrap.indent(self.reason_for_call, tab)}"]
        if self.known_info is not None:
            lines.append(f"Known info:\n{textwrap.indent(self.known_info, tab)}")
        if self.unknown_info is not None:
            lines.append(f"Unknown info:\n{textwrap.indent(self.unknown_info, tab)}")
        lines.append(f"Task instructions:\n{textwrap.indent(self.task_instructions, tab)}")
        return "\n".join(lines)


class UserScenario(_Lenient):
    """tau2's ``UserScenario``: what its user simulator is told."""

    persona: str | None = None
    instructions: StructuredInstructions | str

    def __str__(self) -> str:
        lines = []
        if self.persona is not None:
            lines += ["Persona:", textwrap.indent(self.persona, "\t")]
        lines += ["Instructions:", textwrap.indent(str(self.instructions), "\t")]
        return "\n".join(lines)


class Description(_Lenient):
    purpose: str | None = None
    relevant_policies: str | None = None
    notes: str | None = None


class Task(_Lenient):
    """A tau2 task (the parts that define its environment and its grading)."""

    id: str
    initial_state: InitialState | None = None
    evaluation_criteria: EvaluationCriteria | None = None
    user_tools: list[str] | None = None
    user_scenario: UserScenario | None = None
    description: Description | None = None
    ticket: str | None = None
    required_documents: list[str] | None = None
    """banking_knowledge: the knowledge-base documents the task needs (gold retrieval labels)."""


def parse_task(raw: Any, source: str) -> Task:
    """A task dict as :class:`Task`; a malformed one raises :class:`Tau2DataError`
    naming ``source`` and the first problem."""
    try:
        return Task.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        ident = raw.get("id", "?") if isinstance(raw, dict) else "?"
        raise Tau2DataError(f"{source}: task {ident}: {where}: {err['msg']}") from None


def load_tasks(path: Path) -> list[Task]:
    """The tasks of a tau2 ``tasks.json`` (a list, or ``{"tasks": [...]}``)."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except RecursionError:
        raise Tau2DataError(f"{path}: cannot read tau2 tasks: values nest too deeply") from None
    except (OSError, ValueError) as exc:  # ValueError: bad JSON, not UTF-8, a 5,000-digit number
        raise Tau2DataError(f"{path}: cannot read tau2 tasks: {str(exc).split(';')[0]}") from None
    if isinstance(raw, dict) and "tasks" in raw:
        raw = raw["tasks"]
    if not isinstance(raw, list):
        raise Tau2DataError(f"{path}: expected a list of tasks")
    return [parse_task(t, str(path)) for t in raw]


def tool_call_pairs(messages: list[Message], source: str = "messages") -> list[tuple[int, ToolCall, Message]]:
    """``(index of the tool message, call, tool message)`` for every tool call, in order,
    checked as tau2's ``set_state`` checks them (each call answered by the next message,
    a tool message with the call's id)."""
    pairs: list[tuple[int, ToolCall, Message]] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        i += 1
        if message.role == "tool":
            raise Tau2DataError(f"{source}: message {i - 1}: a tool message that answers no tool call")
        if message.role in ("assistant", "user") and message.tool_calls is not None:
            for call in message.tool_calls:
                if i >= len(messages):
                    raise Tau2DataError(f"{source}: message {i - 1}: tool call {call.id} has no tool message")
                answer = messages[i]
                if answer.role != "tool":
                    raise Tau2DataError(f"{source}: message {i}: expected the tool message of call {call.id}")
                if answer.id != call.id:
                    raise Tau2DataError(
                        f"{source}: message {i}: tool call id mismatch ({call.id} vs {answer.id})"
                    )
                pairs.append((i, call, answer))
                i += 1
    return pairs


__all__ = [
    "Action",
    "Description",
    "EnvAssertion",
    "EnvFunctionCall",
    "EvaluationCriteria",
    "InitialState",
    "InitializationData",
    "Message",
    "RewardType",
    "StructuredInstructions",
    "Task",
    "ToolCall",
    "UserScenario",
    "load_tasks",
    "parse_task",
    "tool_call_pairs",
]
