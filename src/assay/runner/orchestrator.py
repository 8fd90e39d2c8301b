"""One trial: the turn loop agent <-> tools <-> user, limits, termination, grading.

``run_trial`` takes a self-contained, picklable :class:`TrialJob` (so any executor,
local or remote, can run it) and returns the finished :class:`TrialResult`. The
dialogue itself is :mod:`.conversation`; the record made of it, :mod:`.trial_result`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from ..agents.base import AgentContext, is_oracle
from ..agents.specs import agent_factory
from ..core.hashing import derive_seed
from ..core.results import Config, Trial, TrialResult
from ..core.task import Limits, Task
from ..core.transcript import Transcript
from ..envs.faults import wrap_with_faults
from ..envs.perturb import wrap_with_perturbation
from ..envs.registry import DomainRef, get_domain
from ..envs.replay import with_replay
from ..errors import AssayError
from ..llm.deadline import TrialClock, use_clock
from ..llm.meter import Meter, use_meter
from ..users.simulator import UserContext
from ..users.specs import user_factory
from .attribution import time_limit_end
from .conversation import _classify, _Conversation, _Stop
from .prompts import PromptSnapshots
from .scrubbing import scrub_trial
from .tracing import Tracer
from .trial_result import _grade, _llm_span, _outcome, _result, _Trial


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


@lru_cache(maxsize=64)
def _agent_factory(spec: str):
    return agent_factory(spec)


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
