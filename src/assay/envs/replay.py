"""Replaying a recorded conversation: recorded tool outputs for matching calls, and where
a new run's calls diverge from the recorded ones.

A task with a :class:`~assay.core.task.Replay` (imported from traces, docs/traces.md)
runs in a :class:`ReplayEnvironment`: a call that matches a recorded one (name and
arguments, or the name only) gets the recorded output; a call that matches none is a
divergence and gets an error, or the live domain's answer when the suite has one and
the task says ``unrecorded: live``. With ``shadow`` (the default) recorded calls are
also applied to the live domain, so its state follows the conversation and the suite's
state graders judge the new run as they judged the recorded one.

:func:`divergence` compares the calls a run made with the recorded ones, position by
position: the first call that differs is where the run diverged.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any

from ..core.hashing import canonical_json
from ..core.messages import ToolSpec
from ..core.task import RecordedCall, Replay, Task
from .environment import Environment
from .state import Snapshot, State
from .tools import Caller, ToolError

#: The tool-span attribute that says how a replay environment answered a call.
REPLAY_ATTRIBUTE = "replay"
#: Its values: served from the recording (first use, or again), or not recorded.
RECORDED, REPEATED, UNRECORDED, LIVE = "recorded", "repeated", "unrecorded", "unrecorded-live"


def call_key(name: str, arguments: dict[str, Any], replay: Replay) -> str:
    """What two calls must share to match under the replay's rule."""
    if replay.match == "name":
        return name
    ignored = set(replay.ignore_arguments)
    args = {k: v for k, v in arguments.items() if k not in ignored} if ignored else arguments
    return name + "\x1f" + canonical_json(args)


def infer_tools(calls: list[RecordedCall]) -> list[dict[str, Any]]:
    """Tool definitions from the recorded calls alone: each argument seen, typed by its
    first value (used when the traces carried no definitions)."""
    kinds = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}
    tools: dict[str, dict[str, Any]] = {}
    for call in calls:
        tool = tools.setdefault(call.name, {"name": call.name, "description": "", "properties": {}})
        for key, value in call.arguments.items():
            tool["properties"].setdefault(key, {"type": kinds.get(type(value), "string")})
    return [
        {
            "name": t["name"],
            "description": f"{t['name']} (recorded tool)",
            "parameters": {"type": "object", "properties": t["properties"]},
        }
        for t in tools.values()
    ]


def tool_spec(definition: dict[str, Any]) -> ToolSpec:
    """A recorded tool definition (``{name, description, parameters}`` or OpenAI's
    ``{type: function, function: {...}}``) as a :class:`ToolSpec`."""
    fn = definition.get("function", definition)
    return ToolSpec(
        str(fn.get("name", "")),
        str(fn.get("description") or ""),
        dict(fn.get("parameters") or {"type": "object", "properties": {}}),
    )


class ReplayEnvironment:
    """An environment that answers from a recording, over an optional live one."""

    def __init__(self, inner: Environment, replay: Replay):
        self.inner = inner
        self.replay = replay
        self.version = f"replay+{inner.version}"
        self.last_replay: str | None = None
        self._live_fault: str | None = None
        self._by_key: dict[str, list[int]] = {}
        for i, call in enumerate(replay.calls):
            self._by_key.setdefault(call_key(call.name, call.arguments, replay), []).append(i)
        self._used: set[int] = set()
        recorded = replay.tools or infer_tools(replay.calls)
        self._recorded_tools = [tool_spec(t) for t in recorded]

    @property
    def last_fault(self) -> str | None:
        """The live domain's injected fault on the last call it answered."""
        return self._live_fault

    def reset(self, seed: int) -> None:
        self.inner.reset(seed)
        self._used = set()
        self.last_replay = None

    def _live_names(self, for_: Caller) -> set[str]:
        return {t.name for t in self.inner.tools(for_)}

    def tools(self, for_: Caller = "agent") -> list[ToolSpec]:
        live = self.inner.tools(for_)
        if live:
            return live
        return self._recorded_tools if for_ == "agent" else []

    def call(self, name: str, args: dict[str, Any], for_: Caller = "agent") -> str:
        self._live_fault = None
        key = call_key(name, args, self.replay)
        candidates = self._by_key.get(key, [])
        index = next((i for i in candidates if i not in self._used), None)
        live = name in self._live_names(for_)
        if index is None and candidates:  # the same call again: the recorded answer again
            index, self.last_replay = candidates[-1], REPEATED
        elif index is not None:
            self._used.add(index)
            self.last_replay = RECORDED
        if index is not None:
            recorded = self.replay.calls[index]
            if live and self.replay.shadow and self.last_replay == RECORDED:
                self._shadow(name, args, for_)
            if recorded.error:
                raise ToolError(_strip_error(recorded.output))
            return recorded.output
        if live and self.replay.unrecorded == "live":
            self.last_replay = LIVE
            try:
                return self.inner.call(name, args, for_)
            finally:
                self._live_fault = getattr(self.inner, "last_fault", None)
        self.last_replay = UNRECORDED
        raise ToolError(
            f"no recorded output for {name}({_short(args)}): this call was not in the recorded conversation"
        )

    def _shadow(self, name: str, args: dict[str, Any], for_: Caller) -> None:
        """Apply a recorded call to the live domain (its answer is not used)."""
        with contextlib.suppress(ToolError):  # the recording got an error too, or the world differs
            self.inner.call(name, args, for_)

    def snapshot(self) -> State | Snapshot:
        return self.inner.snapshot()

    def write_tools(self) -> set[str]:
        return self.inner.write_tools()


def _strip_error(output: str) -> str:
    return output[len("Error: ") :] if output.startswith("Error: ") else output


def _short(args: dict[str, Any], limit: int = 120) -> str:
    text = json.dumps(args, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def with_replay(env: Environment, task: Task) -> Environment:
    """``env`` under the task's recording, if the task has one."""
    if task.replay is None:
        return env
    return ReplayEnvironment(env, task.replay)


@dataclass(frozen=True)
class Divergence:
    """Where a run's calls first differ from the recorded ones (``index``: position in
    the run's calls, 0-based; ``recorded``/``got``: the calls at that position, either
    missing when one sequence is shorter)."""

    index: int
    recorded: dict[str, Any] | None
    got: dict[str, Any] | None

    def describe(self) -> str:
        def show(call: dict[str, Any] | None) -> str:
            return "nothing" if call is None else f"{call['name']}({_short(call.get('arguments') or {})})"

        return f"call {self.index + 1}: recorded {show(self.recorded)}, got {show(self.got)}"


@dataclass
class DivergenceReport:
    """How a run's calls compare with the recording."""

    recorded: int
    made: int
    first: Divergence | None
    unrecorded: int = 0
    """Calls that matched no recorded call (answered with an error or by the live domain)."""
    unused: int = 0
    """Recorded calls the run never made."""

    @property
    def diverged(self) -> bool:
        return self.first is not None


def divergence(replay: Replay, made: list[tuple[str, dict[str, Any], str]]) -> DivergenceReport:
    """Compare the calls a run made (``(name, arguments, caller)`` in order) with the
    recorded ones under the replay's matching rule."""
    recorded = replay.calls
    first: Divergence | None = None
    for i in range(max(len(recorded), len(made))):
        r = recorded[i] if i < len(recorded) else None
        m = made[i] if i < len(made) else None
        same = (
            r is not None
            and m is not None
            and r.caller == m[2]
            and call_key(r.name, r.arguments, replay) == call_key(m[0], m[1], replay)
        )
        if not same:
            first = Divergence(
                i,
                None if r is None else {"name": r.name, "arguments": r.arguments, "caller": r.caller},
                None if m is None else {"name": m[0], "arguments": m[1], "caller": m[2]},
            )
            break
    pool: dict[str, int] = {}
    for r in recorded:
        k = call_key(r.name, r.arguments, replay)
        pool[k] = pool.get(k, 0) + 1
    unrecorded = 0
    for name, args, _ in made:
        k = call_key(name, args, replay)
        if k not in pool:
            unrecorded += 1
        elif pool[k] > 0:
            pool[k] -= 1  # a recorded call used (again: a repeat, answered from the recording)
    unused = sum(pool.values())
    return DivergenceReport(len(recorded), len(made), first, unrecorded, unused)
