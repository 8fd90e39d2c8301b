"""``actions``: the process. Required actions (with argument subsets), forbidden
actions, ordering constraints, and an explicit confirmation before every write.

A pattern matches a tool call of its ``requestor`` (``agent``, ``user`` for the user's
own tools in dual control, or any side when omitted) by name and arguments:
``match: subset`` (the pattern's arguments present with equal values, leniently
compared), ``exact`` or ``ignore``; ``compare_args`` limits the compared arguments to
those named. Two rules (``rule``): ``assay`` (default) counts a required action only
when its call succeeded; ``tau2`` is tau2-bench's ACTION rule: any call counts, and the
arguments compared (``compare_args``, else every argument of the call) must be equal
as Python values. ``metrics`` give ``met[i]`` (1/0) for each required action.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from ..core.messages import ToolCall
from ..core.results import GradeResult, Outcome
from ..core.task import Task
from ..core.transcript import Transcript
from .base import Grader, Params, PathKey, named_tools
from .matching import args_match, is_affirmative


class ActionPattern(Params):
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    match: str = "subset"
    requestor: Literal["agent", "user"] | None = None
    compare_args: list[str] | None = None

    @field_validator("match")
    @classmethod
    def _mode(cls, v: str) -> str:
        if v not in ("subset", "exact", "ignore"):
            raise ValueError("match must be subset, exact or ignore")
        return v

    def matches(self, call: ToolCall, rule: str = "assay") -> bool:
        if call.name != self.name or (self.requestor is not None and call.requestor != self.requestor):
            return False
        if rule == "tau2":
            keys = list(call.arguments) if self.compare_args is None else self.compare_args
            ours = {k: v for k, v in self.args.items() if k in keys}
            theirs = {k: v for k, v in call.arguments.items() if k in keys}
            return ours == theirs
        if self.compare_args is not None:
            wanted = {k: v for k, v in self.args.items() if k in self.compare_args}
            actual = {k: v for k, v in call.arguments.items() if k in self.compare_args}
            return args_match(actual, wanted, self.match)
        return args_match(call.arguments, self.args, self.match)

    def __str__(self) -> str:
        side = f"{self.requestor}:" if self.requestor == "user" else ""
        args = f"({', '.join(f'{k}={v!r}' for k, v in self.args.items())})" if self.args else ""
        return side + self.name + args


def _pattern(raw: Any) -> Any:
    return {"name": raw} if isinstance(raw, str) else raw


class ActionsParams(Params):
    required: list[ActionPattern] = Field(default_factory=list)
    forbidden: list[ActionPattern] = Field(default_factory=list)
    order: list[tuple[str, str]] = Field(default_factory=list, description="[a, b]: a happens before any b")
    confirm_before_write: bool = False
    rule: Literal["assay", "tau2"] = "assay"

    @field_validator("required", "forbidden", mode="before")
    @classmethod
    def _short(cls, v: Any) -> Any:
        return [_pattern(x) for x in v] if isinstance(v, list) else v


def confirmation_violations(transcript: Transcript, write_tools: set[str]) -> list[str]:
    """The agent's write calls not preceded by an agent question answered with an
    explicit yes. ``write_tools`` are the agent's (a dual-control user's own tools are
    not the agent's to confirm).

    The consent is the latest user message before the write; it must be affirmative
    and must answer an agent message (the one just before it) that asked a question.
    """
    violations = []
    last_agent_text = ""
    consent = False
    for m in transcript.messages:
        if m.role == "user":
            if m.content or not m.tool_calls:  # a user's tool-only message says nothing to the agent
                consent = is_affirmative(m.content) and "?" in last_agent_text
        elif m.role == "assistant":
            for call in m.tool_calls:
                if call.name in write_tools and not consent:
                    violations.append(call.name)
            if m.content:
                last_agent_text = m.content
    return violations


def _by_name(calls: list[ToolCall]) -> dict[str, list[ToolCall]]:
    out: dict[str, list[ToolCall]] = {}
    for c in calls:
        out.setdefault(c.name, []).append(c)
    return out


class ActionsGrader(Grader[ActionsParams]):
    kind = "actions"
    Params = ActionsParams
    shared = True

    @classmethod
    def tool_refs(cls, params: ActionsParams) -> list[tuple[PathKey, str]]:
        refs = named_tools(params, "required", "forbidden")
        refs += [
            (("order", i, j), name) for i, pair in enumerate(params.order) for j, name in enumerate(pair)
        ]
        return refs

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        p: ActionsParams = self.params
        calls = transcript.all_tool_calls()
        results = transcript.tool_results()
        succeeded = [c for c in calls if not (results.get(c.id) and results[c.id].error)]
        candidates = calls if p.rule == "tau2" else succeeded
        problems: list[str] = []
        category = None
        # a pattern matches calls of its name only: look at those
        named = _by_name(calls)
        forbidden = [str(f) for f in p.forbidden if any(f.matches(c, p.rule) for c in named.get(f.name, ()))]
        if forbidden:
            problems.append(f"forbidden action taken: {', '.join(forbidden)}")
            category = "forbidden_action"
        named = _by_name(candidates)
        met = [any(r.matches(c, p.rule) for c in named.get(r.name, ())) for r in p.required]
        missing = [str(r) for r, ok in zip(p.required, met, strict=True) if not ok]
        if missing:
            problems.append(f"required action not done: {', '.join(missing)}")
            category = category or "missing_action"
        names = [c.name for c in transcript.tool_calls()]
        for first, then in p.order:
            if then in names and (first not in names or names.index(first) > names.index(then)):
                problems.append(f"{then} happened before {first}")
                category = category or "wrong_order"
        if p.confirm_before_write:
            unconfirmed = confirmation_violations(transcript, self.domain.toolkit.write_tools("agent"))
            if unconfirmed:
                problems.append(f"no explicit confirmation before {', '.join(unconfirmed)}")
                category = category or "no_confirmation"
        metrics = {f"met[{i}]": float(ok) for i, ok in enumerate(met)}
        if problems:
            return self.result(False, "; ".join(problems), category=category, metrics=metrics)
        return self.result(True, f"process followed ({len(calls)} tool calls)", metrics=metrics)
