"""A small trial loop for the retail tests: agent <-> environment tools <-> scripted
user, graded by the rule graders. It mirrors the orchestrator's message protocol
(tool results as ``role="tool"`` messages, errors prefixed ``Error:``) without the
runner's scheduling, store and spans, so domain tests stay fast and self-contained."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from assay.agents.base import AgentContext
from assay.core.messages import Message
from assay.core.results import GradeResult, Outcome, reward_of
from assay.core.task import Task
from assay.core.transcript import Transcript
from assay.domains.retail import DOMAIN
from assay.envs.state import state_hash
from assay.envs.state_diff import diff
from assay.envs.tools import ToolError
from assay.graders import build_grader, grade_trial, process_metrics
from assay.users.scripted import ScriptedUser
from assay.users.simulator import STOP_TOKENS


@dataclass
class TrialOutcome:
    task: Task
    reward: int | None
    termination: str
    messages: list[Message]
    grades: list[GradeResult] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    outcome: Outcome | None = None

    def failures(self) -> list[str]:
        return [f"{g.grader}: {g.reason}" for g in self.grades if g.gating and not g.passed]

    def dialogue(self) -> str:
        lines = []
        for m in self.messages:
            if m.role == "tool":
                lines.append(f"    [{m.name}{' ERROR' if m.error else ''}] {m.content[:160]}")
            elif m.tool_calls:
                lines.extend(f"  agent -> {c.name}({c.arguments})" for c in m.tool_calls)
            else:
                lines.append(f"{m.role}: {m.content}")
        return "\n".join(lines)


async def run_trial(
    task: Task,
    agent_cls: type,
    seed: int = 0,
    options: dict[str, Any] | None = None,
    max_turns: int = 30,
    max_tool_calls: int = 30,
) -> TrialOutcome:
    """Run ``task`` once with a fresh ``agent_cls`` and grade it."""
    assert task.as_of is not None
    env = DOMAIN.environment(task, task.as_of)
    env.reset(task.initial_state.seed)
    initial = env.snapshot()
    agent = agent_cls(
        AgentContext(
            seed, DOMAIN.name, DOMAIN.policy, task.as_of, task.timezone or "UTC", params=dict(options or {})
        )
    )
    user = ScriptedUser(task.user)
    tools = env.tools("agent")
    messages: list[Message] = []
    turns = calls = 0
    termination = "max_turns"

    async def user_says() -> str | None:
        nonlocal turns
        turn = await user.reply([m for m in messages if m.role in ("user", "assistant")])
        messages.append(Message("user", turn.text))
        turns += 1
        token = turn.stop_token
        return STOP_TOKENS[token] if token else None

    stop = await user_says()
    while stop is None and turns < max_turns:
        move = await agent.respond(messages, tools)
        if move.tool_calls:
            messages.append(Message("assistant", move.text, tool_calls=list(move.tool_calls)))
            for call in move.tool_calls:
                calls += 1
                try:
                    content, error = env.call(call.name, call.arguments), False
                except ToolError as exc:
                    content, error = f"Error: {exc}", True
                messages.append(Message("tool", content, tool_call_id=call.id, name=call.name, error=error))
            if calls >= max_tool_calls:
                stop = "max_tool_calls"
            continue
        messages.append(Message("assistant", move.text))
        turns += 1
        if turns >= max_turns:
            break
        stop = await user_says()
    termination = stop or termination
    final = env.snapshot()
    outcome = Outcome(
        termination, state_hash(initial), state_hash(final), diff(initial, final), final_state=final
    )  # type: ignore[arg-type]
    transcript = Transcript(messages)
    graders = [build_grader(spec, DOMAIN) for spec in task.graders]
    grades = await grade_trial(graders, task, transcript, outcome)
    return TrialOutcome(
        task,
        reward_of(termination, grades),
        termination,
        messages,
        grades,
        process_metrics(task, transcript),
        outcome,
    )


def run_all(
    tasks: list[Task], agent_cls: type, seeds: range | list[int], options: dict[str, Any] | None = None
) -> list[TrialOutcome]:
    """Every task once per agent seed."""

    async def go() -> list[TrialOutcome]:
        return [await run_trial(t, agent_cls, s, options) for t in tasks for s in seeds]

    return asyncio.run(go())
