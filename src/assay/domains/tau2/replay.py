"""Replaying tau2 results files: every recorded tool output reproduced, every
recorded verdict re-derived.

For each simulation of a results file (its own task copies win), :func:`replay_results`
builds a fresh environment for the task, replays every recorded tool call in message
order (agent and user), compares each output with the recorded tool message, and runs
:func:`~.evaluate.evaluate`; the report lists every output mismatch and every verdict
component that differs from the recorded ``reward_info``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from .domain import Tau2Domain, tau2_domain
from .evaluate import Tau2Verdict, evaluate, verdict_components
from .render import loads_or_text
from .store import Tau2DataError
from .tasks import InitialState, Message, Task, parse_task, tool_call_pairs


class Simulation(BaseModel):
    """One recorded simulation (the fields assay reads)."""

    model_config = ConfigDict(extra="ignore")

    id: str
    task_id: str
    termination_reason: str
    messages: list[Message]
    reward_info: dict[str, Any] | None = None
    trial: int | None = None


@dataclass(frozen=True)
class OutputMismatch:
    """A replayed tool output that differs from the recorded one."""

    simulation_id: str
    task_id: str
    message_index: int
    tool: str
    requestor: str
    arguments: dict[str, Any]
    expected: str
    got: str


@dataclass
class SimulationReport:
    simulation_id: str
    task_id: str
    calls: int
    mismatches: list[OutputMismatch]
    verdict: Tau2Verdict
    recorded: dict[str, Any]
    reproduced: dict[str, Any]
    disagreements: list[str] = field(default_factory=list)
    """Verdict components (``db_match``, ``env_assertions``, ``communicate``,
    ``actions``, ``reward``) that differ from the recorded ones."""


@dataclass
class ResultsReport:
    path: Path
    domain: str
    simulations: list[SimulationReport]

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self.simulations)

    @property
    def mismatches(self) -> list[OutputMismatch]:
        return [m for s in self.simulations for m in s.mismatches]

    @property
    def disagreements(self) -> list[tuple[str, str]]:
        return [(s.simulation_id, d) for s in self.simulations for d in s.disagreements]


def recorded_components(reward_info: dict[str, Any] | None) -> dict[str, Any]:
    """A recorded ``reward_info`` in the shape of :func:`~.evaluate.verdict_components`."""
    info = reward_info or {}
    db = info.get("db_check")
    return {
        "db_match": db.get("db_match") if isinstance(db, dict) else None,
        "env_assertions": [bool(c.get("met")) for c in info.get("env_assertions") or []],
        "communicate": [bool(c.get("met")) for c in info.get("communicate_checks") or []],
        "actions": [bool(c.get("action_match")) for c in info.get("action_checks") or []],
        "reward": info.get("reward"),
    }


def _history_length(task: Task, messages: list[Message]) -> int:
    history = (task.initial_state.message_history if task.initial_state is not None else None) or []
    prefix = messages[: len(history)]
    same = len(prefix) == len(history) and all(a.role == b.role for a, b in zip(prefix, history, strict=True))
    return len(history) if same else 0


def replay_outputs(
    domain: Tau2Domain, task: Task, simulation: Simulation, source: str = ""
) -> tuple[int, list[OutputMismatch]]:
    """Replay every tool call of a simulation on a fresh environment for its task;
    return the number of calls and the outputs that differ from the recorded ones. Calls
    that belong to the task's message history are compared as JSON, as tau2 does."""
    initial = task.initial_state
    if initial is not None and initial.message_history:
        initial = initial.model_copy(update={"message_history": None})
    env = domain.environment_for(
        initial or InitialState(), user_tools=task.user_tools, options=domain.task_options(task)
    )
    env.reset(0)
    history = _history_length(task, simulation.messages)
    mismatches = []
    pairs = tool_call_pairs(simulation.messages, source or f"simulation {simulation.id}")
    for index, call, recorded in pairs:
        got, _ = env.response(call)
        expected = recorded.content or ""
        same = loads_or_text(got) == loads_or_text(expected) if index < history else got == expected
        if not same:
            mismatches.append(
                OutputMismatch(
                    simulation.id, task.id, index, call.name, call.requestor, call.arguments, expected, got
                )
            )
    return len(pairs), mismatches


def _same(reproduced: Any, recorded: Any) -> bool:
    if isinstance(reproduced, float) or isinstance(recorded, float):
        return reproduced is not None and recorded is not None and abs(reproduced - recorded) < 1e-9
    return bool(reproduced == recorded)


def replay_simulation(
    domain: Tau2Domain, task: Task, simulation: Simulation, source: str = ""
) -> SimulationReport:
    """Outputs and verdicts of one simulation, compared with its recording."""
    where = source or f"simulation {simulation.id}"
    calls, mismatches = replay_outputs(domain, task, simulation, where)
    verdict = evaluate(domain, task, simulation.messages, simulation.termination_reason, where)
    reproduced = verdict_components(verdict)
    reproduced["communicate"] = reproduced["communicate"] or []
    reproduced["actions"] = reproduced["actions"] or []
    recorded = recorded_components(simulation.reward_info)
    disagreements = []
    for name in ("db_match", "env_assertions", "communicate", "actions", "reward"):
        if name == "reward" and reproduced["reward"] is None:
            continue  # needs a judge (NL_ASSERTION in the basis)
        if name == "db_match" and recorded["db_match"] is None:
            continue  # not recorded (premature end, or no criteria)
        if not _same(reproduced[name], recorded[name]):
            disagreements.append(name)
    return SimulationReport(
        simulation.id, task.id, calls, mismatches, verdict, recorded, reproduced, disagreements
    )


def read_results(path: Path | str) -> Any:
    """A tau2 results file's JSON (unreadable or not JSON: :class:`Tau2DataError`)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Tau2DataError(f"{path}: not a readable tau2 results file: {exc}") from None


def load_results(path: Path | str) -> tuple[str, dict[str, Task], list[Simulation]]:
    """A tau2 results file: its domain name, its task copies by id and its simulations
    (malformed content raises :class:`Tau2DataError` naming the file and simulation)."""
    return parse_results(read_results(path), path)


def parse_results(raw: Any, path: Path | str) -> tuple[str, dict[str, Task], list[Simulation]]:
    """The content of a tau2 results file (see :func:`load_results`)."""
    path = Path(path)
    if not isinstance(raw, dict) or not isinstance(raw.get("simulations"), list):
        raise Tau2DataError(f"{path}: not a tau2 results file (no 'simulations' list)")
    info: dict[str, Any] = raw["info"] if isinstance(raw.get("info"), dict) else {}
    env_info: dict[str, Any] = (
        info["environment_info"] if isinstance(info.get("environment_info"), dict) else {}
    )
    domain = env_info.get("domain_name")
    if not isinstance(domain, str):
        raise Tau2DataError(f"{path}: info.environment_info.domain_name is missing")
    tasks = {}
    if not isinstance(raw.get("tasks") or [], list):
        raise Tau2DataError(f"{path}: tasks: expected a list of tasks")
    for t in raw.get("tasks") or []:
        task = parse_task(t, str(path))
        tasks[task.id] = task
    simulations = []
    for i, s in enumerate(raw["simulations"]):
        ident = s.get("id", f"#{i}") if isinstance(s, dict) else f"#{i}"
        try:
            simulation = Simulation.model_validate(s)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise Tau2DataError(f"{path}: simulation {ident}: {where}: {err['msg']}") from None
        if simulation.task_id not in tasks:
            raise Tau2DataError(
                f"{path}: simulation {ident}: task {simulation.task_id} is not in the file's tasks"
            )
        simulations.append(simulation)
    return domain, tasks, simulations


def replay_results(path: Path | str, data_dir: Path | str) -> ResultsReport:
    """Replay a tau2 results file against the ported domain read from ``data_dir``."""
    name, tasks, simulations = load_results(path)
    domain = tau2_domain(name, data_dir)
    reports = [
        replay_simulation(domain, tasks[s.task_id], s, f"{path}: simulation {s.id}") for s in simulations
    ]
    return ResultsReport(Path(path), name, reports)


__all__ = [
    "OutputMismatch",
    "ResultsReport",
    "Simulation",
    "SimulationReport",
    "load_results",
    "parse_results",
    "read_results",
    "recorded_components",
    "replay_outputs",
    "replay_results",
    "replay_simulation",
]
