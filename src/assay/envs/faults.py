"""Fault injection for robustness evals: a wrapper that makes chosen tools misbehave.

A :class:`FaultPlan` lists rules ("``get_order_details`` times out 30% of the time").
:class:`FaultyEnvironment` wraps any :class:`Environment` and applies the plan by a
seeded schedule: whether call number ``i`` of tool ``t`` in a trial is faulted is a
function of (trial seed, plan seed, tool, i) only, never of global randomness, so the
same trial gets the same faults in every process and on every executor.

Fault kinds (what the agent sees; see docs/robustness.md):

========== ========================================= =====================================
kind       the tool                                   the agent receives
========== ========================================= =====================================
timeout    does not run (no state change)             a tool error: timed out, try again
rate_limit does not run (no state change)             a tool error: HTTP 429, retry after N s
empty      runs (writes are applied)                  an empty result: ``{}``, ``[]`` or ``""``
drop_fields runs (writes are applied)                 the result without some fields
partial    runs (writes are applied)                  the response cut off at 30-70% of it
format     runs (writes are applied)                  another format: camelCase keys, text
                                                      instead of JSON, JSON instead of text
========== ========================================= =====================================

Error kinds raise :class:`InjectedFault` (a :class:`ToolError`), so the orchestrator
shows them to the agent as tool errors; the other kinds return altered text. Either
way a fault is part of what the agent is graded on, never a harness error. State only
ever changes through the real tool, so :meth:`FaultyEnvironment.snapshot` stays
truthful. The kind of the fault injected into the last call is in
:attr:`FaultyEnvironment.last_fault` (the orchestrator records it on the tool span).
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..core.hashing import canonical_json, derive_seed, stable_hash
from ..core.messages import ToolSpec
from ..core.sources import ProblemError, parse_yaml, read_text
from ..errors import AssayError
from .environment import Environment
from .state import Snapshot, State
from .tools import Caller, ToolError

FaultKind = Literal["timeout", "rate_limit", "empty", "drop_fields", "partial", "format"]
FAULT_KINDS: tuple[str, ...] = FaultKind.__args__  # type: ignore[attr-defined]
#: Kinds where the tool does not run and the agent gets a tool error.
ERROR_KINDS = frozenset({"timeout", "rate_limit"})
#: The tool-span attribute that names the fault injected into that call.
FAULT_ATTRIBUTE = "fault"
_SPEC = re.compile(
    r"^\s*(?P<tool>[\w.*-]+)\s*:\s*(?P<kind>\w+)\s*(?:@\s*(?P<rate>[\d.]+))?\s*(?:#(?P<calls>[\d+]+))?\s*$"
)


class FaultSpecError(AssayError):
    """A fault plan (file, spec string or suite field) that does not validate."""


class InjectedFault(ToolError):
    """A tool error injected by a fault plan; the agent sees its message."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class FaultRule(BaseModel):
    """One rule: which tool, which kind of fault, how often.

    A rule fires on call ``i`` (1-based, counted per tool within a trial) when ``i`` is
    listed in ``calls`` or a seeded draw falls below ``rate``. The short form
    ``"TOOL:KIND@RATE"`` or ``"TOOL:KIND#1+3"`` is accepted wherever a rule is.
    """

    model_config = ConfigDict(extra="forbid")

    tool: str = Field("*", min_length=1, description="tool name, or '*' for every tool")
    kind: FaultKind
    rate: float = Field(0.0, ge=0.0, le=1.0, description="probability that a call is faulted")
    calls: list[int] = Field(default_factory=list, description="1-based call numbers always faulted")
    max_per_trial: int | None = Field(None, ge=1, description="at most this many faults per trial")
    fields: list[str] = Field(default_factory=list, description="drop_fields: fields to drop")
    style: Literal["camel", "text"] | None = Field(None, description="format: the new format")
    seconds: float = Field(30.0, gt=0, description="timeout: the time named in the message")
    retry_after: float = Field(2.0, ge=0, description="rate_limit: the wait named in the message")

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, data: Any) -> Any:
        return _parse_rule(data) if isinstance(data, str) else data

    @model_validator(mode="after")
    def _fires(self) -> FaultRule:
        if self.rate == 0 and not self.calls:
            raise ValueError("the rule never fires: give a rate above 0 or calls")
        if any(c < 1 for c in self.calls):
            raise ValueError("calls are numbered from 1")
        return self


class FaultPlan(BaseModel):
    """The faults of a run: rules applied, first match wins, to the tool calls of
    ``callers`` (the agent by default). ``seed`` varies the schedule without changing
    the trials."""

    model_config = ConfigDict(extra="forbid")

    rules: list[FaultRule] = Field(default_factory=list)
    callers: list[Caller] = Field(default_factory=lambda: list[Caller](["agent"]))
    seed: int = 0

    @model_validator(mode="before")
    @classmethod
    def _list_form(cls, data: Any) -> Any:
        return {"rules": data} if isinstance(data, list) else data

    @property
    def hash(self) -> str:
        return stable_hash(self.model_dump(mode="json"))

    def __bool__(self) -> bool:
        return bool(self.rules)

    def describe(self) -> str:
        """The plan as a short spec string (rules without extra parameters)."""
        parts = []
        for r in self.rules:
            when = f"@{r.rate:g}" if r.rate else ""
            when += "#" + "+".join(map(str, r.calls)) if r.calls else ""
            parts.append(f"{r.tool}:{r.kind}{when}")
        return ",".join(parts)


@dataclass(frozen=True, slots=True)
class FaultEvent:
    """A fault injected into call ``index`` of ``tool``."""

    tool: str
    index: int
    kind: str


# --- the schedule -------------------------------------------------------------------
def _draw(*parts: object) -> float:
    return random.Random(derive_seed(*parts)).random()


def scheduled(plan: FaultPlan, seed: int, tool: str, index: int, fired: Counter[int]) -> int | None:
    """The number of the rule that faults call ``index`` of ``tool``, or None.
    ``fired`` counts faults per rule so far in the trial (for ``max_per_trial``)."""
    for number, rule in enumerate(plan.rules):
        if rule.tool not in ("*", tool):
            continue
        if rule.max_per_trial is not None and fired[number] >= rule.max_per_trial:
            continue
        if index in rule.calls:
            return number
        if rule.rate and _draw(seed, plan.seed, "fault", rule.kind, tool, index) < rule.rate:
            return number
    return None


# --- effects ------------------------------------------------------------------------
def fault_message(rule: FaultRule, tool: str) -> str:
    """The tool error an error-kind fault shows the agent."""
    if rule.kind == "timeout":
        return (
            f"{tool} timed out after {rule.seconds:g} s: the service did not answer and the "
            "request was not processed. Try again."
        )
    return (
        f"rate limit exceeded for {tool} (HTTP 429 Too Many Requests): the request was not "
        f"processed; retry after {rule.retry_after:g} s."
    )


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _camel_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {_camel(str(k)): _camel_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel_keys(v) for v in value]
    return value


def _as_text(value: Any) -> str:
    if isinstance(value, dict):
        return "\n".join(f"{k}: {v if isinstance(v, str) else json.dumps(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "\n".join(f"- {_as_text(v)}".replace("\n", "; ") for v in value)
    return value if isinstance(value, str) else json.dumps(value)


def _drop(value: Any, rule: FaultRule, rng: random.Random) -> Any:
    """``value`` without some fields (the rule's, else a seeded half, at least one)."""
    records = [value] if isinstance(value, dict) else [v for v in value if isinstance(v, dict)]
    keys = sorted({k for r in records for k in r})
    if not keys:
        return None
    chosen = [f for f in rule.fields if f in keys] or rng.sample(keys, max(1, len(keys) // 2))
    strip = lambda r: {k: v for k, v in r.items() if k not in chosen}  # noqa: E731
    return (
        strip(value) if isinstance(value, dict) else [strip(v) if isinstance(v, dict) else v for v in value]
    )


def transform(rule: FaultRule, content: str, rng: random.Random) -> str:
    """What a non-error fault makes of a tool's response ``content``."""
    try:
        value: Any = json.loads(content)
        structured = isinstance(value, (dict, list))
    except ValueError:
        value, structured = content, False
    if rule.kind == "empty":
        return "{}" if isinstance(value, dict) else "[]" if isinstance(value, list) else ""
    if rule.kind == "partial":
        return content[: int(len(content) * rng.uniform(0.3, 0.7))]
    if rule.kind == "drop_fields":
        return (
            "null"
            if not structured
            else json.dumps(_drop(value, rule, rng), sort_keys=True, ensure_ascii=False)
        )
    # format: JSON becomes text or camelCase JSON, text becomes JSON
    if not structured:
        return json.dumps({"result": value}, ensure_ascii=False)
    style = rule.style or rng.choice(("camel", "text"))
    camel = _camel_keys(value)
    if style == "camel" and camel != value:
        return json.dumps(camel, sort_keys=True, ensure_ascii=False)
    return _as_text(value)


# --- the wrapper --------------------------------------------------------------------
class FaultyEnvironment:
    """An :class:`Environment` whose tools misbehave according to a :class:`FaultPlan`.

    ``seed`` is the trial's seed. Call numbers are counted per tool from the last
    :meth:`reset`; calls of tools the inner environment does not have pass through
    (the agent gets the usual "unknown tool" error).
    """

    def __init__(self, inner: Environment, plan: FaultPlan, seed: int):
        self.inner, self.plan, self.seed = inner, plan, seed
        self.version = f"{inner.version}+faults-{plan.hash[:8]}"
        self.events: list[FaultEvent] = []
        self.last_fault: str | None = None
        self._calls: Counter[str] = Counter()
        self._fired: Counter[int] = Counter()
        self._known: dict[str, set[str]] = {}

    def reset(self, seed: int) -> None:
        self.inner.reset(seed)
        self.events.clear()
        self._calls.clear()
        self._fired.clear()
        self.last_fault = None

    def tools(self, for_: Caller = "agent") -> list[ToolSpec]:
        return self.inner.tools(for_)

    def snapshot(self) -> State | Snapshot:
        return self.inner.snapshot()

    def write_tools(self) -> set[str]:
        return self.inner.write_tools()

    def _exists(self, name: str, for_: Caller) -> bool:
        if for_ not in self._known:
            self._known[for_] = {t.name for t in self.inner.tools(for_)}
        return name in self._known[for_]

    def call(self, name: str, args: dict[str, Any], for_: Caller = "agent") -> str:
        self.last_fault = None
        if for_ not in self.plan.callers or not self._exists(name, for_):
            return self.inner.call(name, args, for_)
        self._calls[name] += 1
        index = self._calls[name]
        number = scheduled(self.plan, self.seed, name, index, self._fired)
        if number is None:
            return self.inner.call(name, args, for_)
        rule = self.plan.rules[number]
        if rule.kind in ERROR_KINDS:
            self._record(number, rule, name, index)
            raise InjectedFault(rule.kind, fault_message(rule, name))
        content = self.inner.call(name, args, for_)  # a real refusal wins over the fault
        self._record(number, rule, name, index)
        rng = random.Random(derive_seed(self.seed, self.plan.seed, "fault-effect", name, index))
        return transform(rule, content, rng)

    def _record(self, number: int, rule: FaultRule, tool: str, index: int) -> None:
        self._fired[number] += 1
        self.events.append(FaultEvent(tool, index, rule.kind))
        self.last_fault = rule.kind


@lru_cache(maxsize=32)
def _plan_from_json(text: str) -> FaultPlan:
    return FaultPlan.model_validate_json(text)


def wrap_with_faults(env: Environment, plan: FaultPlan | Mapping[str, Any] | None, seed: int) -> Environment:
    """``env`` with ``plan``'s faults for the trial of seed ``seed``; ``env`` itself when
    there is no plan or it has no rules. ``plan`` may be the JSON dict of a plan (as
    carried by a trial job)."""
    if not plan:
        return env
    if not isinstance(plan, FaultPlan):
        plan = _plan_from_json(canonical_json(dict(plan)))
    return FaultyEnvironment(env, plan, seed) if plan.rules else env


# --- reading plans ------------------------------------------------------------------
def _parse_rule(text: str) -> dict[str, Any]:
    match = _SPEC.match(text)
    if match is None:
        raise ValueError(
            f"{text!r} is not a fault rule; write TOOL:KIND@RATE or TOOL:KIND#CALL, "
            "e.g. get_order_details:timeout@0.3"
        )
    rule: dict[str, Any] = {"tool": match["tool"], "kind": match["kind"]}
    if match["rate"]:
        rule["rate"] = float(match["rate"])
    if match["calls"]:
        rule["calls"] = [int(c) for c in match["calls"].split("+") if c]
    return rule


def parse_fault_spec(spec: str) -> FaultPlan:
    """``"get_order_details:timeout@0.3,refund_delivered_order:rate_limit#1"`` as a plan;
    ``"none"`` (or an empty string) is the empty plan."""
    if spec.strip().lower() in ("", "none"):
        return FaultPlan()
    try:
        return FaultPlan(rules=[FaultRule.model_validate(p.strip()) for p in spec.split(",") if p.strip()])
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        where = f" ({field})" if field else ""
        raise FaultSpecError(
            f"--faults {spec!r}{where}: {first['msg'].removeprefix('Value error, ')}"
        ) from None


def load_fault_plan(
    source: FaultPlan | Mapping[str, Any] | list[Any] | str | Path | None,
) -> FaultPlan | None:
    """A plan from a plan, a JSON dict, a YAML/JSON file (the plan itself, a list of
    rules, or a mapping with a ``faults:`` key) or a spec string. Raises
    :class:`FaultSpecError` naming the file, line and field of the first problem."""
    if source is None or isinstance(source, FaultPlan):
        return source
    if isinstance(source, (Mapping, list)):
        try:
            return FaultPlan.model_validate(dict(source) if isinstance(source, Mapping) else source)
        except ValidationError as exc:
            raise FaultSpecError(f"faults: {_first_problem(exc)}") from None
    path = Path(source)
    if isinstance(source, str) and not (path.suffix in (".yaml", ".yml", ".json") or path.is_file()):
        return parse_fault_spec(source)
    try:
        data, located = parse_yaml(read_text(path, str(path)), str(path))
    except ProblemError as exc:
        raise FaultSpecError(str(exc.problems[0])) from None
    prefix: tuple[Any, ...] = ()
    if isinstance(data, dict) and "faults" in data:
        data, prefix = data["faults"], ("faults",)
    try:
        return FaultPlan.model_validate(data if data is not None else {})
    except ValidationError as exc:
        loc = tuple(exc.errors()[0]["loc"])
        if isinstance(data, list) and loc[:1] == ("rules",):
            loc = loc[1:]  # the list form: the file starts at the rules
        at = located.line(prefix + loc)
        raise FaultSpecError(f"{path}{f':{at}' if at else ''}: {_first_problem(exc)}") from None


def _first_problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    return f"{field}: {message}" if field else message
