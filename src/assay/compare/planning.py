"""Planning: how many tasks × trials a decision needs, and what a suite can detect.

Two designs, both two-sided at ``alpha``:

- ``two-proportion`` (independent runs): trials per arm from
  :func:`assay.stats.sample_size_two_proportions`. Trials of a task are correlated, so
  k trials per task are worth ``k / (1 + (k − 1)·ICC)`` independent trials (the design
  effect); the intra-task correlation (ICC) defaults to 0.5 and can be estimated from a
  run with :func:`task_icc`.
- ``paired`` (both configurations on the same tasks, McNemar on task outcomes): pairs =
  tasks from Connor's formula (:func:`assay.stats.sample_size_mcnemar`). It needs the
  expected share of tasks the two configurations disagree on (discordance ψ); without
  one, ψ assumes independent outcomes, ``p₁(1 − p₂) + p₂(1 − p₁)``, the most
  discordance two rates allow short of anti-correlation, so the plan errs on the large side.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..core.results import TrialResult
from ..errors import AssayError
from ..stats import mde_mcnemar, mde_two_proportions, sample_size_mcnemar, sample_size_two_proportions

Design = Literal["two-proportion", "paired", "noninferiority", "noninferiority-paired"]


@dataclass
class Plan:
    """What a decision needs and what the suite (if given) can detect."""

    design: Design
    baseline: float
    mde: float | None
    alpha: float
    power: float
    k: int
    icc: float | None
    discordance: float | None
    trials_per_arm: int | None = None
    tasks_needed: int | None = None
    suite_tasks: int | None = None
    detectable: float | None = None
    options: list[tuple[int, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    margin: float | None = None
    """Non-inferiority designs: the margin the candidate must not fall behind by."""

    @property
    def target(self) -> float | None:
        return None if self.mde is None else self.baseline + self.mde

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "assay.plan/1",
            "design": self.design,
            "baseline": self.baseline,
            "mde": self.mde,
            "target": self.target,
            "alpha": self.alpha,
            "power": self.power,
            "trials_per_task": self.k,
            "icc": self.icc,
            "discordance": self.discordance,
            "trials_per_arm": self.trials_per_arm,
            "tasks_needed": self.tasks_needed,
            "suite_tasks": self.suite_tasks,
            "detectable_pts": None if self.detectable is None else 100 * self.detectable,
            "options": [{"tasks": t, "trials_per_task": k} for t, k in self.options],
            "notes": self.notes,
            **({"margin": self.margin} if self.margin is not None else {}),
        }


def design_effect(k: int, icc: float) -> float:
    """``1 + (k − 1)·ICC``: how many correlated trials are worth one independent one."""
    return 1.0 + (k - 1) * icc


def task_icc(results: Iterable[TrialResult]) -> float | None:
    """Intra-task correlation of rewards (one-way ANOVA estimator, clipped to [0, 1]).

    ``ICC = (MSB − MSW) / (MSB + (k₀ − 1)·MSW)`` over tasks with counted trials, ``k₀``
    the (adjusted) mean trials per task. ``None`` when it cannot be estimated (fewer than
    two tasks, one trial per task, or no variation at all).
    """
    groups: dict[str, list[float]] = defaultdict(list)
    for r in results:
        if r.reward is not None:
            groups[r.task_id].append(float(r.reward))
    sizes = [len(g) for g in groups.values()]
    n, t = sum(sizes), len(groups)
    if t < 2 or n <= t:
        return None
    grand = sum(sum(g) for g in groups.values()) / n
    ssb = sum(len(g) * (sum(g) / len(g) - grand) ** 2 for g in groups.values())
    ssw = sum(sum((x - sum(g) / len(g)) ** 2 for x in g) for g in groups.values())
    msb, msw = ssb / (t - 1), ssw / (n - t)
    k0 = (n - sum(s * s for s in sizes) / n) / (t - 1)
    denom = msb + (k0 - 1) * msw
    if denom <= 0:
        return None
    return min(1.0, max(0.0, (msb - msw) / denom))


def _check(value: float, name: str, low: float = 0.0, high: float = 1.0) -> None:
    if not low <= value <= high:
        raise AssayError(f"{name} must be between {low} and {high}, got {value}")


def _detectable_unpaired(n: int, baseline: float, alpha: float, power: float) -> float | None:
    found = []
    for direction in ("increase", "decrease"):
        try:
            found.append(mde_two_proportions(n, baseline, alpha, power, direction=direction))
        except ValueError:
            continue
    return max(found) if found else None


def plan(
    baseline: float,
    mde: float | None = None,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    paired: bool = False,
    k: int = 1,
    icc: float = 0.5,
    discordance: float | None = None,
    suite_tasks: int | None = None,
    margin: float | None = None,
) -> Plan:
    """Tasks × trials needed to detect ``baseline → baseline + mde`` and, with
    ``suite_tasks``, the smallest change a suite of that many tasks × ``k`` detects.

    ``mde`` may be negative (planning to detect a drop). With ``margin`` the plan is for
    a non-inferiority test instead (a guardrail, a gray rollout; one-sided ``alpha``):
    ``mde`` is then the difference expected (default 0: as good) and the plan says what
    shows "not worse by ``margin``" with ``power`` (:mod:`assay.compare.ni_planning`).
    Errors are :class:`~assay.errors.AssayError` sentences naming the option.
    """
    _check(baseline, "--baseline")
    _check(alpha, "--alpha", 1e-9, 0.5)
    _check(power, "--power", 0.05, 1 - 1e-9)
    _check(icc, "--icc")
    if k < 1:
        raise AssayError(f"-k (trials per task) must be at least 1, got {k}")
    if margin is not None:
        from .ni_planning import plan_noninferiority

        return plan_noninferiority(
            baseline,
            margin,
            mde or 0.0,
            alpha=alpha,
            power=power,
            paired=paired,
            k=k,
            icc=icc,
            discordance=discordance,
            suite_tasks=suite_tasks,
        )
    if mde is None and suite_tasks is None:
        raise AssayError(
            "give --mde (the difference to detect), or --suite/--tasks to see what it can detect"
        )
    if mde is not None and (mde == 0 or not 0.0 <= baseline + mde <= 1.0):
        raise AssayError(f"--mde {mde} from --baseline {baseline} must be non-zero and stay within [0, 1]")
    result = Plan(
        "paired" if paired else "two-proportion",
        baseline,
        mde,
        alpha,
        power,
        k,
        None if paired else icc,
        None,
        suite_tasks=suite_tasks,
    )
    if paired:
        _plan_paired(result, discordance)
    else:
        _plan_unpaired(result, icc)
    return result


def _plan_unpaired(result: Plan, icc: float) -> None:
    deff = design_effect(result.k, icc)
    if result.mde is not None:
        n = sample_size_two_proportions(
            result.baseline + result.mde, result.baseline, result.alpha, result.power
        )
        result.trials_per_arm = n
        result.tasks_needed = math.ceil(n * deff / result.k - 1e-9)
        for k in sorted({1, 2, 4, 8, result.k}):
            result.options.append((math.ceil(n * design_effect(k, icc) / k - 1e-9), k))
    if result.k > 1 and icc > 0:
        result.notes.append(
            f"{result.k} trials per task count as {result.k / deff:.2f} independent trials each "
            f"(intra-task correlation {icc:g}); more tasks beat more trials"
        )
    if result.suite_tasks:
        n_eff = math.floor(result.suite_tasks * result.k / deff)
        result.detectable = _detectable_unpaired(max(n_eff, 1), result.baseline, result.alpha, result.power)


def _plan_paired(result: Plan, discordance: float | None) -> None:
    p1 = result.baseline
    p2 = p1 + (result.mde or 0.0)
    if discordance is None:
        psi = p1 * (1 - p2) + p2 * (1 - p1)
        if result.mde is None:
            psi = 2 * p1 * (1 - p1)
        result.notes.append(
            f"discordance ψ = {psi:.3f} assumes independent task outcomes (an upper bound for similar "
            "configurations); measure it from two runs and pass --discordance to plan tighter"
        )
    else:
        _check(discordance, "--discordance")
        psi = discordance
    result.discordance = psi
    if result.mde is not None:
        delta = abs(result.mde)
        if psi < delta or psi <= 0:
            raise AssayError(f"--discordance {psi:g} must be at least |--mde| ({delta:g}) and positive")
        p10, p01 = (psi + delta) / 2, (psi - delta) / 2
        if p10 + p01 > 1:
            raise AssayError(f"--discordance {psi:g} cannot exceed 1")
        result.tasks_needed = sample_size_mcnemar(p10, p01, result.alpha, result.power)
    result.notes.append(
        "paired units are tasks (McNemar on task outcomes): more trials per task steady each task's "
        "outcome but do not add units"
    )
    if result.suite_tasks and psi > 0:
        try:
            result.detectable = mde_mcnemar(result.suite_tasks, psi, result.alpha, result.power)
        except ValueError:
            result.detectable = None
