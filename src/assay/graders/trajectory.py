"""Agent and tool metrics of the seeds' metric table, as pure functions.

- :func:`trajectory_match`: the agent's tool calls against a reference trajectory, in the
  modes ``strict`` (same calls, same order), ``unordered`` (same calls, any order),
  ``subset`` (every agent call is in the reference; nothing extra) and ``superset``
  (every reference call was made; extras allowed), with arguments compared ``exact``,
  ``subset`` (the reference's arguments are present with equal values) or ``ignore``.
- :func:`tool_selection`: precision (calls to a necessary tool / all calls), recall
  (necessary tools called / necessary tools), exact-set match.
- :func:`parameter_accuracy`: correct reference arguments / all reference arguments.
- :func:`unnecessary_call_rate`: calls beyond what the reference needs / all calls.
- :func:`error_recovery`: what the agent did after each tool error - fixed its arguments
  and completed, retried another way, stopped safely and handed over, or not recovered.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..core.hashing import canonical_json
from ..core.transcript import Transcript
from .matching import args_match, values_equal

Mode = Literal["strict", "unordered", "subset", "superset"]
ArgsMode = Literal["exact", "ignore", "subset"]
MODES: tuple[str, ...] = ("strict", "unordered", "subset", "superset")
ARGS_MODES: tuple[str, ...] = ("exact", "ignore", "subset")


@dataclass(frozen=True)
class Call:
    """A tool call reduced to what trajectories compare: name and arguments."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)


def as_call(obj: Any) -> Call:
    """A :class:`Call` from a ToolCall, an Action, a ``{name, args|arguments}`` dict or a
    ``(name, args)`` pair."""
    if isinstance(obj, Call):
        return obj
    if isinstance(obj, str):
        return Call(obj)
    if isinstance(obj, dict):
        return Call(str(obj["name"]), dict(obj.get("args", obj.get("arguments")) or {}))
    if isinstance(obj, (tuple, list)):
        return Call(str(obj[0]), dict(obj[1]) if len(obj) > 1 and obj[1] else {})
    args = getattr(obj, "arguments", None)
    if args is None:
        args = getattr(obj, "args", {})
    return Call(str(obj.name), dict(args or {}))


def _same(actual: Call, expected: Call, args: str) -> bool:
    return actual.name == expected.name and args_match(actual.args, expected.args, args)


def _matching(left: Sequence[Call], right: Sequence[Call], ok: Any) -> int:
    """Size of a maximum matching between ``left`` and ``right`` (Kuhn's algorithm)."""
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in range(len(right)):
            if j not in seen and ok(left[i], right[j]):
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in range(len(left)))


def trajectory_match(
    actual_calls: Iterable[Any],
    reference_calls: Iterable[Any],
    mode: Mode = "strict",
    args: ArgsMode = "exact",
) -> bool:
    """Does the agent's trajectory match the reference? See the module docstring.

    Arguments are always compared actual-against-reference: in ``subset`` argument mode
    the reference's arguments must be present in the agent's call with equal values.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if args not in ARGS_MODES:
        raise ValueError(f"args must be one of {', '.join(ARGS_MODES)}, not {args!r}")
    actual = [as_call(c) for c in actual_calls]
    reference = [as_call(c) for c in reference_calls]
    if mode == "strict":
        return len(actual) == len(reference) and all(
            _same(a, r, args) for a, r in zip(actual, reference, strict=True)
        )
    matched = _matching(actual, reference, lambda a, r: _same(a, r, args))
    if mode == "unordered":
        return len(actual) == len(reference) == matched
    if mode == "subset":
        return matched == len(actual)
    return matched == len(reference)


@dataclass(frozen=True)
class ToolSelection:
    precision: float | None
    recall: float | None
    exact_set: bool
    extra_tools: tuple[str, ...]
    missing_tools: tuple[str, ...]


def tool_selection(actual_calls: Iterable[Any], necessary_tools: Iterable[str]) -> ToolSelection:
    """Tool selection precision (calls to necessary tools / calls; None without calls),
    recall (necessary tools used / necessary tools; None if none are necessary) and
    whether the set of tools used is exactly the necessary set."""
    names = [as_call(c).name for c in actual_calls]
    needed = set(necessary_tools)
    used = set(names)
    precision = sum(n in needed for n in names) / len(names) if names else None
    recall = len(used & needed) / len(needed) if needed else None
    return ToolSelection(
        precision, recall, used == needed, tuple(sorted(used - needed)), tuple(sorted(needed - used))
    )


def parameter_accuracy(actual_calls: Iterable[Any], reference_calls: Iterable[Any]) -> float | None:
    """Correct parameters / all parameters of the reference calls. Each reference call is
    paired with a distinct agent call of the same tool (the pairing that gets the most
    parameters right, greedily); a parameter is correct when the paired call has it with
    an equal value. Reference calls with no agent counterpart count all their parameters
    as wrong. None when the reference has no parameters."""
    actual = [as_call(c) for c in actual_calls]
    reference = [as_call(c) for c in reference_calls]
    total = sum(len(r.args) for r in reference)
    if total == 0:
        return None
    used: set[int] = set()
    correct = 0
    for r in reference:
        best, best_i = -1, None
        for i, a in enumerate(actual):
            if i in used or a.name != r.name:
                continue
            hits = sum(k in a.args and values_equal(a.args[k], v) for k, v in r.args.items())
            if hits > best:
                best, best_i = hits, i
        if best_i is not None:
            used.add(best_i)
            correct += best
    return correct / total


def unnecessary_call_rate(actual_calls: Iterable[Any], reference_calls: Iterable[Any]) -> float | None:
    """Extra calls / all calls: per tool, the calls beyond the number the reference makes
    (calls to tools the reference never uses are all extra). None without calls."""
    names = Counter(as_call(c).name for c in actual_calls)
    needed = Counter(as_call(c).name for c in reference_calls)
    total = sum(names.values())
    if total == 0:
        return None
    return sum(max(0, n - needed.get(name, 0)) for name, n in names.items()) / total


Recovery = Literal["fixed", "alternative", "handover", "unrecovered"]
RECOVERIES: tuple[str, ...] = ("fixed", "alternative", "handover", "unrecovered")


@dataclass(frozen=True)
class ToolErrorEvent:
    """One failed tool call and what the agent did about it."""

    index: int
    tool: str
    error: str
    recovery: Recovery


@dataclass
class RecoveryReport:
    events: list[ToolErrorEvent] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        c: Counter[str] = Counter(e.recovery for e in self.events)
        return {k: c.get(k, 0) for k in RECOVERIES}

    @property
    def rate(self) -> float | None:
        """Recovered tool errors (fixed + alternative + handover) / tool errors."""
        if not self.events:
            return None
        return sum(e.recovery != "unrecovered" for e in self.events) / len(self.events)


def error_recovery(
    transcript: Transcript,
    handover_tools: Iterable[str] = ("transfer_to_human_agent",),
    write_tools: Iterable[str] = (),
) -> RecoveryReport:
    """Classify what followed each failed tool call (the first that applies):

    - ``fixed``: the same tool was called again with different arguments and succeeded;
    - ``handover``: the agent called a handover tool and made no write call after the error;
    - ``alternative``: another tool (not a handover tool) was called and succeeded;
    - ``handover`` too: the agent made no further tool call and ended with a message to
      the user (stopped safely and explained);
    - ``unrecovered``: anything else (repeated the identical failing call, gave up silently,
      kept writing).
    """
    handover = set(handover_tools)
    writes = set(write_tools)
    results = transcript.tool_results()
    steps: list[tuple[str, Any, bool, str]] = []  # (kind, call, ok, text)
    for m in transcript.messages:
        if m.role == "assistant":
            for c in m.tool_calls:
                res = results.get(c.id)
                steps.append(("call", c, res is not None and not res.error, res.content if res else ""))
            if m.content:
                steps.append(("text", None, True, m.content))
    report = RecoveryReport()
    for i, (kind, call, ok, text) in enumerate(steps):
        if kind != "call" or ok:
            continue
        later = steps[i + 1 :]
        later_calls = [(c, good) for k, c, good, _ in later if k == "call"]
        key = canonical_json(call.arguments)
        recovery: Recovery = "unrecovered"
        no_writes = not any(c.name in writes for c, _ in later_calls)
        if any(
            c.name == call.name and good and canonical_json(c.arguments) != key for c, good in later_calls
        ):
            recovery = "fixed"
        elif no_writes and any(c.name in handover for c, _ in later_calls):
            recovery = "handover"
        elif any(c.name != call.name and c.name not in handover and good for c, good in later_calls):
            recovery = "alternative"
        elif no_writes and not later_calls and any(k == "text" for k, *_ in later):
            recovery = "handover"
        report.events.append(ToolErrorEvent(len(report.events), call.name, text, recovery))
    return report
