"""``env_assert``: the domain's assertion functions hold on the end state (tau2's
ENV_ASSERTION). Each assertion names a function of the domain
(:class:`~assay.envs.capabilities.AssertionDomain`: a suite module's ``@assertion``
functions, tau2's ``assert_*``), its arguments, the side it belongs to (``requestor``:
``agent`` or ``user``) and the value it must return (``expect``, default true). Every
assertion must hold; ``metrics`` give ``met[i]`` (1/0) for each, in order. An assertion
that cannot run (unknown record, bad arguments) is a grader error, never a pass.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..core.results import GradeResult, Outcome
from ..core.task import Task
from ..core.transcript import Transcript
from ..envs.capabilities import AssertionDomain
from ..envs.environment import Domain
from .base import Grader, Params, PathKey


class EnvAssertionSpec(Params):
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    requestor: Literal["agent", "user"] = "agent"
    expect: bool = True
    message: str | None = None

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        negation = "" if self.expect else "not "
        return f"{negation}{self.requestor}:{self.name}({args})"


class EnvAssertParams(Params):
    assertions: list[EnvAssertionSpec] = Field(default_factory=list)


class EnvAssertGrader(Grader[EnvAssertParams]):
    kind = "env_assert"
    Params = EnvAssertParams

    @classmethod
    def coerce(cls, raw: Any) -> Any:
        if isinstance(raw, list):
            return {"assertions": raw}
        return {} if raw is None else raw

    @classmethod
    def check(cls, params: EnvAssertParams, domain: Domain, task: Task) -> list[tuple[PathKey, str]]:
        if not isinstance(domain, AssertionDomain):
            return [((), f"domain {domain.name!r} has no assertion functions")]
        problems: list[tuple[PathKey, str]] = []
        for i, a in enumerate(params.assertions):
            known = domain.assertion_names(a.requestor)
            if a.name not in known:
                names = ", ".join(known) or "none"
                problems.append(
                    (
                        ("assertions", i, "name"),
                        f"unknown {a.requestor} assertion {a.name!r}; assertions: {names}",
                    )
                )
        return problems

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        final = outcome.final_state
        if final is None:
            return self.skip("no final state was captured for this trial")
        domain = self.domain
        if not isinstance(domain, AssertionDomain):
            return self.skip(f"domain {domain.name!r} has no assertion functions")
        met: list[bool] = []
        for a in self.params.assertions:
            try:
                met.append(domain.check_assertion(final, a.name, a.args, a.requestor) == a.expect)
            except Exception as exc:
                return self.result(
                    None,
                    f"cannot check {a}: {type(exc).__name__}: {exc}",
                    skipped=True,
                    category="grader_error",
                )
        metrics = {f"met[{i}]": float(ok) for i, ok in enumerate(met)}
        failed = [a for a, ok in zip(self.params.assertions, met, strict=True) if not ok]
        if failed:
            said = "; ".join(a.message or f"{a} does not hold" for a in failed)
            return self.result(False, said, category="assertion_failed", metrics=metrics)
        return self.result(True, f"all {len(met)} assertions hold", metrics=metrics)
