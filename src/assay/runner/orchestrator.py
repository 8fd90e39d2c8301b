"""One trial: the turn loop agent <-> tools <-> user, limits, termination, grading.

``run_trial`` takes a self-contained, picklable :class:`TrialJob` (so any executor,
local or remote, can run it) and returns the finished :class:`TrialResult`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from ..agents.adapters import to_turn
from ..agents.base import Agent, AgentContext
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
from ..envs.registry import get_domain
from ..envs.state import Snapshot, State, diff, state_hash
from ..envs.tools import InvalidToolCall, ToolError
from ..errors import AssayError, HarnessError
from ..graders.base import GraderSettings
from ..graders.process import process_metrics
from ..graders.registry import build_grader, grade_trial
from ..llm.errors import BudgetExceeded, ModelUnavailable
from ..llm.meter import CallRecord, Meter, use_meter
from ..users.llm import simulator_errors
from ..users.simulator import STOP_TOKENS, UserContext, UserSimulator
from ..users.specs import user_factory
from .tracing import Tracer


@dataclass
class TrialJob:
    """Everything needed to run one trial, by value."""

    run_id: str
    task: Task
    trial: Trial
    limits: Limits
    config: Config
    suite_name: str = ""
    suite_version: str = ""
    suite_hash: str = ""
    domain: str | None = None
    git_commit: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    judges: tuple[str, ...] = ()
    judge_options: dict[str, Any] = field(default_factory=dict)
    faults: dict[str, Any] | None = None  # a FaultPlan as JSON (assay.envs.faults)
    task_hash: str = ""


class _Stop(Exception):
    def __init__(self, termination: Termination, error: str | None = None, root_cause: str | None = None):
        self.termination, self.error, self.root_cause = termination, error, root_cause


@lru_cache(maxsize=64)
def _agent_factory(spec: str):
    return agent_factory(spec)


def _classify(exc: BaseException, where: str) -> _Stop:
    """Map an exception raised by a participant to how the trial ends."""
    if isinstance(exc, AssayError):  # a usage error (e.g. a cassette that does not match): stop the run
        raise exc
    if isinstance(exc, ModelUnavailable):
        return _Stop("harness_error", f"model unavailable: {exc}", "MODEL")
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
        self.messages: list[Message] = []
        self.turns = 0
        self.tool_calls = 0
        self.tools = env.tools("agent")

    def user_view(self) -> list[Message]:
        return [m for m in self.messages if m.role == "user" or (m.role == "assistant" and m.content)]

    async def user_turn(self) -> None:
        span = self.tracer.start("user", "user")
        try:
            with use_meter(self.meter, "user"):
                turn = await self.user.reply(self.user_view())
            self.check_budget()
        except Exception as exc:
            self.tracer.end(span, repr(exc))
            raise _classify(exc, "user") from exc
        self.tracer.end(span)
        for call in turn.tool_calls:  # dual control: the user acts on the world too
            await self.execute(call, caller="user")
        self.messages.append(Message("user", turn.text))
        self.turns += 1
        token = turn.stop_token
        if token is not None:
            raise _Stop(STOP_TOKENS[token])  # type: ignore[arg-type]

    async def execute(self, call: ToolCall, caller: str = "agent") -> Message:
        span = self.tracer.start("tool", call.name, caller=caller, args=call.arguments)
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
        self.tracer.end(span)
        return Message("tool", content, tool_call_id=call.id, name=call.name, error=error)

    def check_budget(self) -> None:
        limits = self.job.limits
        if limits.max_tokens is not None or limits.max_cost_usd is not None:
            self.meter.check(limits.max_tokens, limits.max_cost_usd)

    def reject(self, call: ToolCall, problem: str) -> Message:
        """Answer a tool call whose arguments the model garbled, without running it."""
        span = self.tracer.start("tool", call.name, caller="agent", args=call.arguments, error="invalid")
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
            self.tracer.end(span)
            if not turn.tool_calls:
                self.messages.append(Message("assistant", turn.text))
                self.turns += 1
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
            if len(allowed) < len(turn.tool_calls):
                raise _Stop("max_tool_calls")

    async def run(self) -> None:
        max_turns = self.job.limits.max_turns
        await self.user_turn()
        while True:
            if self.turns >= max_turns:
                raise _Stop("max_turns")
            await self.agent_turn()
            if self.turns >= max_turns:
                raise _Stop("max_turns")
            await self.user_turn()


async def run_trial(job: TrialJob) -> TrialResult:
    """Run one trial to its end and grade it. Never raises for participant failures:
    they become the trial's termination reason."""
    task, trial = job.task, job.trial
    started = datetime.now(timezone.utc)
    tracer = Tracer(task.id)
    domain = get_domain(job.domain)
    now = task.as_of or started.replace(tzinfo=None)
    meter = Meter(on_record=lambda record: _llm_span(tracer, record, started.timestamp()))
    termination: Termination = "harness_error"
    error: str | None = None
    root_cause: str | None = None
    conv: _Conversation | None = None
    env: Environment | None = None
    initial: State | Snapshot | None = None
    prompt_version = job.config.prompt_version
    try:
        env = wrap_with_faults(domain.environment(task, now), job.faults, trial.seed)
        env.reset(task.initial_state.seed)
        initial = env.snapshot()
        try:
            agent = _agent_factory(job.config.agent)(
                AgentContext(
                    trial.seed,
                    domain.name,
                    domain.policy,
                    now,
                    task.timezone or "UTC",
                    options=dict(job.config.params),
                    model_options=dict(job.options),
                )
            )
        except Exception as exc:
            raise _classify(exc, "agent") from exc
        prompt_version = getattr(agent, "prompt_version", None) or prompt_version
        user = user_factory(job.config.user)(
            UserContext(
                task,
                derive_seed(trial.seed, "user"),
                env.tools("user"),
                domain.policy,
                model_options=dict(job.options),
            )
        )
        conv = _Conversation(job, env, agent, user, tracer, meter)
        await _within(conv.run(), job.limits.timeout_s)
    except _Stop as stop:
        termination, error, root_cause = stop.termination, stop.error, stop.root_cause
    except (asyncio.TimeoutError, TimeoutError):
        termination, error = "timeout", f"trial exceeded {job.limits.timeout_s:g} s"
    except AssayError:
        raise
    except Exception as exc:  # a bug of the harness itself: record it, keep the run going
        termination, error, root_cause = "harness_error", f"{type(exc).__name__}: {exc}", "HARNESS"

    transcript = Transcript(
        conv.messages if conv else [], tracer.spans, started.isoformat(timespec="milliseconds")
    )
    outcome = Outcome(termination, error=error)
    if env is not None and initial is not None:
        final = env.snapshot()
        outcome.initial_hash, outcome.final_hash = state_hash(initial), state_hash(final)
        outcome.diff, outcome.final_state = diff(initial, final), final
    grades: list[GradeResult] = []
    if termination not in EXCLUDED_TERMINATIONS:
        span = tracer.start("grader", "grading")
        with use_meter(meter, "judge"):
            settings = GraderSettings(tuple(job.judges), dict(job.judge_options))
            graders = [build_grader(g, domain, settings) for g in task.graders]
            try:
                grades = await grade_trial(graders, task, transcript, outcome)
            except HarnessError as exc:  # e.g. the sandbox a grader runs tests in cannot start
                ended = _classify(exc, "grader")
                termination, error, root_cause = ended.termination, ended.error, ended.root_cause
                outcome.termination, outcome.error = termination, error
        tracer.end(span)
    latency = tracer.close()
    reward = reward_of(termination, grades)
    failed = next((g for g in grades if g.gating and g.passed is False), None)
    category = failed.category if failed else None
    if reward == 0 and failed is None and termination not in NORMAL_TERMINATIONS:
        category = termination
    checked = env is not None and conv is not None and job.config.user != "scripted"  # scripted: by design
    sim_errors = simulator_errors(task.user, transcript, env.write_tools()) if checked and env else []
    if sim_errors and reward is not None:  # the simulated user failed, not the agent
        reward, root_cause, category = None, "USER", "simulator_error:" + ",".join(sim_errors)
    if reward is None and root_cause is None:
        root_cause = "GRADER"
    elif reward == 0 and root_cause is None:
        root_cause = "AGENT"
    return TrialResult(
        run_id=job.run_id,
        task_id=task.id,
        trial_index=trial.index,
        seed=trial.seed,
        config_hash=job.config.hash,
        reward=reward,
        termination=termination,
        grades=grades,
        metrics=process_metrics(task, transcript),
        model_id=job.config.model,
        prompt_version=prompt_version,
        suite_name=job.suite_name,
        suite_version=job.suite_version,
        suite_hash=job.suite_hash,
        task_hash=job.task_hash or task.input_hash(),
        as_of=task.as_of.isoformat() if task.as_of else None,
        timezone=task.timezone,
        env_version=env.version if env is not None else "",
        error_category=category,
        root_cause=root_cause if reward != 1 else None,  # type: ignore[arg-type]
        latency_s=latency,
        started_at=started.isoformat(timespec="milliseconds"),
        ended_at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        git_commit=job.git_commit,
        transcript=transcript,
        outcome=outcome,
        **_usage_fields(meter),
    )


async def _within(coro: Any, seconds: float) -> None:
    """Run ``coro`` with a deadline, in the current task when the runtime allows it
    (``asyncio.timeout``, Python 3.11+) rather than in a new one."""
    timeout = getattr(asyncio, "timeout", None)
    if timeout is None:  # Python 3.10
        await asyncio.wait_for(coro, seconds)
        return
    async with timeout(seconds):
        await coro


def _llm_span(tracer: Tracer, record: CallRecord, epoch: float) -> None:
    """Each model call becomes an ``llm`` span with its tokens, cost and retries."""
    span = tracer.start("llm", record.model, role=record.role)
    span.start = max(0.0, record.started_at - epoch)
    span.end = max(span.start, record.ended_at - epoch)
    u = record.usage
    span.attributes.update(
        input_tokens=u.input_tokens if u else None,
        output_tokens=u.output_tokens if u else None,
        cache_read_tokens=u.cache_read_tokens if u else None,
        cost_usd=record.cost_usd,
        retries=record.retries,
        cached=record.cached,
        source=record.source,
        ttft_s=record.ttft_s,
    )
    span.error = record.error


def _usage_fields(meter: Meter) -> dict[str, Any]:
    """Tokens and cost of the trial (None when no call reported them), by role too."""
    total = meter.totals()
    if total.calls == 0:
        return {}
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
