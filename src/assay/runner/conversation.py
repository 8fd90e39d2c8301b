"""One trial's dialogue: the turn loop agent <-> tools <-> user, its limits (turns,
tool calls, budget), and how an exception of a participant ends the trial."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..agents.adapters import to_turn
from ..agents.base import Agent
from ..core.messages import Message, ToolCall
from ..core.results import Termination
from ..core.task import Task
from ..envs.environment import Environment
from ..envs.faults import FAULT_ATTRIBUTE
from ..envs.replay import REPLAY_ATTRIBUTE
from ..envs.tools import InvalidToolCall, ToolError
from ..errors import AssayError, HarnessError
from ..llm.errors import BudgetExceeded, ModelUnavailable
from ..llm.meter import Meter, use_meter
from ..users.simulator import STOP_TOKENS, UserSimulator
from .attribution import model_category
from .tracing import Tracer

if TYPE_CHECKING:
    from .orchestrator import TrialJob


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
