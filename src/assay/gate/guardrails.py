"""Rollout checks: the primary metric must improve, guardrail metrics must not get
worse beyond their margins.

A gray rollout (or an experiment arm) ships when the metric it is for improves *and*
nothing else it could break got worse by more than the business accepts. Both are
one-sided tests with the burden of proof on the candidate, paired by task against the
baseline (:mod:`.relative` has the test statistics):

- ``primary``: superiority. For ``quality`` Tango's paired score test with margin 0
  (H0: the candidate solves no more tasks than the baseline); for other metrics the
  sign-flip test of the differences shifted by ``min_improvement``. Passes when H0 is
  rejected at alpha.
- ``guardrails``: non-inferiority, exactly as a relative check with
  ``test: noninferiority``. Each must pass; no multiplicity adjustment is needed (all
  must hold at once, an intersection-union test).
"""

from __future__ import annotations

from typing import Any

from ..compare import Pairing, direction_of
from ..errors import AssayError
from .policy import GatePolicy, PrimaryCheck
from .relative import _continuous, _moved, _quality, relative_checks
from .verdict import CheckResult


def primary_check(policy: GatePolicy, check: PrimaryCheck, pairing: Pairing) -> CheckResult:
    alpha = check.alpha or policy.alpha
    direction = check.direction or direction_of(check.metric)
    where = policy.where("primary")
    if direction is None:
        raise AssayError(
            f"{where}: primary.direction: assay does not know whether higher or lower {check.metric} is "
            "better; add direction: higher or direction: lower"
        )
    sign = 1.0 if direction == "higher" else -1.0
    name = check.name or f"primary: {check.metric} improves"
    threshold = f"superiority by more than {check.min_improvement:g}, alpha {alpha:g}"
    s: dict[str, Any] | str
    if check.metric == "quality":
        s = _quality(pairing, 0.0, 1 - 2 * alpha)
        s["margin"] = 0.0
    else:
        s = _continuous(pairing, check.metric, sign, -check.min_improvement, None, 1 - 2 * alpha)
    if isinstance(s, str):
        return CheckResult(
            "primary", name, "fail", f"cannot check {check.metric}: {s}", None, threshold, where
        )
    gain = s["delta"] if direction == "higher" else -s["delta"]
    p = float(s["p_noninferior"])  # margin 0 (or -min_improvement): H0 "not better"
    passed = p < alpha
    moved = _moved(check.metric, s["a"], s["b"], -gain, check.min_improvement)
    moved = moved.replace("; allowed ", "; must gain more than ")
    why = "an improvement is shown" if passed else "no improvement is shown"
    details = {k: v for k, v in s.items() if k != "margin"} | {"p_superior": p, "units": len(pairing.units)}
    return CheckResult(
        "primary",
        name,
        "pass" if passed else "fail",
        f"{moved}: {why} (p={p:.3g})",
        s["delta"],
        threshold,
        where,
        details,
    )


def rollout_checks(policy: GatePolicy, run: Any, baseline: Any, pairing: Pairing) -> list[CheckResult]:
    """The primary check (if any) and every guardrail, for ``run`` against ``baseline``."""
    checks = []
    if policy.primary is not None:
        checks.append(primary_check(policy, policy.primary, pairing))
    if policy.guardrails:
        as_relative = policy.model_copy(update={"relative": list(policy.guardrails), "adjust": "none"})
        as_relative._file, as_relative._lines = (
            policy._file,
            {key.replace("guardrails", "relative"): line for key, line in policy._lines.items()},
        )
        for result in relative_checks(as_relative, run, baseline, pairing):
            result.kind = "guardrail"
            result.name = (
                result.name.replace(" vs baseline", "")
                if result.name.endswith(" vs baseline")
                else result.name
            )
            result.name = f"guardrail: {result.name}"
            checks.append(result)
    return checks
