"""``tests``: run tests against the trial's final workspace, in the sandbox.

SWE-bench style: ``fail_to_pass`` are the tests the change must make pass (they fail
before it), ``pass_to_pass`` the tests it must not break. Each entry is a pytest node
id (``tests/test_calc.py::test_median``; a file or folder means every test in it) or a
plain assertion script (``{script: check.py}``, passing when it exits 0)::

    graders:
      - tests:
          fail_to_pass: [tests/test_stats.py::test_median_even]
          pass_to_pass: [tests/test_stats.py::test_median_odd, {script: checks/smoke.py}]

The workspace is the trial's end state (its ``files`` table, see
:mod:`assay.envs.sandbox.workspace`), plus ``files`` (hidden tests the agent never saw;
they replace any file of the same name) and, with ``answer``, the agent's final answer
written to a file (single-shot code tasks: the code block of its last answer that has
one, after ``prefix``). The score is the share of listed tests that pass (also in the
metrics, per list); the grader passes only when all pass. A sandbox that cannot run is
a harness error, never the agent's failure.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..core.results import GradeResult, Outcome
from ..core.task import Task
from ..core.transcript import Transcript
from ..envs.sandbox import Sandbox, SandboxLimits, clean_path, file_rows, materialize
from ..envs.sandbox.workspace import new_workspace, remove_workspace
from .base import Grader, Params
from .testrun import TestOutcome, run_pytest, run_script

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


class ScriptTest(BaseModel):
    """A plain assertion script: ``python script args`` must exit 0."""

    model_config = ConfigDict(extra="forbid")
    script: str
    args: list[str] = Field(default_factory=list)
    name: str | None = None

    @field_validator("script")
    @classmethod
    def _relative(cls, value: str) -> str:
        return clean_path(value)

    @property
    def label(self) -> str:
        return self.name or self.script


TestRef = str | ScriptTest


class AnswerFile(BaseModel):
    """Where the agent's answer goes: ``prefix + code + suffix`` written to ``path``.
    ``extract: code`` takes the code block of the last answer that has one (else the
    whole last answer); ``raw`` the whole last answer."""

    model_config = ConfigDict(extra="forbid")
    path: str = "solution.py"
    prefix: str = ""
    suffix: str = ""
    extract: Literal["code", "raw"] = "code"

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        return clean_path(value)


class TestsParams(Params):
    fail_to_pass: list[TestRef] = Field(default_factory=list)
    pass_to_pass: list[TestRef] = Field(default_factory=list)
    files: dict[str, str] = Field(default_factory=dict)
    answer: AnswerFile | None = None
    timeout_s: float = Field(120.0, gt=0, le=3600, description="per pytest run or script")
    memory_mb: int | None = Field(None, ge=32)
    pytest_args: list[str] = Field(default_factory=list)

    @field_validator("files")
    @classmethod
    def _relative_files(cls, value: dict[str, str]) -> dict[str, str]:
        return {clean_path(k): v for k, v in value.items()}

    @field_validator("fail_to_pass", "pass_to_pass")
    @classmethod
    def _ids(cls, value: list[TestRef]) -> list[TestRef]:
        for ref in value:
            if isinstance(ref, str) and (not ref.strip() or ref.startswith(("/", "-"))):
                raise ValueError(f"{ref!r} is not a pytest node id relative to the workspace")
        return value

    @model_validator(mode="after")
    def _some_test(self) -> TestsParams:
        if not self.fail_to_pass and not self.pass_to_pass:
            raise ValueError("list at least one test in fail_to_pass or pass_to_pass")
        return self


def extract_code(texts: list[str], mode: str = "code") -> str | None:
    """The agent's code: the first code block (a ``python`` one preferred) of its last
    answer that has a code block, else its last answer; None when it said nothing."""
    if not texts:
        return None
    if mode == "code":
        for text in reversed(texts):
            blocks = _FENCE.findall(text)
            if blocks:
                python = [body for lang, body in blocks if lang.lower() in ("python", "py", "python3")]
                return (python or [blocks[0][1]])[0]
    return texts[-1]


class TestsGrader(Grader[TestsParams]):
    kind = "tests"
    Params = TestsParams
    __test__ = False  # not a pytest test class

    def __init__(self, *args: Any, sandbox: Sandbox | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        p = self.params
        self.limits = SandboxLimits().merged(timeout_s=p.timeout_s, memory_mb=p.memory_mb)
        self.sandbox = sandbox or Sandbox(self.limits)

    async def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        p = self.params
        code: str | None = None
        if p.answer is not None:
            code = extract_code(transcript.agent_texts(), p.answer.extract)
            if code is None:
                return self.result(False, "the agent gave no answer", score=0.0, category="no_answer")
        root = new_workspace("assay-grade-")
        try:
            return await asyncio.to_thread(self._grade_in, root, outcome, code)
        finally:
            remove_workspace(root)

    def _grade_in(self, root: Path, outcome: Outcome, code: str | None) -> GradeResult:
        p = self.params
        materialize(file_rows(outcome.final_state), root)
        if p.answer is not None and code is not None:
            prefix = p.answer.prefix
            if prefix and not prefix.endswith("\n") and not code[:1].isspace():
                prefix += "\n"
            self._write(root, p.answer.path, prefix + code + p.answer.suffix)
        for path, content in p.files.items():
            self._write(root, path, content)
        ids = list(dict.fromkeys(r for r in [*p.fail_to_pass, *p.pass_to_pass] if isinstance(r, str)))
        by_id = {o.test: o for o in run_pytest(self.sandbox, root, ids, self.limits, p.pytest_args)}
        return self._verdict(self._run(root, p.fail_to_pass, by_id), self._run(root, p.pass_to_pass, by_id))

    @staticmethod
    def _write(root: Path, rel: str, content: str) -> None:
        """Write a grader's file over whatever the agent left on its path (a file, a
        folder, a symbolic link, or a link or file where a parent folder should be)."""
        here = root
        for part in Path(rel).parts:
            here = here / part
            if here.is_symlink() or (here.exists() and not here.is_dir()):
                here.unlink()
            elif here.is_dir() and here == root / rel:
                remove_workspace(here)
        materialize([{"path": rel, "content": content}], root)

    def _run(self, root: Path, refs: list[TestRef], by_id: dict[str, TestOutcome]) -> list[TestOutcome]:
        """Outcomes of ``refs``: pytest ids from the one pytest run, scripts run now."""
        out = []
        for ref in refs:
            if isinstance(ref, str):
                out.append(by_id[ref])
            else:
                out.append(run_script(self.sandbox, root, ref.script, ref.args, self.limits, ref.label))
        return out

    def _verdict(self, f2p: list[TestOutcome], p2p: list[TestOutcome]) -> GradeResult:
        fixed = [o for o in f2p if o.passed]
        still = [o for o in f2p if not o.passed]
        broken = [o for o in p2p if not o.passed]
        total = len(f2p) + len(p2p)
        passed = len(fixed) + len(p2p) - len(broken)
        metrics = {
            "tests_passed": float(passed),
            "tests_total": float(total),
            "fail_to_pass_passed": float(len(fixed)),
            "fail_to_pass_total": float(len(f2p)),
            "pass_to_pass_passed": float(len(p2p) - len(broken)),
            "pass_to_pass_total": float(len(p2p)),
        }
        parts = []
        if f2p:
            parts.append(f"{len(fixed)}/{len(f2p)} FAIL_TO_PASS now pass")
        if p2p:
            parts.append(f"{len(p2p) - len(broken)}/{len(p2p)} PASS_TO_PASS still pass")
        if still:
            parts.append("still failing: " + _listing(still))
        if broken:
            parts.append("broken: " + _listing(broken))
        ok = not still and not broken
        category = None
        if not ok:
            timed = any(o.detail.startswith("timed out") for o in [*still, *broken])
            category = "timeout" if timed else ("broke_tests" if broken else "tests_failed")
        return self.result(ok, "; ".join(parts), score=passed / total, metrics=metrics, category=category)


def _listing(outcomes: list[TestOutcome], limit: int = 3) -> str:
    shown = ", ".join(f"{o.test} ({o.detail})" for o in outcomes[:limit])
    return shown + (f" and {len(outcomes) - limit} more" if len(outcomes) > limit else "")
