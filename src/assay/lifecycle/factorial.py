"""Flag-matrix experiments: main effects and interactions of feature flags.

``assay run --flag a=off/on --flag b=off/on`` (or ``--flag-matrix a=off,on ...``) runs one arm per
combination of levels (a full factorial design), all on the same tasks with the same
seed. The unit of analysis is the task: for each task and arm, ``y`` is the task's
success rate over its counted trials; only tasks counted in every arm are used.

For two-level factors (the reference level is ``off``/``false``/``0`` when the factor
has one, else the first level listed) each arm gets ``x_f = +1`` (the other level) or
``-1`` (the reference). The effect of a term ``S`` (a factor, or an interaction of
several) is the usual factorial contrast

    effect_S = mean(y | x_S = +1) - mean(y | x_S = -1),    x_S = prod(x_f for f in S)

computed per task and averaged over tasks: a main effect is the average change of
switching the flag on; a two-factor interaction is half the difference between the
effect of one flag with the other on and with it off. (The least-squares coefficient
of ``x_S`` in a ±1-coded regression is ``effect_S / 2``.) Intervals: percentile
bootstrap over tasks (95%); p-values: sign-flip test over tasks, two-sided. Factors
with more than two levels get one main effect per non-reference level (its mean
minus the reference's, over the other factors) and no interactions.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.results import TrialResult
from ..stats import bootstrap_ci, clustered_rate_interval, sign_flip_test

SCHEMA = "assay.experiment-analysis/1"
_OFF = ("off", "false", "0", "no", "disabled")


def reference_level(levels: Sequence[Any]) -> Any:
    """``off``/``false``/``0``/``no`` when among the levels, else the first one."""
    for level in levels:
        if str(level).strip().lower() in _OFF:
            return level
    return levels[0]


def arms_of(factors: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of levels, the first factor varying slowest."""
    names = list(factors)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(factors[n] for n in names))]


def arm_label(levels: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={_text(v)}" for k, v in levels.items())


def _text(value: Any) -> str:
    return "true" if value is True else "false" if value is False else str(value)


def _task_rates(results: Sequence[TrialResult]) -> dict[str, float]:
    counts: dict[str, list[int]] = defaultdict(list)
    for r in results:
        if r.reward is not None:
            counts[r.task_id].append(r.reward)
    return {t: sum(v) / len(v) for t, v in counts.items()}


def _term(
    name: str, per_task: np.ndarray, tasks: list[str], n_resamples: int, **extra: Any
) -> dict[str, Any]:
    ci = bootstrap_ci(per_task, n_resamples=n_resamples, seed=0) if len(per_task) > 1 else None
    p = sign_flip_test(per_task).p_value if len(per_task) > 1 else None
    return {
        "term": name,
        **extra,
        "effect": round(float(per_task.mean()), 4),
        "ci": [round(ci.low, 4), round(ci.high, 4)] if ci else None,
        "p_value": None if p is None else round(float(p), 4),
        "tasks": len(tasks),
    }


def factorial_effects(
    factors: Mapping[str, Sequence[Any]],
    arms: Sequence[tuple[Mapping[str, Any], Sequence[TrialResult]]],
    *,
    n_resamples: int = 2000,
) -> dict[str, Any]:
    """Per-arm success rates, main effects and interactions (see the module docstring)."""
    names = list(factors)
    rates = [(dict(levels), _task_rates(results)) for levels, results in arms]
    expected = {arm_label(a) for a in arms_of(factors)}
    have = {arm_label(levels) for levels, _ in rates}
    if have != expected:
        missing = sorted(expected - have)
        raise ValueError(
            f"the experiment lacks arm(s) {', '.join(missing) or '?'}: every combination is needed"
        )
    tasks = sorted(set.intersection(*(set(r) for _, r in rates)))
    if not tasks:
        raise ValueError("no task was counted in every arm")
    y = np.array([[r[t] for t in tasks] for _, r in rates])  # arms x tasks
    refs = {n: reference_level(list(factors[n])) for n in names}
    arm_rows = []
    for (levels, _), (_, results) in zip(rates, arms, strict=True):
        counted = [r for r in results if r.reward is not None]
        ci = (
            clustered_rate_interval([float(r.reward or 0) for r in counted], [r.task_id for r in counted])
            if counted
            else None
        )
        arm_rows.append(
            {
                "arm": arm_label(levels),
                "flags": levels,
                "trials": len(counted),
                "success_rate": round(sum(r.reward or 0 for r in counted) / len(counted), 4)
                if counted
                else None,
                "ci": [round(ci.low, 4), round(ci.high, 4)] if ci else None,
            }
        )
    main, interactions = [], []
    two_level = [n for n in names if len(factors[n]) == 2]
    for n in names:
        for level in factors[n]:
            if level == refs[n]:
                continue
            on = np.array([lv[n] == level for lv, _ in rates])
            off = np.array([lv[n] == refs[n] for lv, _ in rates])
            per_task = y[on].mean(axis=0) - y[off].mean(axis=0)
            main.append(
                _term(
                    n if len(factors[n]) == 2 else f"{n}={_text(level)}",
                    per_task,
                    tasks,
                    n_resamples,
                    factor=n,
                    level=level,
                    reference=refs[n],
                )
            )
    codes = {n: np.array([1.0 if lv[n] != refs[n] else -1.0 for lv, _ in rates]) for n in two_level}
    half = len(rates) / 2
    for order in range(2, len(two_level) + 1):
        for combo in itertools.combinations(two_level, order):
            x = np.prod([codes[n] for n in combo], axis=0)
            per_task = (x[:, None] * y).sum(axis=0) / half
            interactions.append(_term(":".join(combo), per_task, tasks, n_resamples, factors=list(combo)))
    notes = []
    skipped = [n for n in names if len(factors[n]) > 2]
    if skipped:
        notes.append(f"no interactions with {', '.join(skipped)}: only two-level flags have them here")
    return {
        "schema": SCHEMA,
        "factors": {n: list(factors[n]) for n in names},
        "reference": refs,
        "tasks": len(tasks),
        "arms": arm_rows,
        "main_effects": main,
        "interactions": interactions,
        "notes": notes,
        "method": "per-task factorial contrasts; 95% percentile bootstrap over tasks; sign-flip p-values",
    }


def design_size(factors: Mapping[str, Sequence[Any]]) -> int:
    return math.prod(len(v) for v in factors.values())
