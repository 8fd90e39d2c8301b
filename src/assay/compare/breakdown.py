"""Where two runs differ: per-stratum, per-split and per-tag deltas, tasks that flipped,
and the smallest difference the comparison could have detected."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ..stats import adjust_pvalues, mcnemar_exact, mde_mcnemar, mde_two_proportions
from .pairing import Pairing, Unit


@dataclass
class GroupDelta:
    """Task outcomes of one slice (a stratum, a split or a tag) in both runs."""

    by: str
    group: str
    tasks: int
    a: float
    b: float
    only_a: int
    only_b: int
    p_value: float
    p_adjusted: float | None = None

    @property
    def delta(self) -> float:
        return self.b - self.a

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "group": self.group,
            "tasks": self.tasks,
            "a": self.a,
            "b": self.b,
            "delta": self.delta,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
        }


def _delta(by: str, group: str, units: list[Unit]) -> GroupDelta:
    n = len(units)
    only_a = sum(u.a_pass and not u.b_pass for u in units)
    only_b = sum(u.b_pass and not u.a_pass for u in units)
    return GroupDelta(
        by=by,
        group=group,
        tasks=n,
        a=sum(u.a_pass for u in units) / n,
        b=sum(u.b_pass for u in units) / n,
        only_a=only_a,
        only_b=only_b,
        p_value=mcnemar_exact(only_b, only_a),
    )


def group_deltas(pairing: Pairing, adjust: str = "holm") -> list[GroupDelta]:
    """Task-outcome deltas per stratum, split and tag, with McNemar p-values adjusted
    together (one family: every slice of every breakdown) by ``adjust``."""
    tasks = pairing.tasks
    groups: dict[tuple[str, str], list[Unit]] = defaultdict(list)
    for unit in pairing.task_units:
        meta = tasks[unit.task_id]
        groups[("stratum", meta.stratum)].append(unit)
        groups[("split", meta.split)].append(unit)
        for tag in meta.tags:
            groups[("tag", tag)].append(unit)
    order = {"stratum": 0, "split": 1, "tag": 2}
    deltas = [_delta(by, group, units) for (by, group), units in groups.items()]
    deltas.sort(key=lambda d: (order[d.by], d.group))
    for d, p in zip(deltas, adjust_pvalues([d.p_value for d in deltas], adjust), strict=True):
        d.p_adjusted = p
    return deltas


@dataclass(frozen=True)
class FlippedTask:
    """A task whose outcome differs between the runs, with each run's trial counts."""

    task_id: str
    stratum: str
    a_successes: int
    a_trials: int
    b_successes: int
    b_trials: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "stratum": self.stratum,
            "a": f"{self.a_successes}/{self.a_trials}",
            "b": f"{self.b_successes}/{self.b_trials}",
        }


def flipped_tasks(pairing: Pairing) -> tuple[list[FlippedTask], list[FlippedTask]]:
    """(fixed, broken): tasks the candidate newly solves, and tasks it newly fails."""
    tasks = pairing.tasks
    fixed: list[FlippedTask] = []
    broken: list[FlippedTask] = []
    for u in pairing.task_units:
        if u.a_pass == u.b_pass:
            continue
        flip = FlippedTask(u.task_id, tasks[u.task_id].stratum, *u.a_trials, *u.b_trials)
        (fixed if u.b_pass else broken).append(flip)
    return fixed, broken


def detectable_difference(
    n: int, baseline_rate: float, discordant_rate: float, alpha: float = 0.05, power: float = 0.8
) -> tuple[float | None, str]:
    """The smallest difference in pass share ``n`` paired units detect with ``power``.

    Connor's McNemar formula at the observed discordant rate when the runs disagree on
    some units; otherwise (nothing to estimate discordance from) the two-proportion
    formula at the baseline rate, which ignores pairing and so errs on the large side.
    Returns ``(None, reason)`` when no difference within [0, 1] is detectable.
    """
    if n < 1:
        return None, "no paired units"
    if discordant_rate > 0:
        try:
            return mde_mcnemar(n, discordant_rate, alpha, power), "McNemar (Connor), observed discordance"
        except ValueError:
            pass
    found: list[float] = []
    for direction in ("increase", "decrease"):
        try:
            found.append(mde_two_proportions(n, baseline_rate, alpha, power, direction=direction))
        except ValueError:
            continue
    if not found:
        return None, f"{n} units are too few to detect any difference"
    return max(found), "two proportions at the baseline rate (pairing ignored, conservative)"
