"""``compare_runs``: one answer to "is B better than A for my tasks, by how much, is it
real, at what cost" for a baseline and one or more candidates on the same suite."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..box import ScoringProfile
from ..core.collector import paused_gc
from ..errors import AssayError
from ..stats import adjust_pvalues
from .boxes import BoxResult, resolve_profile, score_runs
from .breakdown import FlippedTask, GroupDelta, detectable_difference, flipped_tasks, group_deltas
from .decision import Decision, decide, decision_sensitivity
from .outcomes import QUALITY_VALUES, TaskOutcome
from .paired import Family, MetricRow, continuous_rows, quality_row
from .pairing import MatchBy, Pairing, RunData, RunLike, pair_runs

ADJUST_METHODS = ("holm", "bonferroni", "bh")
ADJUST_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg"}
SCHEMA = "assay.compare/1"


@dataclass
class PairResult:
    """One candidate against the baseline."""

    pairing: Pairing
    rows: list[MetricRow]
    groups: list[GroupDelta]
    fixed: list[FlippedTask]
    broken: list[FlippedTask]
    mde: float | None
    mde_method: str
    name: str
    decision: Decision = field(default_factory=lambda: Decision("no_difference", ""))
    sensitivity: list[dict[str, Any]] = field(default_factory=list)

    @property
    def quality(self) -> MetricRow:
        return next(r for r in self.rows if r.metric == "quality")

    def to_dict(self) -> dict[str, Any]:
        p = self.pairing
        return {
            "baseline": p.a.run_id,
            "candidate": p.b.run_id,
            "name": self.name,
            "match": p.match,
            "task_outcome": p.task_outcome,
            "units": p.n_units,
            "tasks": p.n_tasks,
            "notes": p.notes,
            "decision": self.decision.to_dict(),
            "decision_sensitivity": self.sensitivity,
            "detectable_difference": {
                "pts": None if self.mde is None else 100 * self.mde,
                "method": self.mde_method,
            },
            "metrics": [r.to_dict() for r in self.rows],
            "groups": [g.to_dict() for g in self.groups],
            "flipped": {
                "fixed": [f.to_dict() for f in self.fixed],
                "broken": [f.to_dict() for f in self.broken],
            },
        }


@dataclass
class Comparison:
    """A baseline, its candidates, box scores, and the multiplicity method used."""

    runs: list[RunData]
    pairs: list[PairResult]
    box: BoxResult | None
    adjust: str
    alpha: float
    confidence: float
    tests: dict[str, int]

    @property
    def baseline(self) -> RunData:
        return self.runs[0]

    @property
    def adjust_name(self) -> str:
        return ADJUST_NAMES[self.adjust]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "baseline": self.baseline.run_id,
            "runs": [
                {
                    "run_id": r.run_id,
                    "agent": r.label,
                    "seed": r.info.seed,
                    "suite": r.info.suite_name,
                    "suite_version": r.info.suite_version,
                    "suite_hash": r.info.suite_hash,
                    "counted_trials": r.counted,
                    "excluded_trials": r.excluded,
                }
                for r in self.runs
            ],
            "alpha": self.alpha,
            "confidence": self.confidence,
            "adjustment": {"method": self.adjust, "name": self.adjust_name, "tests": self.tests},
            "comparisons": [p.to_dict() for p in self.pairs],
            "box": None if self.box is None else self.box.to_dict(),
        }


def load_runs(runs: Sequence[RunLike | RunData]) -> list[RunData]:
    """Every run as :class:`RunData`; runs stored in a database server are read at the
    same time, one thread each (the server works while Python waits), the others in
    order: SQLite hands rows over one by one, and two threads reading rows trade the
    GIL at every row (on a million trials, twice as slow as one after the other)."""

    def load(run: RunLike | RunData) -> RunData:
        return run if isinstance(run, RunData) else RunData.of(run).prefetch()

    stored = [
        not str(getattr(getattr(r, "store", None), "url", "sqlite:")).startswith("sqlite") for r in runs
    ]
    if sum(stored) < 2:
        return [load(r) for r in runs]
    with ThreadPoolExecutor(min(4, len(runs)), thread_name_prefix="assay-load") as pool:
        return list(pool.map(load, runs))


def _display_names(runs: Sequence[RunData]) -> list[str]:
    labels = [r.label for r in runs]
    return [r.label if labels.count(r.label) == 1 else r.run_id for r in runs]


def _rows(
    pairing: Pairing, primary: set[str], confidence: float, n_resamples: int, seed: int
) -> list[MetricRow]:
    rows = [quality_row(pairing, confidence)]
    names = (pairing.metric_names() | primary) - QUALITY_VALUES
    ordered = sorted(names, key=lambda m: (m not in primary, m.startswith("score."), m))
    metrics: list[tuple[str, Family]] = [("success_rate", "secondary")]
    metrics += [(m, "primary" if m in primary else "secondary") for m in ordered]
    return rows + continuous_rows(pairing, metrics, confidence=confidence, n_resamples=n_resamples, seed=seed)


def _adjust(rows: list[MetricRow], method: str) -> dict[str, int]:
    counts = {}
    for family in ("primary", "secondary"):
        tested = [r for r in rows if r.family == family and r.p_value is not None]
        for row, p in zip(tested, adjust_pvalues([r.p_value for r in tested], method), strict=True):  # type: ignore[misc]
            row.p_adjusted = p
        counts[family] = len(tested)
    return counts


def compare_runs(
    runs: Sequence[RunLike | RunData],
    *,
    profile: ScoringProfile | str | Path | None = None,
    common_only: bool = False,
    adjust: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    power: float = 0.8,
    match: MatchBy = "task",
    task_outcome: TaskOutcome = "all",
    box: bool = True,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Comparison:
    """Compare ``runs[1:]`` (candidates) against ``runs[0]`` (baseline), paired.

    Per candidate: McNemar on task outcomes (quality), sign-flip tests and bootstrap
    intervals for every per-trial number, per-stratum/split/tag deltas, flipped tasks,
    the smallest detectable difference and a decision line. Two families of p-values are
    adjusted with ``adjust`` (``holm``, ``bonferroni`` or ``bh``) across all candidates:
    *primary* (quality and the box profile's metrics) and *secondary* (the rest). Box
    scores rank all runs under ``profile`` (default: the shipped profile).
    """
    if adjust not in ADJUST_METHODS:
        raise AssayError(f"--adjust must be one of {', '.join(ADJUST_METHODS)}, not {adjust!r}")
    if not 0 < alpha < 1:
        raise AssayError(f"alpha must be between 0 and 1, got {alpha}")
    if len(runs) < 2:
        raise AssayError("give at least two runs to compare: a baseline and a candidate")
    with paused_gc():  # full collections would walk the runs' rows of per-task sums, to no avail
        return _compare(
            runs,
            profile,
            common_only,
            adjust,
            alpha,
            confidence,
            power,
            match,
            task_outcome,
            box,
            n_resamples,
            seed,
        )


def _compare(
    runs: Sequence[RunLike | RunData],
    profile: ScoringProfile | str | Path | None,
    common_only: bool,
    adjust: str,
    alpha: float,
    confidence: float,
    power: float,
    match: MatchBy,
    task_outcome: TaskOutcome,
    box: bool,
    n_resamples: int,
    seed: int,
) -> Comparison:
    data = load_runs(runs)
    ids = [r.run_id for r in data]
    if len(set(ids)) != len(ids):
        raise AssayError(f"run {next(i for i in ids if ids.count(i) > 1)} is given twice")
    prof = resolve_profile(profile) if box else None
    primary = {m for m in prof.metrics if m not in QUALITY_VALUES} if prof else set()
    names = _display_names(data)
    pairs = []
    for run, name in zip(data[1:], names[1:], strict=True):
        pairing = pair_runs(data[0], run, match=match, task_outcome=task_outcome, common_only=common_only)
        fixed, broken = flipped_tasks(pairing)
        a_pass, b_pass = pairing.a_pass, pairing.b_pass
        discordant = float(np.mean(a_pass != b_pass))
        base_rate = float(np.mean(a_pass))
        mde, how = detectable_difference(pairing.n_units, base_rate, discordant, alpha, power)
        pairs.append(
            PairResult(
                pairing=pairing,
                rows=_rows(pairing, primary, confidence, n_resamples, seed),
                groups=group_deltas(pairing, adjust),
                fixed=fixed,
                broken=broken,
                mde=mde,
                mde_method=how,
                name=name,
            )
        )
    tests = _adjust([r for p in pairs for r in p.rows], adjust)
    box_result = score_runs(data, prof, n_resamples=n_resamples, seed=seed) if prof else None
    for pair in pairs:

        def decide_with(profile: ScoringProfile | None, pair: PairResult = pair) -> Decision:
            return decide(
                pair.quality,
                pair.rows,
                candidate=pair.pairing.b.run_id,
                name=pair.name,
                box=box_result,
                alpha=alpha,
                mde=pair.mde,
                profile=profile,
            )

        pair.decision = decide_with(None)
        pair.sensitivity = decision_sensitivity(decide_with, pair.decision, box_result)
    return Comparison(data, pairs, box_result, adjust, alpha, confidence, tests)
