"""Where two runs differ: per-stratum, per-split and per-tag deltas, tasks that flipped,
and the smallest difference the comparison could have detected."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..stats import adjust_pvalues, mcnemar_exact, mde_mcnemar, mde_two_proportions
from .pairing import Pairing


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


def _delta(by: str, group: str, a_pass: npt.NDArray[np.bool_], b_pass: npt.NDArray[np.bool_]) -> GroupDelta:
    n = int(a_pass.size)
    only_a = int(np.count_nonzero(a_pass & ~b_pass))
    only_b = int(np.count_nonzero(b_pass & ~a_pass))
    return GroupDelta(
        by=by,
        group=group,
        tasks=n,
        a=float(a_pass.sum()) / n,
        b=float(b_pass.sum()) / n,
        only_a=only_a,
        only_b=only_b,
        p_value=mcnemar_exact(only_b, only_a),
    )


def group_deltas(pairing: Pairing, adjust: str = "holm") -> list[GroupDelta]:
    """Task-outcome deltas per stratum, split and tag, with McNemar p-values adjusted
    together (one family: every slice of every breakdown) by ``adjust``."""
    tasks = pairing.tasks
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, task_id in enumerate(pairing.task_ids):
        meta = tasks[task_id]
        groups[("stratum", meta.stratum)].append(i)
        groups[("split", meta.split)].append(i)
        for tag in meta.tags:
            groups[("tag", tag)].append(i)
    order = {"stratum": 0, "split": 1, "tag": 2}
    a_pass, b_pass = pairing.task_a_pass, pairing.task_b_pass
    deltas = [_delta(by, group, a_pass[idx], b_pass[idx]) for (by, group), idx in groups.items()]
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
    fixed: list[FlippedTask] = []
    broken: list[FlippedTask] = []
    (ca, na), (cb, nb) = pairing.a_counts, pairing.b_counts
    a_pass, b_pass = pairing.task_a_pass, pairing.task_b_pass
    tasks = pairing.tasks
    for i in np.flatnonzero(a_pass != b_pass).tolist():
        task_id = pairing.task_ids[i]
        flip = FlippedTask(task_id, tasks[task_id].stratum, int(ca[i]), int(na[i]), int(cb[i]), int(nb[i]))
        (fixed if b_pass[i] else broken).append(flip)
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
