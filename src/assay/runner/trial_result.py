"""A trial's record from its parts: the parts as they come into being (:class:`_Trial`),
the outcome (final state and diff), the graders' verdicts, the reward and root cause,
the model calls as ``llm`` spans, the usage, and the :class:`TrialResult` they make."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..core.results import (
    EXCLUDED_TERMINATIONS,
    NORMAL_TERMINATIONS,
    GradeResult,
    Outcome,
    Termination,
    TrialResult,
    reward_of,
)
from ..core.transcript import Transcript
from ..envs.environment import Environment
from ..envs.registry import get_domain
from ..envs.state import Snapshot, State, state_hash
from ..envs.state_diff import diff
from ..errors import HarnessError
from ..graders.base import GraderSettings
from ..graders.process import process_metrics
from ..graders.registry import build_grader, grade_trial
from ..llm.deadline import TrialClock
from ..llm.meter import CallRecord, Meter, use_meter
from ..llm.spec import PROVIDERS
from ..users.llm import simulator_errors
from .conversation import _classify, _Conversation
from .prompts import PromptSnapshots
from .tracing import Tracer

if TYPE_CHECKING:
    from .orchestrator import TrialJob


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
