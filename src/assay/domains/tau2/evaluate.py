"""tau2's evaluator, as pure functions over a task and a trajectory.

Each function reproduces one component of ``tau2.evaluator``:

- :func:`check_environment` (DB and ENV_ASSERTION): the trajectory's state-changing
  calls replayed on one fresh environment ("predicted"), the task's gold actions on
  another ("gold", failures ignored, no synchronisation); the databases match when both
  sides (agent and user) are equal, value for value and type for type (``1`` is not
  ``1.0``), with list-backed tables in the same order; the env assertions run on the
  predicted environment.
- :func:`check_communicate` (COMMUNICATE): each string, lower-cased, must occur in
  some assistant message's lower-cased text with commas removed.
- :func:`check_actions` (ACTION): each gold action must match some tool call of the
  trajectory (agent or user) by name and ``compare_args``.
- :func:`evaluate`: all of them and the reward, the product of the components named
  in the task's ``reward_basis`` (None when the basis has NL_ASSERTION: that needs a
  judge model).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...envs.state import Database, Snapshot, State, state_hash
from .domain import Tau2Domain
from .environment import Tau2Environment
from .store import DbSpec, table_order
from .tasks import Action, EnvAssertion, InitialState, Message, Task, ToolCall

STOPS = ("agent_stop", "user_stop")
#: Seeds of the predicted and gold environments. tau2 names a new telecom bill with a
#: random uuid, so two of its environments never agree on one; distinct seeds keep that.
PREDICTED_SEED, GOLD_SEED = 0, 1


@dataclass(frozen=True)
class DbCheck:
    match: bool
    agent_match: bool
    user_match: bool


@dataclass(frozen=True)
class AssertionCheck:
    assertion: EnvAssertion
    met: bool


@dataclass(frozen=True)
class CommunicateCheck:
    info: str
    met: bool
    message_index: int | None
    """The first assistant message that says it (None when none does)."""


@dataclass(frozen=True)
class ActionCheck:
    action: Action
    met: bool
    message_index: int | None
    """The message holding the first matching call (None when none matches)."""


@dataclass
class EnvironmentResult:
    db: DbCheck
    assertions: list[AssertionCheck] = field(default_factory=list)
    gold_errors: list[tuple[int, str]] = field(default_factory=list)
    """Gold actions that failed (index, error text); tau2 ignores them."""
    predicted: State | None = None
    gold: State | None = None


@dataclass
class Tau2Verdict:
    """tau2's reward info for one simulation, reproduced."""

    reward: float | None
    reward_basis: list[str]
    breakdown: dict[str, float]
    db: DbCheck | None
    assertions: list[AssertionCheck]
    communicate: list[CommunicateCheck] | None
    actions: list[ActionCheck] | None
    note: str | None = None
    gold_errors: list[tuple[int, str]] = field(default_factory=list)


def _without_history(initial: InitialState | None) -> InitialState | None:
    if initial is None or not initial.message_history:
        return initial
    return initial.model_copy(update={"message_history": None})


def _side_hash(state: State, spec: DbSpec) -> tuple[str, dict[str, list[str]]]:
    return state_hash({t: dict(state[t]) for t in spec.table_names}), table_order(state, spec)


def compare_databases(domain: Tau2Domain, predicted: State, gold: State) -> DbCheck:
    """tau2's database check: both sides equal (tau2 compares hashes of each side)."""
    spec = domain.loaded.spec
    whole = predicted.hash() == gold.hash() and table_order(predicted, spec.db) == table_order(gold, spec.db)
    if spec.user_db is None:
        return DbCheck(whole, whole, True)
    user = _side_hash(predicted, spec.user_db) == _side_hash(gold, spec.user_db)
    agent = _side_hash(predicted, spec.db) == _side_hash(gold, spec.db)
    return DbCheck(agent and user, agent, user)


def replay_trajectory(env: Tau2Environment, messages: list[Message], source: str = "trajectory") -> None:
    """Replay the state-changing calls of a trajectory, as tau2's lenient ``set_state``
    does (outputs not checked: :mod:`.replay` checks them)."""
    from .tasks import tool_call_pairs

    for _, call, _ in tool_call_pairs(messages, source):
        if env.has_tool(call.name) and env.mutates(call.name):
            env.response(call)
    env.sync()


def gold_environment(
    domain: Tau2Domain, task: Task, seed: int = GOLD_SEED
) -> tuple[Tau2Environment, list[tuple[int, str]]]:
    """The environment after the task's initial state and its gold actions, and the
    gold actions that failed (ignored, as tau2 ignores them)."""
    env = domain.environment_for(
        task.initial_state, user_tools=task.user_tools, options=domain.task_options(task)
    )
    env.reset(seed)
    errors: list[tuple[int, str]] = []
    actions = task.evaluation_criteria.actions if task.evaluation_criteria is not None else None
    for i, action in enumerate(actions or []):
        try:
            env.make_tool_call(action.name, action.arguments, action.requestor)
        except Exception as exc:
            errors.append((i, str(exc)))
    return env, errors


def check_environment(
    domain: Tau2Domain, task: Task, messages: list[Message], source: str = ""
) -> EnvironmentResult:
    """tau2's ``EnvironmentEvaluator``: the database check and the env assertions.
    ``messages`` is the whole trajectory (including the task's message history)."""
    criteria = task.evaluation_criteria
    if criteria is None or (criteria.actions is None and criteria.env_assertions is None):
        return EnvironmentResult(DbCheck(True, True, True))
    predicted = domain.environment_for(
        _without_history(task.initial_state), user_tools=task.user_tools, options=domain.task_options(task)
    )
    predicted.reset(PREDICTED_SEED)
    replay_trajectory(predicted, messages, source or f"task {task.id}")
    gold, errors = gold_environment(domain, task)
    db = compare_databases(domain, predicted.snapshot(), gold.snapshot())
    checks = [AssertionCheck(a, predicted.run_assertion(a)) for a in criteria.env_assertions or []]
    return EnvironmentResult(db, checks, errors, predicted.snapshot(), gold.snapshot())


def assertion_holds(domain: Tau2Domain, state: State | Snapshot, assertion: EnvAssertion) -> bool:
    """Whether an env assertion holds on a state (e.g. a trial's final state). A pure
    function: ``state`` is not changed. tau2 synchronises the phone after each
    assertion; that is idempotent on a synchronised state, so assertions may be checked
    one by one, in any order."""
    env = Tau2Environment(domain.loaded)
    env.db = Database(domain.loaded.spec.keys, state)
    return env.run_assertion(assertion)


def check_communicate(task: Task, messages: list[Message]) -> list[CommunicateCheck] | None:
    """tau2's ``CommunicateEvaluator`` checks (None when there is nothing to check)."""
    infos = task.evaluation_criteria.communicate_info if task.evaluation_criteria is not None else None
    if not infos:
        return None
    checks = []
    for info in infos:
        found = next(
            (
                i
                for i, m in enumerate(messages)
                if m.role == "assistant"
                and m.has_text_content()
                and info.lower() in m.content.lower().replace(",", "")  # type: ignore[union-attr]
            ),
            None,
        )
        checks.append(CommunicateCheck(info, found is not None, found))
    return checks


def trajectory_calls(messages: list[Message]) -> list[tuple[int, ToolCall]]:
    """Every tool call of the agent and the user, with the index of its message."""
    return [
        (i, call)
        for i, m in enumerate(messages)
        if m.role in ("assistant", "user") and m.tool_calls is not None
        for call in m.tool_calls
    ]


def check_actions(task: Task, messages: list[Message]) -> list[ActionCheck] | None:
    """tau2's ``ActionEvaluator`` checks (None when the task has no gold actions)."""
    actions = task.evaluation_criteria.actions if task.evaluation_criteria is not None else None
    if not actions:
        return None
    calls = trajectory_calls(messages)
    checks = []
    for action in actions:
        found = next((i for i, call in calls if action.matches(call)), None)
        checks.append(ActionCheck(action, found is not None, found))
    return checks


def _rate(flags: list[bool]) -> float:
    return 1.0 if all(flags) else 0.0


def evaluate(
    domain: Tau2Domain, task: Task, messages: list[Message], termination_reason: str, source: str = ""
) -> Tau2Verdict:
    """tau2's ``evaluate_simulation`` (evaluation type ALL) without NL assertions."""
    criteria = task.evaluation_criteria
    if termination_reason not in STOPS:
        early = f"Simulation terminated prematurely. Termination reason: {termination_reason}"
        return Tau2Verdict(0.0, [], {}, None, [], None, None, early)
    if criteria is None:
        return Tau2Verdict(1.0, [], {}, None, [], None, None, "No evaluation criteria")
    env = check_environment(domain, task, messages, source)
    communicate = check_communicate(task, messages)
    actions = check_actions(task, messages)
    basis: list[str] = list(criteria.reward_basis)
    components: dict[str, float] = {}
    if "DB" in basis:
        components["DB"] = 1.0 if env.db.match else 0.0
    if "ENV_ASSERTION" in basis:
        components["ENV_ASSERTION"] = _rate([c.met for c in env.assertions])
    if "ACTION" in basis:
        components["ACTION"] = _rate([c.met for c in actions or []])
    if "COMMUNICATE" in basis:
        components["COMMUNICATE"] = _rate([c.met for c in communicate or []])
    product = 1.0
    for value in components.values():
        product *= value
    reward: float | None = product
    note: str | None = None
    if "NL_ASSERTION" in basis:
        reward, note = None, "NL_ASSERTION is in the reward basis: a judge model is needed"
    return Tau2Verdict(
        reward, basis, components, env.db, env.assertions, communicate, actions, note, env.gold_errors
    )


def verdict_components(verdict: Tau2Verdict) -> dict[str, Any]:
    """The verdict in the shape of tau2's recorded ``reward_info`` (for comparison)."""
    return {
        "db_match": verdict.db.match if verdict.db is not None else None,
        "env_assertions": [c.met for c in verdict.assertions],
        "communicate": [c.met for c in verdict.communicate] if verdict.communicate is not None else None,
        "actions": [c.met for c in verdict.actions] if verdict.actions is not None else None,
        "reward": verdict.reward,
    }


__all__ = [
    "GOLD_SEED",
    "PREDICTED_SEED",
    "ActionCheck",
    "AssertionCheck",
    "CommunicateCheck",
    "DbCheck",
    "EnvironmentResult",
    "Tau2Verdict",
    "assertion_holds",
    "check_actions",
    "check_communicate",
    "check_environment",
    "compare_databases",
    "evaluate",
    "gold_environment",
    "replay_trajectory",
    "trajectory_calls",
    "verdict_components",
]
