"""``assay regrade``: the stored run checked against the recording: every replayed tool
output against the recorded one, every grade against the recorded verdict, and the
port's tau2 evaluator on the same simulations (the cross-check)."""

from __future__ import annotations

from pathlib import Path

from ...core.results import TrialResult
from ...core.transcript import Transcript
from ...runner.api import Run
from .domain import Tau2Domain
from .regrade_recording import _history_length, _side, recorded_conversation
from .regrade_report import RegradeReport, ToolMismatch
from .replay import Simulation, recorded_components, replay_simulation
from .tasks import Task


def _met(result: TrialResult, grader: str) -> tuple[bool | None, list[bool] | None]:
    grade = next((g for g in result.grades if g.grader == grader), None)
    if grade is None:
        return None, None
    met = []
    i = 0
    while f"met[{i}]" in grade.metrics:
        met.append(grade.metrics[f"met[{i}]"] == 1.0)
        i += 1
    return grade.passed, met


def compare_outputs(
    report: RegradeReport, task: Task, simulation: Simulation, transcript: Transcript | None, history: int
) -> None:
    """Every recorded tool output against the replayed one, in order."""
    messages = simulation.messages
    start = _history_length(task, messages)
    recorded = [(i, m) for i, m in enumerate(messages) if m.role == "tool" and i >= start]
    calls = {c.id: c for m in messages for c in (m.tool_calls or [])}
    replayed = [m for m in (transcript.messages[history:] if transcript else []) if m.role == "tool"]
    report.tool_outputs += len(recorded)
    for n, (i, m) in enumerate(recorded):
        got = replayed[n] if n < len(replayed) else None
        call = calls.get(m.id or "")
        if got is None or got.content != (m.content or ""):
            report.mismatches.append(
                ToolMismatch(
                    simulation.id,
                    task.id,
                    i,
                    call.name if call else "?",
                    _side(call.requestor if call else None),
                    m.content or "",
                    None if got is None else got.content,
                )
            )
    if transcript is not None:
        rest, greeting = recorded_conversation(task, simulation)
        ours = [m.role for m in transcript.messages[history:]]
        theirs = (["assistant"] if greeting is not None else []) + [m.role for m in rest]
        if ours != theirs:
            report.flow.append(f"{simulation.id}: replayed {len(ours)} messages, recorded {len(theirs)}")


def compare_verdicts(report: RegradeReport, task: Task, simulation: Simulation, result: TrialResult) -> None:
    recorded = recorded_components(simulation.reward_info)
    sid = simulation.id
    basis = set(task.evaluation_criteria.reward_basis) if task.evaluation_criteria is not None else set()
    premature = simulation.termination_reason not in ("user_stop", "agent_stop")
    if not premature:
        if recorded["db_match"] is not None:
            passed, _ = _met(result, "db")
            report.agreement["db"].add(sid, passed, recorded["db_match"])
        for name, key in (
            ("env_assertions", "env_assertions"),
            ("communicate", "communicate"),
            ("actions", "actions"),
        ):
            _, met = _met(result, name)
            report.agreement[name].add(sid, met or [], recorded[key])
    if "NL_ASSERTION" in basis and not premature:
        report.needs_judge += 1
    elif recorded["reward"] is not None:
        ours = None if result.reward is None else float(result.reward)
        report.agreement["reward"].add(sid, ours, float(recorded["reward"]))


def cross_check(report: RegradeReport, domain: Tau2Domain, task: Task, simulation: Simulation) -> None:
    """The port's tau2 evaluator on the same simulation."""
    replayed = replay_simulation(domain, task, simulation, f"{report.path}: simulation {simulation.id}")
    for name in ("db_match", "env_assertions", "communicate", "actions", "reward"):
        key = "db" if name == "db_match" else name
        if name == "db_match" and replayed.recorded["db_match"] is None:
            continue
        if name == "reward" and replayed.reproduced["reward"] is None:
            continue
        report.evaluator[key].add(simulation.id, replayed.reproduced[name], replayed.recorded[name])


def check_run(
    run: Run,
    path: Path,
    name: str,
    model: str,
    tasks: dict[str, Task],
    simulations: list[Simulation],
    domain: Tau2Domain,
) -> RegradeReport:
    """The stored run against the recording (see the module docstring)."""
    report = RegradeReport(path, name, model, run.run_id, run.store.url, len(simulations))
    results = {(r.task_id, r.trial_index): r for r in run.results}
    seen: dict[str, int] = {}
    rewards, recorded_rewards = [], []
    for s in sorted(simulations, key=lambda s: (s.task_id, s.trial or 0)):
        index = seen.get(s.task_id, 0)
        seen[s.task_id] = index + 1
        task = tasks[s.task_id]
        result = results.get((s.task_id, index))
        if result is None:
            report.flow.append(f"{s.id}: no trial was stored")
            continue
        history = len((task.initial_state.message_history if task.initial_state else None) or [])
        compare_outputs(report, task, s, run.transcript(s.task_id, index), history)
        compare_verdicts(report, task, s, result)
        cross_check(report, domain, task, s)
        if result.reward is not None:
            rewards.append(float(result.reward))
        reward = (s.reward_info or {}).get("reward")
        if isinstance(reward, (int, float)):
            recorded_rewards.append(float(reward))
    report.mean_reward = sum(rewards) / len(rewards) if rewards else None
    report.recorded_mean_reward = sum(recorded_rewards) / len(recorded_rewards) if recorded_rewards else None
    return report


__all__ = ["check_run", "compare_outputs", "compare_verdicts", "cross_check"]
