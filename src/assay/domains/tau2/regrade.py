"""``assay regrade FILE --format tau2``: tau2's recorded simulations run again in assay.

Each simulation of a tau2 results file becomes one trial of an ordinary assay run: the
file's own copy of its task (converted as ``assay import tau2`` converts it, so the
file's tasks win over the suite's), the recorded messages said again by the
``recorded:MODEL`` agent and the ``replay`` user, every recorded tool call run on a
fresh environment of the ported domain, and the trial graded by assay's graders. The run
is stored like any other (agent ``recorded:<the recorded model>``), so ``show``,
``compare``, ``gate``, ``report``, ``rank`` and the viewer work on it.

Then the run is checked against the recording: every replayed tool output against the
recorded one (a mismatch is a broken port, or an environment tau2 did not reset), and
every grade against the recorded verdict (DB, each env assertion, each communicate
check, each action check, the reward where the basis has no NL assertion). The port's
tau2 evaluator (:mod:`.evaluate`) re-derives the same verdicts as a cross-check.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.results import TrialResult
from ...core.task import Task as AssayTask
from ...core.transcript import Transcript
from ...envs.registry import get_domain
from ...runner.api import Run, run_async
from ...store.store import Store
from ...suites.instantiate import instantiate
from ...suites.loaded import LoadedSuite
from ...suites.loader import load_suite
from ...users.recorded import RECORDINGS_KEY
from .domain import Tau2Domain
from .importer import GREETING, convert_task, import_tau2
from .replay import Simulation, parse_results, read_results, recorded_components, replay_simulation
from .store import Tau2DataError
from .tasks import Message, Task, tool_call_pairs

COMPONENTS = ("db", "env_assertions", "communicate", "actions", "reward")
#: Limits of a regraded trial: the recording, not the suite, decides where it ends.
REPLAY_LIMITS = {"max_turns": 100_000, "max_tool_calls": 100_000, "timeout_s": 3600.0}


@dataclass(frozen=True)
class ToolMismatch:
    """A replayed tool output that differs from the recorded one."""

    simulation_id: str
    task_id: str
    message_index: int
    """Index of the tool message in the recorded simulation."""
    tool: str
    requestor: str
    expected: str
    got: str | None
    """None: the call was never replayed (the conversation went another way)."""


@dataclass
class Agreement:
    """How often assay's verdict equals the recorded one, for one component."""

    compared: int = 0
    agreed: int = 0
    disagreements: list[str] = field(default_factory=list)
    """``simulation id: what differs``."""

    def add(self, simulation: str, ours: Any, recorded: Any) -> None:
        """One verdict; a list of checks (env assertions, communicate, actions) counts
        check by check."""
        if isinstance(recorded, list):
            ours_list = ours if isinstance(ours, list) else []
            if len(ours_list) != len(recorded):
                self.compared += len(recorded) or 1
                self.disagreements.append(f"{simulation}: assay {ours!r}, recorded {recorded!r}")
                return
            for i, (a, b) in enumerate(zip(ours_list, recorded, strict=True)):
                self.compared += 1
                if a == b:
                    self.agreed += 1
                else:
                    self.disagreements.append(f"{simulation}: check {i}: assay {a!r}, recorded {b!r}")
            return
        self.compared += 1
        if ours == recorded:
            self.agreed += 1
        else:
            self.disagreements.append(f"{simulation}: assay {ours!r}, recorded {recorded!r}")

    @property
    def rate(self) -> float | None:
        return self.agreed / self.compared if self.compared else None


@dataclass
class RegradeReport:
    """What ``assay regrade`` found for one results file."""

    path: Path
    domain: str
    model: str
    run_id: str
    store: str
    simulations: int
    tool_outputs: int = 0
    mismatches: list[ToolMismatch] = field(default_factory=list)
    flow: list[str] = field(default_factory=list)
    """Simulations whose replayed conversation did not follow the recording."""
    agreement: dict[str, Agreement] = field(default_factory=lambda: {c: Agreement() for c in COMPONENTS})
    evaluator: dict[str, Agreement] = field(default_factory=lambda: {c: Agreement() for c in COMPONENTS})
    """The port's tau2 evaluator on the same simulations (the cross-check)."""
    needs_judge: int = 0
    """Simulations whose reward basis has NL_ASSERTION (reward not compared without a judge)."""
    mean_reward: float | None = None
    recorded_mean_reward: float | None = None

    def to_dict(self) -> dict[str, Any]:
        def agreement(table: dict[str, Agreement]) -> dict[str, Any]:
            return {
                name: {"compared": a.compared, "agreed": a.agreed, "disagreements": a.disagreements}
                for name, a in table.items()
            }

        return {
            "schema": "assay.regrade/1",
            "file": str(self.path),
            "format": "tau2",
            "domain": self.domain,
            "model": self.model,
            "run_id": self.run_id,
            "store": self.store,
            "simulations": self.simulations,
            "tool_outputs": self.tool_outputs,
            "mismatches": [m.__dict__ for m in self.mismatches],
            "flow": self.flow,
            "agreement": agreement(self.agreement),
            "evaluator": agreement(self.evaluator),
            "needs_judge": self.needs_judge,
            "mean_reward": self.mean_reward,
            "recorded_mean_reward": self.recorded_mean_reward,
        }


# --- the recording as assay tasks ---------------------------------------------------------


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


def _recorded(messages: list[Message]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content or ""}
        if m.tool_calls:
            item["tool_calls"] = [
                {"id": c.id, "name": c.name, "args": c.arguments, "requestor": _side(c.requestor)}
                for c in m.tool_calls
            ]
        if m.role == "tool":
            item["tool_call_id"], item["error"] = m.id, m.error
        out.append(item)
    return out


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
            recordings.append(_recorded(rest))
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


# --- the run and its checks ----------------------------------------------------------------


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


async def regrade_tau2_async(
    path: Path | str,
    *,
    suite: Path | str | None = None,
    data: Path | str | None = None,
    store: Store | str | None = None,
    run_id: str | None = None,
    concurrency: int = 8,
    progress: Callable[[TrialResult, int, int], None] | None = None,
) -> RegradeReport:
    """Regrade a tau2 results file (see the module docstring). ``suite``: an imported
    tau2 suite folder (``assay import tau2``); else ``data``: a tau2 data folder, imported
    for the occasion."""
    path = Path(path)
    raw = read_results(path)
    name, tasks, simulations = parse_results(raw, path)
    info: dict[str, Any] = raw["info"] if isinstance(raw.get("info"), dict) else {}
    agent_info: dict[str, Any] = info["agent_info"] if isinstance(info.get("agent_info"), dict) else {}
    model = str(agent_info.get("llm") or "unknown")
    st = store if isinstance(store, Store) else Store(store)
    with tempfile.TemporaryDirectory(prefix="assay-regrade-") as tmp:
        if suite is None:
            if data is None:
                raise Tau2DataError(
                    "regrade needs --suite DIR (an imported tau2 suite) or --data PATH (tau2's data)"
                )
            import_tau2(data, name, Path(tmp) / name)
            suite = Path(tmp) / name
        loaded = load_suite(suite)
        domain = get_domain(loaded.domain_ref)
        if not isinstance(domain, Tau2Domain) or domain.loaded.name.removesuffix("-workflow") != name:
            raise Tau2DataError(
                f"{path}: a tau2 {name} results file, but suite {loaded.name} is not tau2's {name}"
            )
        check_tools(domain, path, simulations)
        splits = {t.id: t.split for t in loaded.tasks}
        regraded, trials = regrade_tasks(tasks, simulations, splits, path)
        run = await run_async(
            regrade_suite(loaded, regraded, trials),
            agent=f"recorded:{model}",
            user="replay",
            trials=trials,
            split="all",  # every recorded simulation, holdout (tau2's test split) included
            store=st,
            run_id=run_id,
            concurrency=concurrency,
            progress=progress,
        )
    return check_run(run, path, name, model, tasks, simulations, domain)


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


def regrade_tau2(path: Path | str, **options: Any) -> RegradeReport:
    """Synchronous twin of :func:`regrade_tau2_async`."""
    return asyncio.run(regrade_tau2_async(path, **options))


__all__ = [
    "COMPONENTS",
    "GREETING",
    "Agreement",
    "RegradeReport",
    "ToolMismatch",
    "check_run",
    "recorded_conversation",
    "regrade_suite",
    "regrade_tasks",
    "regrade_tau2",
    "regrade_tau2_async",
]
