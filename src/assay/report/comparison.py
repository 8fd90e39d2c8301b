"""Runs side by side: the paired comparison of :mod:`assay.compare` (decision line, paired
tests with adjusted p-values, slices, flipped tasks, box scores) plus the per-task rows
the report and the viewer show (every trial's reward, flipped tasks first).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..box import ScoringProfile
from ..compare import compare_runs as paired_comparison
from ..errors import AssayError
from ..metrics.frame import TrialFrame
from ..metrics.summary import reward_list
from ..metrics.summary_model import task_outcome
from ..runner.stored import Run

_ORDER = {"regressed": 0, "improved": 1, "changed": 2, "same": 3}


def _rate(rewards: list[int | None]) -> float | None:
    counted = [r for r in rewards if r is not None]
    return sum(counted) / len(counted) if counted else None


def task_rewards(frame: TrialFrame) -> dict[str, list[int | None]]:
    """Each task's trial rewards in trial order (None: excluded), from the columns."""
    order = np.lexsort((frame.trial_index, frame.task))
    codes = frame.task[order]
    values = reward_list(frame.reward[order])
    bounds = np.searchsorted(codes, np.arange(len(frame.task_ids) + 1)).tolist()
    return {
        t: values[bounds[i] : bounds[i + 1]]
        for i, t in enumerate(frame.task_ids)
        if bounds[i + 1] > bounds[i]
    }


def check_comparable(runs: Sequence[Run]) -> None:
    """Runs compared task by task must be of the same suite version."""
    first = runs[0].info
    for run in runs[1:]:
        info = run.info
        if (info.suite_name, info.suite_hash) != (first.suite_name, first.suite_hash):
            raise AssayError(
                f"run {info.run_id} is of suite {info.suite_name} hash {info.suite_hash} but run "
                f"{first.run_id} is of {first.suite_name} hash {first.suite_hash}; "
                "only runs of the same suite version compare task by task"
            )


def task_rows(a: Run, b: Run) -> list[dict[str, Any]]:
    """One row per task of either run: rewards, rates, outcomes and the change from A to B.

    ``change`` is ``regressed`` (B's success rate lower and its outcome class - pass,
    flaky, fail - different), ``improved``, ``changed`` (rates differ within one outcome
    class) or ``same``. Rows come flipped first: regressions, improvements, then other
    changes by size, then unchanged tasks.
    """
    rewards: dict[str, dict[str, list[int | None]]] = defaultdict(lambda: {"a": [], "b": []})
    for side, run in (("a", a), ("b", b)):
        for task_id, values in task_rewards(run.frame()).items():
            rewards[task_id][side] = values
    meta = {t.task_id: t for t in (*a.tasks, *b.tasks)}
    rows: list[dict[str, Any]] = []
    for task_id, rw in rewards.items():
        ra, rb = _rate(rw["a"]), _rate(rw["b"])
        oa, ob = task_outcome(rw["a"]), task_outcome(rw["b"])
        delta = None if ra is None or rb is None else rb - ra
        if delta is None or delta == 0:
            change = "same"
        elif oa != ob:
            change = "improved" if delta > 0 else "regressed"
        else:
            change = "changed"
        m = meta.get(task_id)
        rows.append(
            {
                "task_id": task_id,
                "stratum": m.stratum if m else "",
                "split": m.split if m else "",
                "tags": list(m.tags) if m else [],
                "a_rewards": rw["a"],
                "b_rewards": rw["b"],
                "a_rate": None if ra is None else round(ra, 4),
                "b_rate": None if rb is None else round(rb, 4),
                "a_outcome": oa,
                "b_outcome": ob,
                "delta": None if delta is None else round(delta, 4),
                "change": change,
                "flipped": change in ("regressed", "improved"),
            }
        )
    rows.sort(key=lambda r: (_ORDER[r["change"]], -abs(r["delta"] or 0), r["task_id"]))
    return rows


def prompt_change(a: Run, b: Run) -> dict[str, Any]:
    """The prompt versions of two runs' configurations and whether they differ (the
    report says so next to the comparison; ``assay prompt diff A B`` shows what changed)."""
    pa, pb = a.info.config.prompt_version, b.info.config.prompt_version
    return {"a": pa, "b": pb, "differs": pa != pb}


def compare_view(runs: Sequence[Run], profile: ScoringProfile | None = None) -> dict[str, Any]:
    """The comparison of ``runs[1:]`` against ``runs[0]`` as shown by report and viewer:
    :func:`assay.compare.compare_runs` (as its JSON document) plus per-task rows for
    every candidate; ``box_scores``: its :class:`~assay.compare.BoxResult` (or None)."""
    check_comparable(runs)
    comparison = paired_comparison(list(runs), profile=profile)
    result = comparison.to_dict()
    pairs = []
    for run, pair in zip(runs[1:], result["comparisons"], strict=True):
        rows = task_rows(runs[0], run)
        metrics = pair["metrics"]
        pairs.append(
            {
                **pair,
                "a": runs[0].run_id,
                "b": run.run_id,
                "a_agent": runs[0].info.config.agent,
                "b_agent": run.info.config.agent,
                "prompt": prompt_change(runs[0], run),
                "quality": next((m for m in metrics if m["metric"] == "quality"), None),
                "tasks": rows,
                "counts": {c: sum(1 for r in rows if r["change"] == c) for c in _ORDER},
                "slices": [g for g in pair["groups"] if g["delta"] != 0],
            }
        )
    return {"document": result, "pairs": pairs, "box": result.get("box"), "box_scores": comparison.box}
