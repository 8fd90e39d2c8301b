"""Planning a non-inferiority decision (guardrails, gray rollouts): how many tasks ×
trials show "the candidate is not worse than the baseline by ``margin``" with the
wanted power, when its true rate is ``baseline + expected`` (default: as good).

- unpaired (two independent runs): trials per arm from
  :func:`assay.stats.sample_size_noninferiority` (Farrington–Manning), turned into
  tasks with the design effect of k correlated trials per task, as in
  :mod:`.planning`;
- paired (both configurations on the same tasks: what the gate's ``quality`` checks
  do): tasks from :func:`assay.stats.sample_size_noninferiority_paired` (Tango's score
  test), which needs the share of tasks the two disagree on.

``alpha`` is one-sided here, as in the gate (``alpha: 0.05`` in a policy).
"""

from __future__ import annotations

import math

from ..errors import AssayError
from ..stats import (
    power_noninferiority,
    power_noninferiority_paired,
    sample_size_noninferiority,
    sample_size_noninferiority_paired,
)
from .planning import Plan, design_effect


def plan_noninferiority(
    baseline: float,
    margin: float,
    expected: float = 0.0,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = False,
    k: int = 1,
    icc: float = 0.5,
    discordance: float | None = None,
    suite_tasks: int | None = None,
) -> Plan:
    if not 0 < margin < 1:
        raise AssayError(f"--margin must be between 0 and 1 (a share of tasks), got {margin}")
    candidate = baseline + expected
    if not 0 <= candidate <= 1:
        raise AssayError(f"--mde {expected} from --baseline {baseline} must stay within [0, 1]")
    if expected <= -margin:
        raise AssayError(
            f"an expected difference of {expected:+g} is a loss beyond the margin {margin:g}: "
            "non-inferiority cannot be shown"
        )
    result = Plan(
        "noninferiority-paired" if paired else "noninferiority",
        baseline,
        expected,
        alpha,
        power,
        k,
        None if paired else icc,
        None,
        suite_tasks=suite_tasks,
        margin=margin,
    )
    result.notes.append(
        f"non-inferiority: shows the candidate is not worse than {baseline:g} by {margin:g} or more "
        f"(one-sided alpha {alpha:g}) when its true rate is {candidate:g}"
    )
    try:
        if paired:
            _paired(result, baseline, candidate, margin, discordance)
        else:
            _unpaired(result, baseline, candidate, margin, icc)
    except ValueError as exc:
        raise AssayError(str(exc)) from None
    return result


def _unpaired(result: Plan, baseline: float, candidate: float, margin: float, icc: float) -> None:
    n = sample_size_noninferiority(baseline, candidate, margin, result.alpha, result.power)
    deff = design_effect(result.k, icc)
    result.trials_per_arm = n
    result.tasks_needed = math.ceil(n * deff / result.k - 1e-9)
    for k in sorted({1, 2, 4, 8, result.k}):
        result.options.append((math.ceil(n * design_effect(k, icc) / k - 1e-9), k))
    if result.suite_tasks:
        n_eff = max(1, math.floor(result.suite_tasks * result.k / deff))
        achieved = power_noninferiority(baseline, candidate, margin, n_eff, result.alpha)
        result.notes.append(
            f"a suite of {result.suite_tasks} tasks × {result.k} has power {achieved:.2f} for this test"
        )


def _paired(
    result: Plan, baseline: float, candidate: float, margin: float, discordance: float | None
) -> None:
    if discordance is None:
        psi = max(baseline * (1 - candidate) + candidate * (1 - baseline), abs(candidate - baseline))
        result.notes.append(
            f"discordance ψ = {psi:.3f} assumes independent task outcomes (an upper bound for similar "
            "configurations); measure it from two runs and pass --discordance to plan tighter"
        )
    else:
        psi = discordance
    result.discordance = psi
    result.tasks_needed = sample_size_noninferiority_paired(
        baseline, candidate, margin, psi, result.alpha, result.power
    )
    if result.suite_tasks:
        achieved = power_noninferiority_paired(
            baseline, candidate, margin, psi, result.suite_tasks, result.alpha
        )
        result.notes.append(f"a suite of {result.suite_tasks} tasks has power {achieved:.2f} for this test")
