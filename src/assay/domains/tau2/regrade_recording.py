"""``assay regrade``: a tau2 results file's recorded simulations as assay tasks (each
task carrying its recordings, said again by the ``recorded`` agent and the ``replay``
user), and the suite that runs them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ...core.task import Task as AssayTask
from ...suites.instantiate import instantiate
from ...suites.loaded import LoadedSuite
from ...users.recorded import RECORDINGS_KEY
from .domain import Tau2Domain
from .importer import convert_task, message_items
from .replay import Simulation
from .store import Tau2DataError
from .tasks import Message, Task, tool_call_pairs

#: Limits of a regraded trial: the recording, not the suite, decides where it ends.
REPLAY_LIMITS = {"max_turns": 100_000, "max_tool_calls": 100_000, "timeout_s": 3600.0}


def _history_length(task: Task, messages: list[Message]) -> int:
    history = (task.initial_state.message_history if task.initial_state is not None else None) or []
    prefix = messages[: len(history)]
    same = len(prefix) == len(history) and all(a.role == b.role for a, b in zip(prefix, history, strict=True))
    return len(history) if same else 0


def _side(requestor: str | None) -> str:
    return "user" if requestor == "user" else "agent"


def recorded_conversation(task: Task, simulation: Simulation) -> tuple[list[Message], str | None]:
    """What the participants said after the task's history, and the agent's greeting
    when the recording opens with one (None: the user spoke first)."""
    messages = [m for m in simulation.messages if m.role in ("user", "assistant", "tool")]
    rest = messages[_history_length(task, messages) :]
    history = bool(task.initial_state and task.initial_state.message_history)
    greeting = None
    if not history and rest and rest[0].role == "assistant" and not rest[0].tool_calls:
        greeting, rest = rest[0].content or "", rest[1:]
    return rest, greeting


def _turns(messages: list[Message], greeting: str | None) -> int:
    """The turns the orchestrator counts for a recorded conversation."""
    said = sum(1 for m in messages if m.role in ("user", "assistant") and not m.tool_calls)
    return said + (greeting is not None)


def check_tools(domain: Tau2Domain, path: Path, simulations: list[Simulation]) -> None:
    """Every recorded tool call names a tool of the domain, or was answered as tau2
    answers an unknown tool (an error): else the file is not a recording of this domain."""
    env = domain.environment_for()
    for s in simulations:
        for index, call, answer in tool_call_pairs(s.messages, f"{path}: simulation {s.id}"):
            if not env.has_tool(call.name) and not answer.error:
                raise Tau2DataError(
                    f"{path}: simulation {s.id}: message {index}: tool {call.name!r} is not a tool of tau2 "
                    f"domain {domain.loaded.name} (and the recording shows no error for it)"
                )


def regrade_tasks(
    tasks: dict[str, Task], simulations: list[Simulation], splits: Mapping[str, str], path: Path
) -> tuple[list[AssayTask], int]:
    """The file's tasks as assay tasks carrying their recordings, and trials per task."""
    by_task: dict[str, list[Simulation]] = {}
    for s in simulations:
        by_task.setdefault(s.task_id, []).append(s)
    counts = {len(v) for v in by_task.values()}
    if len(counts) > 1:
        raise Tau2DataError(
            f"{path}: tasks have different numbers of simulations ({', '.join(map(str, sorted(counts)))}); "
            "regrade needs the same number for every task"
        )
    out = []
    for task_id, sims in by_task.items():
        task = tasks[task_id]
        converted = convert_task(task, splits.get(task_id, "regression"))
        recordings, greeting, limit = [], None, None
        for s in sorted(sims, key=lambda s: s.trial if s.trial is not None else 0):
            rest, greeting = recorded_conversation(task, s)
            recordings.append(message_items(rest))
            if s.termination_reason not in ("user_stop", "agent_stop"):  # cut short: ends as recorded
                limit = max(limit or 0, _turns(rest, greeting))
        if greeting is None:
            converted["first_speaker"] = "user"
        else:
            converted["first_speaker"], converted["greeting"] = "agent", greeting
        if limit is not None:
            converted["limits"] = {"max_turns": max(1, limit)}
        converted["metadata"][RECORDINGS_KEY] = recordings
        converted["metadata"]["tau2_simulations"] = [s.id for s in sorted(sims, key=lambda s: s.trial or 0)]
        out.append(AssayTask.model_validate(converted))
    return out, max(counts) if counts else 1


def regrade_suite(suite: LoadedSuite, tasks: list[AssayTask], trials: int) -> LoadedSuite:
    """The suite with the file's tasks instead of its own. Its hash stays the suite's
    when every task is the same as the suite's; else it covers the changed tasks."""
    own = {t.id: t.input_hash() for t in instantiate(suite, 0)}
    copy = suite.model_copy(deep=False)
    defaults = suite.defaults.model_copy(
        update={"trials": trials, "limits": suite.defaults.limits.model_copy(update=REPLAY_LIMITS)}
    )
    copy.defaults = defaults
    copy.tasks = tasks
    copy.task_files = []
    copy._streamed = []
    copy._where = {}
    concrete = instantiate(copy, 0)
    changed = sorted(t.input_hash() for t in concrete if own.get(t.id) != t.input_hash())
    if changed:
        from ...core.hashing import stable_hash

        copy._hash = stable_hash([suite.hash, changed])
    return copy


__all__ = ["REPLAY_LIMITS", "check_tools", "recorded_conversation", "regrade_suite", "regrade_tasks"]
