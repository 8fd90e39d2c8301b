"""Metamorphic relations: does a perturbed trial keep (or change as stated) the outcome
of its unperturbed twin?

Both runs use the same suite, configuration and seed, so trials pair up by task and
trial index (same trial seed). For each pair the perturbation's relation is checked:

- ``same_outcome``: the perturbed reward equals the unperturbed one;
- ``same_state``: the perturbed trial ends in the same state (state hash);
- ``no_state_change``: the perturbed trial ends in the state it started in;
- ``pass`` / ``fail``: the perturbed trial passes / fails.

Pairs where either trial was excluded (a harness, environment or grader error) are
left out and counted. The violation rate comes with a task-clustered Wilson interval
(:func:`assay.stats.clustered_rate_interval`: trials of a task are not independent),
so "≈ 0" is stated with how far from 0 the data allow it to be.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ..core.hashing import canonical_json
from ..core.results import TrialResult
from ..stats import bootstrap_ci, clustered_rate_interval

SCHEMA = "assay.metamorphic/1"


def _changes(result: TrialResult, ignore: Collection[str]) -> list[str]:
    assert result.outcome is not None
    return sorted(canonical_json(c) for c in result.outcome.diff if c.get("table") not in ignore)


def violated(
    relation: str, base: TrialResult, perturbed: TrialResult, ignore: Collection[str] = ()
) -> bool | None:
    """Whether the pair breaks ``relation``; None when it cannot be told (excluded
    trials, or a state that was not recorded). State relations leave out changes to
    the ``ignore`` tables."""
    if base.reward is None or perturbed.reward is None:
        return None
    if relation == "same_outcome":
        return base.reward != perturbed.reward
    if relation == "pass":
        return perturbed.reward != 1
    if relation == "fail":
        return perturbed.reward != 0
    b, p = base.outcome, perturbed.outcome
    if p is None or not p.final_hash:
        return None
    if relation == "no_state_change":
        return bool(_changes(perturbed, ignore)) if ignore else p.final_hash != p.initial_hash
    if relation == "same_state":
        if b is None or not b.final_hash:
            return None
        return (
            _changes(base, ignore) != _changes(perturbed, ignore) if ignore else b.final_hash != p.final_hash
        )
    raise ValueError(f"unknown relation {relation!r}")


def _interval(values: Sequence[float], clusters: Sequence[str]) -> list[float] | None:
    if not values:
        return None
    r = clustered_rate_interval(values, clusters)
    return [round(r.low, 4), round(r.high, 4)]


def _rate(values: Sequence[int | None]) -> float | None:
    counted = [v for v in values if v is not None]
    return round(sum(counted) / len(counted), 4) if counted else None


def relation_report(
    baseline: Sequence[TrialResult],
    perturbed: Sequence[TrialResult],
    relation: str,
    label: str = "",
    ignore: Collection[str] = (),
) -> dict[str, Any]:
    """The relation's violation rate over the paired trials (see the module docstring)."""
    base_by_key = {r.key: r for r in baseline}
    pairs = [(base_by_key[r.key], r) for r in perturbed if r.key in base_by_key]
    if any(b.seed != p.seed for b, p in pairs):
        raise ValueError("the runs do not pair up: trial seeds differ (different run seeds?)")
    checked = [(b, p, v) for b, p in pairs if (v := violated(relation, b, p, ignore)) is not None]
    flags = [float(v) for _, _, v in checked]
    clusters = [b.task_id for b, _, _ in checked]
    broke = sum(1 for b, p, v in checked if v and b.reward == 1 and p.reward == 0)
    fixed = sum(1 for b, p, v in checked if v and b.reward == 0 and p.reward == 1)
    tasks = sorted({b.task_id for b, _, v in checked if v})
    diffs = [float(p.reward or 0) - float(b.reward or 0) for b, p, _ in checked]
    change = None
    if len(diffs) > 1:
        ci = bootstrap_ci(diffs, clusters=clusters, seed=0)
        change = {"estimate": round(sum(diffs) / len(diffs), 4), "ci": [round(ci.low, 4), round(ci.high, 4)]}
    return {
        "perturbation": label,
        "relation": relation,
        "ignore": sorted(ignore),
        "pairs": len(pairs),
        "checked": len(checked),
        "excluded": len(pairs) - len(checked),
        "violations": int(sum(flags)),
        "violation_rate": round(sum(flags) / len(flags), 4) if flags else None,
        "violation_rate_ci": _interval(flags, clusters),
        "tasks": len(set(clusters)),
        "violating_tasks": tasks,
        "pass_to_fail": broke,
        "fail_to_pass": fixed,
        "success_rate": {
            "unperturbed": _rate([b.reward for b, _, _ in checked]),
            "perturbed": _rate([p.reward for _, p, _ in checked]),
            "change": change,
        },
    }


def perturbation_report(
    baseline: Sequence[TrialResult],
    perturbed: Mapping[
        str, tuple[str, Sequence[TrialResult]] | tuple[str, Sequence[TrialResult], Collection[str]]
    ],
    *,
    runs: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One :func:`relation_report` per perturbation (label -> (relation, results[, ignore]))."""
    rows = [
        relation_report(baseline, item[1], item[0], label, item[2] if len(item) > 2 else ())
        for label, item in perturbed.items()
    ]
    invariant = [r for r in rows if r["relation"] in ("same_outcome", "same_state")]
    checked = sum(r["checked"] for r in invariant)
    return {
        "schema": SCHEMA,
        "perturbations": rows,
        "invariance": {
            "checked": checked,
            "violations": sum(r["violations"] for r in invariant),
            "violation_rate": round(sum(r["violations"] for r in invariant) / checked, 4)
            if checked
            else None,
        },
        "runs": dict(runs or {}),
    }
