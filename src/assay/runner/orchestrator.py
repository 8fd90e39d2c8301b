"""One trial: the turn loop agent <-> tools <-> user, limits, termination, grading.

``run_trial`` takes a self-contained, picklable :class:`TrialJob` (so any executor,
local or remote, can run it) and returns the finished :class:`TrialResult`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from ..agents.adapters import to_turn
from ..agents.base import Agent, AgentContext, is_oracle
from ..agents.specs import agent_factory
from ..core.hashing import derive_seed
from ..core.messages import Message, ToolCall
from ..core.results import (
    EXCLUDED_TERMINATIONS,
    NORMAL_TERMINATIONS,
    Config,
    GradeResult,
    Outcome,
    Termination,
    Trial,
    TrialResult,
    reward_of,
)
from ..core.task import Limits, Task
from ..core.transcript import Transcript
from ..envs.environment import Environment
from ..envs.faults import FAULT_ATTRIBUTE, wrap_with_faults
from ..envs.perturb import wrap_with_perturbation
from ..envs.registry import DomainRef, get_domain
from ..envs.replay import REPLAY_ATTRIBUTE, with_replay
from ..envs.state import Snapshot, State, diff, state_hash
from ..envs.tools import InvalidToolCall, ToolError
from ..errors import AssayError, HarnessError
from ..graders.base import GraderSettings
from ..graders.process import process_metrics
from ..graders.registry import build_grader, grade_trial
from ..llm.deadline import TrialClock, use_clock
from ..llm.errors import BudgetExceeded, ModelUnavailable
from ..llm.meter import CallRecord, Meter, use_meter
from ..llm.spec import PROVIDERS
from ..users.llm import simulator_errors
from ..users.simulator import STOP_TOKENS, UserContext, UserSimulator
from ..users.specs import user_factory
from .attribution import model_category, time_limit_end
from .prompts import PromptSnapshots
from .scrubbing import scrub_trial
from .tracing import Tracer


@dataclass(frozen=True)
class RunContext:
    """What every trial of one run shares, by value (picklable for remote executors)."""

    run_id: str
    config: Config
    suite_name: str = ""
    suite_version: str = ""
    suite_hash: str = ""
    domain: DomainRef = None
    git_commit: str | None = None
    model_options: dict[str, Any] = field(default_factory=dict)
    """Settings of the agent's and user's model clients (not under test)."""
    judges: tuple[str, ...] = ()
    judge_options: dict[str, Any] = field(default_factory=dict)
    faults: dict[str, Any] | None = None  # a FaultPlan as JSON (assay.envs.faults)
    secrets: tuple[str, ...] = ()
    """Credential values of the run's options: scrubbed from everything a trial records."""
    config_hash: str = ""
    """``config.hash``, computed once for the run (empty: computed for each trial)."""


@dataclass
class TrialJob:
    """Everything needed to run one trial, by value: the run's context, the concrete
    task, which trial of it, and its limits."""

    run: RunContext
    task: Task
    trial: Trial
    limits: Limits
    task_hash: str = ""


def history_messages(task: Task) -> list[Message]:
    """A task's prior conversation (``initial_state.history``) as transcript messages."""
    return [
        Message(
            h.role,
            h.content,
            tool_calls=[ToolCall(c.id, c.name, dict(c.args), c.requestor) for c in h.tool_calls],
            tool_call_id=h.tool_call_id,
            error=h.error,
        )
        for h in task.initial_state.history
    ]


class _Stop(Exception):
    def __init__(
        self,
        termination: Termination,
        error: str | None = None,
        root_cause: str | None = None,
        category: str | None = None,
    ):
        self.termination, self.error, self.root_cause = termination, error, root_cause
        self.category = category


@lru_cache(maxsize=64)
def _agent_factory(spec: str):
    return agent_factory(spec)


def _classify(exc: BaseException, where: str) -> _Stop:
    """Map an exception raised by a participant to how the trial ends."""
    if isinstance(exc, AssayError):  # a usage error (e.g. a cassette that does not match): stop the run
        raise exc
    if isinstance(exc, ModelUnavailable):
        return _Stop("harness_error", f"model unavailable: {exc}", "MODEL", model_category(exc))
    if isinstance(exc, HarnessError):
        return _Stop("harness_error", f"{type(exc).__name__}: {exc}", getattr(exc, "root_cause", "HARNESS"))
    if isinstance(exc, BudgetExceeded):
        return _Stop("budget", str(exc), "AGENT")
    if where == "agent":
        return _Stop("agent_error", f"{type(exc).__name__}: {exc}", "AGENT")
    if where == "user":
        return _Stop("harness_error", f"user simulator failed: {type(exc).__name__}: {exc}", "USER")
    return _Stop("environment_error", f"{type(exc).__name__}: {exc}", "ENV")


class _Conversation:
    """The mutable state of one trial's dialogue."""

    def __init__(
        self, job: TrialJob, env: Environment, agent: Agent, user: UserSimulator, tracer: Tracer, meter: Meter
    ):
        self.job, self.env, self.agent, self.user, self.tracer = job, env, agent, user, tracer
        self.meter = meter
        self.messages: list[Message] = history_messages(job.task)
        self.turns = 0
        self.tool_calls = 0
        self.tools = env.tools("agent")

    def user_view(self) -> list[Message]:
        """What the user sees: its own messages (with its tool calls), the results of
        its tool calls, and the agent's messages to it (the agent's tool traffic is the
        agent's business)."""
        own = {c.id for m in self.messages if m.role == "user" for c in m.tool_calls}
        return [
            m
            for m in self.messages
            if m.role == "user"
            or (m.role == "assistant" and m.content)
            or (m.role == "tool" and m.tool_call_id in own)
        ]

    async def user_turn(self) -> None:
        """The user's turn. Dual control: a reply with tool calls is recorded with them,
        the calls run on the user's side, and the user, seeing their results, replies
        again; the turn ends with a reply without tool calls (or a stop token)."""
        while True:
            span = self.tracer.start("user", "user")
            try:
                with use_meter(self.meter, "user"):
                    turn = await self.user.reply(self.user_view())
                self.check_budget()
            except Exception as exc:
                self.tracer.end(span, repr(exc))
                raise _classify(exc, "user") from exc
            self.tracer.end(span)
            token = turn.stop_token
            if not turn.tool_calls:
                self.messages.append(Message("user", turn.text))
                self.turns += 1
                if token is not None:
                    raise _Stop(STOP_TOKENS[token])  # type: ignore[arg-type]
                return
            calls = [replace(c, requestor="user") for c in turn.tool_calls]
            allowed = calls[: max(0, self.job.limits.max_tool_calls - self.tool_calls)]
            self.messages.append(Message("user", turn.text, tool_calls=allowed))
            for call in allowed:
                self.tool_calls += 1
                self.messages.append(await self.execute(call, caller="user"))
            if len(allowed) < len(calls):
                raise _Stop("max_tool_calls")
            if token is not None:
                raise _Stop(STOP_TOKENS[token])  # type: ignore[arg-type]

    async def execute(self, call: ToolCall, caller: str = "agent") -> Message:
        span = self.tracer.start("tool", call.name, caller=caller, args=call.arguments, call_id=call.id)
        error = False
        acall = getattr(self.env, "acall", None)  # environments whose tools block (sandboxes)
        try:
            if acall is not None:
                content = await acall(call.name, call.arguments, for_=caller)
            else:
                content = self.env.call(call.name, call.arguments, for_=caller)  # type: ignore[arg-type]
        except InvalidToolCall as exc:
            content, error = f"Error: {exc}", True
            span.attributes["error"] = "invalid"
        except ToolError as exc:
            content, error = f"Error: {exc}", True
            span.attributes["error"] = "refused"
        except Exception as exc:
            self.tracer.end(span, repr(exc))
            raise _classify(exc, "environment") from exc
        fault = getattr(self.env, "last_fault", None)  # an injected fault: the agent's to handle
        if fault is not None:
            span.attributes[FAULT_ATTRIBUTE] = fault
        replayed = getattr(self.env, "last_replay", None)  # a replay environment: recorded or not
        if replayed is not None:
            span.attributes[REPLAY_ATTRIBUTE] = replayed
        self.tracer.end(span)
        return Message("tool", content, tool_call_id=call.id, name=call.name, error=error)

    def check_budget(self) -> None:
        limits = self.job.limits
        if limits.max_tokens is not None or limits.max_cost_usd is not None:
            self.meter.check(limits.max_tokens, limits.max_cost_usd)

    def reject(self, call: ToolCall, problem: str) -> Message:
        """Answer a tool call whose arguments the model garbled, without running it."""
        span = self.tracer.start(
            "tool", call.name, caller="agent", args=call.arguments, error="invalid", call_id=call.id
        )
        span.attributes["malformed"] = problem
        self.tracer.end(span)
        content = f"Error: the arguments of this {call.name} call are not valid JSON ({problem})"
        return Message("tool", content, tool_call_id=call.id, name=call.name, error=True)

    async def agent_turn(self) -> None:
        max_calls = self.job.limits.max_tool_calls
        while True:
            span = self.tracer.start("agent", "respond")
            try:
                with use_meter(self.meter, "agent"):
                    turn = to_turn(await self.agent.respond(self.messages, self.tools))
                self.check_budget()
            except Exception as exc:
                self.tracer.end(span, repr(exc))
                raise _classify(exc, "agent") from exc
            span.attributes["respond_s"] = self.tracer.now() - span.start  # the step spans its tool calls
            if not turn.tool_calls:
                self.messages.append(Message("assistant", turn.text))
                self.turns += 1
                self.tracer.end(span)
                return
            allowed = turn.tool_calls[: max(0, max_calls - self.tool_calls)]
            if len(allowed) < len(turn.tool_calls):
                span.attributes["dropped_tool_calls"] = len(turn.tool_calls) - len(allowed)
            self.messages.append(Message("assistant", turn.text, tool_calls=list(allowed)))
            for call in allowed:
                self.tool_calls += 1
                if call.id in turn.invalid:
                    self.messages.append(self.reject(call, turn.invalid[call.id]))
                else:
                    self.messages.append(await self.execute(call))
            self.tracer.end(span)
            if len(allowed) < len(turn.tool_calls):
                raise _Stop("max_tool_calls")

    def agent_speaks_next(self) -> bool:
        """Who opens: after a prior conversation, whoever's turn it is; else the task's
        first speaker (an agent with a fixed greeting has said it already)."""
        task = self.job.task
        if self.messages:
            last = self.messages[-1]
            return not (last.role == "assistant" and not last.tool_calls)
        if task.first_speaker == "agent":
            if task.greeting is None:
                return True
            self.messages.append(Message("assistant", task.greeting))
            self.turns += 1
        return False

    async def run(self) -> None:
        max_turns = self.job.limits.max_turns
        if not self.agent_speaks_next():
            await self.user_turn()
        while True:
            if self.turns >= max_turns:
                raise _Stop("max_turns")
            await self.agent_turn()
            if self.turns >= max_turns:
                raise _Stop("max_turns")
            await self.user_turn()


@dataclass
class _Trial:
    """The parts of one trial as they come into being (any may be missing when the
    trial ended early) and how it ended."""

    job: TrialJob
    started: datetime
    tracer: Tracer
    meter: Meter
    env: Environment | None = None
    initial: State | Snapshot | None = None
    conv: _Conversation | None = None
    prompt_version: str | None = None
    prompts: PromptSnapshots = field(default_factory=PromptSnapshots)
    termination: Termination = "harness_error"
    error: str | None = None
    root_cause: str | None = None
    category: str | None = None
    clock: TrialClock | None = None

    @property
    def started_iso(self) -> str:
        return self.started.isoformat(timespec="milliseconds")


async def run_trial(job: TrialJob) -> TrialResult:
    """Run one trial to its end and grade it. Never raises for participant failures:
    they become the trial's termination reason."""
    started = datetime.now(timezone.utc)
    tracer = Tracer(job.task.id)
    prompts = PromptSnapshots()
    meter = Meter(on_record=lambda record: _llm_span(tracer, record, started.timestamp(), prompts))
    trial = _Trial(job, started, tracer, meter, prompt_version=job.run.config.prompt_version, prompts=prompts)
    trial.clock = TrialClock(job.limits.timeout_s)
    try:
        with use_meter(meter):  # the trial's calls: each turn then sets only its role
            await _play(trial)
    except _Stop as stop:
        trial.termination, trial.error, trial.root_cause = stop.termination, stop.error, stop.root_cause
        trial.category = stop.category
    except (asyncio.TimeoutError, TimeoutError):
        _timed_out(trial)
    except AssayError:
        raise
    except Exception as exc:  # a bug of the harness itself: record it, keep the run going
        trial.termination, trial.error, trial.root_cause = (
            "harness_error",
            f"{type(exc).__name__}: {exc}",
            "HARNESS",
        )
    transcript = Transcript(
        trial.conv.messages if trial.conv else [],
        tracer.spans,
        trial.started_iso,
        prompts.texts,
    )
    outcome = _outcome(trial)
    grades = await _grade(trial, transcript, outcome)
    if job.run.secrets:  # an endpoint that rejects a key may quote it back
        scrub_trial(transcript, outcome, grades, job.run.secrets)
    return _result(trial, transcript, outcome, grades, tracer.close())


async def _play(trial: _Trial) -> None:
    """Set the world up (environment, agent, user) and run the conversation."""
    job, task = trial.job, trial.job.task
    run = job.run
    domain = get_domain(run.domain)
    now = task.as_of or trial.started.replace(tzinfo=None)
    env = wrap_with_faults(domain.environment(task, now), run.faults, job.trial.seed)
    env = with_replay(env, task)  # a conversation imported from traces: recorded tool outputs
    env = wrap_with_perturbation(env, task, job.trial.seed)  # tool-side perturbations (--perturb)
    env.reset(task.initial_state.seed)
    trial.env, trial.initial = env, env.snapshot()
    try:
        factory = _agent_factory(run.config.agent)
        agent = factory(
            AgentContext(
                job.trial.seed,
                domain.name,
                domain.policy,
                now,
                task.timezone or "UTC",
                params=dict(run.config.params),
                flags=dict(run.config.flags),
                model_options=dict(run.model_options),
                task=task if is_oracle(factory) else None,
                trial=job.trial.index,
            )
        )
    except Exception as exc:
        raise _classify(exc, "agent") from exc
    trial.prompt_version = getattr(agent, "prompt_version", None) or trial.prompt_version
    trial.prompts.declare("agent", agent, trial.prompt_version)
    user = user_factory(run.config.user)(
        UserContext(
            task,
            derive_seed(job.trial.seed, "user"),
            env.tools("user"),
            domain.policy,
            model_options=dict(run.model_options),
            trial=job.trial.index,
        )
    )
    trial.prompts.declare("user", user)
    trial.conv = _Conversation(job, env, agent, user, trial.tracer, trial.meter)
    await _within(trial.conv.run(), job.limits.timeout_s, trial.clock)


def _timed_out(trial: _Trial) -> None:
    """The time limit ended the trial: the agent's timeout, unless a model call was
    in flight (failing, waiting to retry, or unanswered): then the model's."""
    ended = time_limit_end(trial.job.limits.timeout_s, trial.clock)
    trial.termination, trial.error, trial.root_cause, trial.category = ended


def _outcome(trial: _Trial) -> Outcome:
    outcome = Outcome(trial.termination, error=trial.error)
    if trial.env is not None and trial.initial is not None:
        final = trial.env.snapshot()
        outcome.initial_hash, outcome.final_hash = state_hash(trial.initial), state_hash(final)
        outcome.diff, outcome.final_state = diff(trial.initial, final), final
    return outcome


async def _grade(trial: _Trial, transcript: Transcript, outcome: Outcome) -> list[GradeResult]:
    """Every grader's verdict; none when the trial ended on an error not the agent's."""
    if trial.termination in EXCLUDED_TERMINATIONS:
        return []
    run, task = trial.job.run, trial.job.task
    span = trial.tracer.start("grader", "grading")
    with use_meter(trial.meter, "judge"):
        settings = GraderSettings(tuple(run.judges), dict(run.judge_options))
        domain = get_domain(run.domain)
        graders = [build_grader(g, domain, settings) for g in task.graders]
        try:
            grades = await grade_trial(graders, task, transcript, outcome)
        except HarnessError as exc:  # e.g. the sandbox a grader runs tests in cannot start
            ended = _classify(exc, "grader")
            trial.termination, trial.error, trial.root_cause = (
                ended.termination,
                ended.error,
                ended.root_cause,
            )
            outcome.termination, outcome.error = trial.termination, trial.error
            grades = []
    trial.tracer.end(span)
    return grades


def _verdict(trial: _Trial, transcript: Transcript, grades: list[GradeResult]) -> tuple[Any, ...]:
    """(reward, error category, root cause) of a graded trial."""
    reward = reward_of(trial.termination, grades)
    failed = next((g for g in grades if g.gating and g.passed is False), None)
    category = failed.category if failed else None
    if reward == 0 and failed is None and trial.termination not in NORMAL_TERMINATIONS:
        category = trial.termination
    root_cause = trial.root_cause
    env, user_spec = trial.env, trial.job.run.config.user
    llm_user = user_spec.partition(":")[0] in PROVIDERS  # scripted and replayed users: by design
    if env is not None and trial.conv is not None and llm_user:
        sim_errors = simulator_errors(trial.job.task.user, transcript, env.write_tools())
        if sim_errors and reward is not None:  # the simulated user failed, not the agent
            reward, root_cause, category = None, "USER", "simulator_error:" + ",".join(sim_errors)
    if reward is None and root_cause is None:
        root_cause = "GRADER"
    elif reward == 0 and root_cause is None:
        root_cause = "AGENT"
    return reward, category, (root_cause if reward != 1 else None)


def _result(
    trial: _Trial, transcript: Transcript, outcome: Outcome, grades: list[GradeResult], latency: float
) -> TrialResult:
    job, task, run = trial.job, trial.job.task, trial.job.run
    reward, category, root_cause = _verdict(trial, transcript, grades)
    category = category or trial.category
    return TrialResult(
        run_id=run.run_id,
        task_id=task.id,
        trial_index=job.trial.index,
        seed=job.trial.seed,
        config_hash=run.config_hash or run.config.hash,
        reward=reward,
        termination=trial.termination,
        grades=grades,
        metrics=process_metrics(task, transcript),
        model_id=run.config.model,
        prompt_version=trial.prompt_version,
        suite_name=run.suite_name,
        suite_version=run.suite_version,
        suite_hash=run.suite_hash,
        task_hash=job.task_hash or task.input_hash(),
        as_of=task.as_of.isoformat() if task.as_of else None,
        timezone=task.timezone,
        env_version=trial.env.version if trial.env is not None else "",
        error_category=category,
        root_cause=root_cause,
        latency_s=latency,
        started_at=transcript.started_at,
        ended_at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        git_commit=run.git_commit,
        transcript=transcript,
        outcome=outcome,
        **_usage_fields(trial.meter),
    )


async def _within(coro: Any, seconds: float, clock: TrialClock | None = None) -> None:
    """Run ``coro`` with a deadline, in the current task when the runtime allows it
    (``asyncio.timeout``, Python 3.11+) rather than in a new one. Model calls inside
    see ``clock``: their waits on a failing endpoint push the deadline back, and their
    requests time out before it (see :mod:`assay.llm.deadline`)."""
    clock = clock or TrialClock(seconds)
    timeout = getattr(asyncio, "timeout", None)
    with use_clock(clock):
        if timeout is None:  # Python 3.10: a fixed deadline
            clock.bind(None)
            await asyncio.wait_for(coro, seconds)
            return
        async with timeout(seconds) as t:
            clock.bind(t)
            await coro


def _llm_span(tracer: Tracer, record: CallRecord, epoch: float, prompts: PromptSnapshots) -> None:
    """Each model call becomes an ``llm`` span with its tokens, cost and retries, under
    the step, user turn or grading that made it."""
    start = max(0.0, record.started_at - epoch)
    span = tracer.add("llm", record.model, start, max(start, record.ended_at - epoch), role=record.role)
    u = record.usage
    span.attributes.update(
        input_tokens=u.input_tokens if u else None,
        output_tokens=u.output_tokens if u else None,
        cache_read_tokens=u.cache_read_tokens if u else None,
        cost_usd=record.cost_usd,
        retries=record.retries,
        waited_s=round(record.waited_s, 3) if record.waited_s else None,
        cached=record.cached,
        source=record.source,
        latency_s=record.latency_s,
        ttft_s=record.ttft_s,
        **prompts.attributes(record),
    )
    span.error = record.error


def _usage_fields(meter: Meter) -> dict[str, Any]:
    """Tokens and cost of the trial (None when no call reported them), by role too."""
    if meter.calls == 0:  # no model call (scripted and rule-based participants)
        return {}
    total = meter.totals()
    by_role = {
        role: {
            "calls": t.calls,
            "input_tokens": t.input_tokens,
            "output_tokens": t.output_tokens,
            "cache_read_tokens": t.cache_read_tokens,
            "cost_usd": t.cost_usd,
            "retries": t.retries,
            "cached_calls": t.cached_calls,
            "missing_usage": t.missing_usage,
        }
        for role, t in meter.by_role().items()
    }
    with_usage = total.calls > total.missing_usage
    return {
        "input_tokens": total.input_tokens if with_usage else None,
        "output_tokens": total.output_tokens if with_usage else None,
        "cost_usd": total.cost_usd,
        "usage": by_role,
    }
