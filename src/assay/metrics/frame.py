"""Trials as columns: what summaries are computed from.

A :class:`TrialFrame` holds one numpy array per scalar field of the trials of a run
(task, trial index, reward, termination, latency, cost, tokens); :class:`FrameExtras`
holds the aggregates that come from nested data (grader verdicts, process metrics,
usage by role, the graders that failed each task). Both are built either from
in-memory results or, for large runs, straight from the store with SQL, so a summary
of a million trials never materialises a million objects.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.results import USAGE_FIELDS, TrialResult

FloatArray = npt.NDArray[np.float64]


@dataclass
class TrialFrame:
    """Columns of a run's trials. ``reward`` is NaN for excluded trials; ``cost_usd``
    and token columns are NaN where unknown. ``task`` indexes ``task_ids``."""

    task_ids: list[str]
    task: npt.NDArray[np.intp]
    trial_index: npt.NDArray[np.int64]
    reward: FloatArray
    termination: npt.NDArray[np.object_]
    root_cause: npt.NDArray[np.object_]
    latency_s: FloatArray
    cost_usd: FloatArray
    input_tokens: FloatArray
    output_tokens: FloatArray
    error_category: npt.NDArray[np.object_] | None = None
    """The failure category of each trial (None where there is none); absent in frames
    built before it was a column."""

    def __len__(self) -> int:
        return int(self.task.size)

    @classmethod
    def from_columns(
        cls,
        task_id: Sequence[str],
        trial_index: Sequence[int],
        reward: Sequence[float | None],
        termination: Sequence[str],
        root_cause: Sequence[str | None],
        latency_s: Sequence[float],
        cost_usd: Sequence[float | None],
        input_tokens: Sequence[int | None],
        output_tokens: Sequence[int | None],
        error_category: Sequence[str | None] | None = None,
    ) -> TrialFrame:
        names, codes = np.unique(np.asarray(task_id, dtype=object), return_inverse=True)

        def floats(values: Sequence[Any]) -> FloatArray:
            return np.array([np.nan if v is None else v for v in values], dtype=np.float64)

        return cls(
            task_ids=[str(n) for n in names],
            task=codes.astype(np.intp),
            trial_index=np.asarray(trial_index, dtype=np.int64),
            reward=floats(reward),
            termination=np.asarray(termination, dtype=object),
            root_cause=np.asarray(root_cause, dtype=object),
            latency_s=np.asarray(latency_s, dtype=np.float64),
            cost_usd=floats(cost_usd),
            input_tokens=floats(input_tokens),
            output_tokens=floats(output_tokens),
            error_category=None if error_category is None else np.asarray(error_category, dtype=object),
        )

    @classmethod
    def from_results(cls, results: Sequence[TrialResult]) -> TrialFrame:
        return cls.from_columns(
            [r.task_id for r in results],
            [r.trial_index for r in results],
            [r.reward for r in results],
            [r.termination for r in results],
            [r.root_cause for r in results],
            [r.latency_s for r in results],
            [r.cost_usd for r in results],
            [r.input_tokens for r in results],
            [r.output_tokens for r in results],
            [r.error_category for r in results],
        )


@dataclass
class FrameExtras:
    """Aggregates of nested trial data (see module doc)."""

    graders: dict[str, dict[str, int]] = field(default_factory=dict)
    process: dict[str, float] = field(default_factory=dict)
    usage_by_role: dict[str, dict[str, Any]] = field(default_factory=dict)
    failures: dict[str, dict[str, int]] = field(default_factory=dict)
    process_totals: dict[str, float] = field(default_factory=dict)
    """Sum of each process metric over the trials that carry it."""
    failed_graders: dict[str, int] = field(default_factory=dict)
    """Gating graders that failed trials with reward 0: how many trials each failed."""
    model_calls: list[tuple[str, float | None, float | None, bool]] = field(default_factory=list)
    """Model calls not answered from the cache: (model, latency, time to first token,
    failed), for the per-model figures of :attr:`assay.metrics.Usage.by_model`."""

    def __post_init__(self) -> None:
        self.failures = {task: by_count(Counter(c)) for task, c in self.failures.items()}

    @classmethod
    def from_results(cls, results: Sequence[TrialResult]) -> FrameExtras:
        graders: dict[str, Counter[str]] = defaultdict(Counter)
        sums: dict[str, float] = defaultdict(float)
        counts: Counter[str] = Counter()
        usage: dict[str, dict[str, Any]] = {}
        failures: dict[str, Counter[str]] = defaultdict(Counter)
        failed_graders: Counter[str] = Counter()
        calls: list[tuple[str, float | None, float | None, bool]] = []
        for r in results:
            if r.transcript is not None:
                calls.extend(
                    (c.model, c.latency_s, c.ttft_s, c.failed)
                    for c in r.transcript.model_calls()
                    if c.source != "cache"
                )
            for g in r.grades:
                verdict = (
                    "skipped"
                    if g.skipped
                    else {True: "passed", False: "failed", None: "no_verdict"}[g.passed]
                )
                graders[g.grader][verdict] += 1
                graders[g.grader]["needs_review"] += g.needs_review
            for name, value in r.metrics.items():
                sums[name] += value
                counts[name] += 1
            for role, u in r.usage.items():
                add_usage(usage.setdefault(role, empty_usage()), u)
            if r.reward == 0:
                by = [g.grader for g in r.grades if g.gating and g.passed is False]
                failed_graders.update(by)
                failures[r.task_id].update(by or [r.termination])
        return cls(
            graders={name: dict(sorted(c.items())) for name, c in sorted(graders.items())},
            process={name: sums[name] / counts[name] for name in sorted(counts)},
            usage_by_role=dict(sorted(usage.items())),
            failures={task: by_count(c) for task, c in failures.items()},
            process_totals={name: sums[name] for name in sorted(counts)},
            failed_graders=by_count(failed_graders),
            model_calls=calls,
        )


def empty_usage() -> dict[str, Any]:
    return {**dict.fromkeys(USAGE_FIELDS, 0), "cost_usd": 0.0, "unpriced_trials": 0}


def add_usage(acc: dict[str, Any], u: dict[str, Any]) -> None:
    """Add one trial's usage of a role into ``acc`` (unknown cost counted apart)."""
    for key in USAGE_FIELDS:
        acc[key] += u.get(key) or 0
    if u.get("cost_usd") is None:
        acc["unpriced_trials"] += 1
    else:
        acc["cost_usd"] += u["cost_usd"]


def by_count(counts: Counter[str]) -> dict[str, int]:
    """Most frequent first, ties by name: the same order whichever way it was built."""
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
