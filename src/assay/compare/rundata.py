"""One run reduced to what comparisons read, as columns.

A :class:`RunData` holds one entry per *counted* trial (reward not None), in (task id,
trial index) order: the task's code, the trial index, and the numbers every trial has
(success, failure, latency, cost, tokens). Process metrics (``turns``, ``tool_errors``,
...) and grader scores (``score.<grader>``) come from an :class:`ExtraValues` source:
per-task sums computed by the database, and one column per metric only when a
comparison needs trial-level values (``match="trial"``, or a box profile that scores
the metric). Nothing here builds one object per trial, so a million trials compare in
seconds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ..core.results import RunInfo, TaskMeta, TrialResult
from ..metrics.frame import TrialFrame

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]

#: Per-trial numbers read from the trials' own columns.
BASE_VALUES = ("success", "failure", "latency_s", "cost_usd", "input_tokens", "output_tokens")


class ExtraValues(Protocol):
    """Process metrics and grader scores of a run's counted trials."""

    def sums(self) -> list[tuple[str, str, float, int]]:
        """``(task id, name, sum, count)`` per task and name."""
        ...

    def rows(self, name: str) -> list[tuple[str, int, float]]:
        """``(task id, trial index, value)`` of the trials that carry ``name``."""
        ...


@dataclass
class StoreValues:
    """:class:`ExtraValues` of a stored run, read with SQL."""

    store: Any
    run_id: str

    def sums(self) -> list[tuple[str, str, float, int]]:
        rows: list[tuple[str, str, float, int]] = self.store.value_sums(self.run_id)
        return rows

    def rows(self, name: str) -> list[tuple[str, int, float]]:
        rows: list[tuple[str, int, float]] = self.store.value_rows(self.run_id, name)
        return rows


class ResultValues:
    """:class:`ExtraValues` of in-memory counted results (sorted by task and trial)."""

    def __init__(self, counted: Sequence[TrialResult]):
        self._rows = [_extra_values(r) for r in counted]
        self._tasks = [r.task_id for r in counted]
        self._index = [r.trial_index for r in counted]

    def sums(self) -> list[tuple[str, str, float, int]]:
        """Per task and name (a grader named twice in a trial: its last verdict)."""
        acc: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0])
        for task_id, values in zip(self._tasks, self._rows, strict=True):
            for name, value in values.items():
                cell = acc[(task_id, name)]
                cell[0] += value
                cell[1] += 1
        return [(task, name, total, int(n)) for (task, name), (total, n) in acc.items()]

    def rows(self, name: str) -> list[tuple[str, int, float]]:
        return [
            (t, i, v[name]) for t, i, v in zip(self._tasks, self._index, self._rows, strict=True) if name in v
        ]


@dataclass
class FirstTrials:
    """:class:`ExtraValues` of another source, restricted to trial indices below ``k``."""

    extra: ExtraValues
    k: int

    def sums(self) -> list[tuple[str, str, float, int]]:
        acc: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0])
        for name in sorted({name for _, name, _, _ in self.extra.sums()}):
            for task_id, _, value in self.rows(name):
                cell = acc[(task_id, name)]
                cell[0] += value
                cell[1] += 1
        return [(task, name, total, int(n)) for (task, name), (total, n) in acc.items()]

    def rows(self, name: str) -> list[tuple[str, int, float]]:
        return [row for row in self.extra.rows(name) if row[1] < self.k]


def _extra_values(result: TrialResult) -> dict[str, float]:
    """A trial's process metrics and grader scores (a grader named twice: the last)."""
    values = {key: float(value) for key, value in result.metrics.items() if key not in BASE_VALUES}
    for grade in result.grades:
        if grade.score is not None and not grade.skipped:
            values[f"score.{grade.grader}"] = float(grade.score)
    return values


@dataclass
class RunData:
    """One run as columns of its counted trials (see the module doc)."""

    run_id: str
    label: str
    info: RunInfo
    tasks: dict[str, TaskMeta]
    task_ids: list[str]
    """Tasks with at least one counted trial, sorted; ``task`` indexes it."""
    task: IntArray
    trial_index: npt.NDArray[np.int64]
    base: dict[str, FloatArray]
    excluded: int
    extra: ExtraValues = field(repr=False)
    _sums: dict[str, tuple[FloatArray, FloatArray]] | None = field(default=None, repr=False)
    _trial_cache: dict[str, FloatArray] = field(default_factory=dict, repr=False)

    # building ----------------------------------------------------------------------
    @classmethod
    def of(cls, run: Any) -> RunData:
        """From a stored run (``assay.runner.Run``: columns and SQL) or any run-like
        object with ``info``, ``tasks`` and ``results`` (objects, for small runs)."""
        derived = getattr(run, "derived", None)  # a finished Run keeps what layers derive
        if isinstance(derived, dict) and isinstance(derived.get("compare.rundata"), RunData):
            return derived["compare.rundata"]
        store = getattr(run, "store", None)
        if store is not None and hasattr(store, "value_sums") and hasattr(run, "frame"):
            data = cls.from_frame(run.info, run.tasks, run.frame(), StoreValues(store, run.info.run_id))
        else:
            data = cls.from_results(run.info, run.tasks, run.results)
        if isinstance(derived, dict) and run.info.status == "finished":
            derived["compare.rundata"] = data
        return data

    @classmethod
    def from_results(
        cls, info: RunInfo, tasks: Sequence[TaskMeta], results: Sequence[TrialResult]
    ) -> RunData:
        ordered = sorted(results, key=lambda r: (r.task_id, r.trial_index))
        counted = [r for r in ordered if r.reward is not None]
        return cls.from_frame(info, tasks, TrialFrame.from_results(ordered), ResultValues(counted))

    @classmethod
    def from_frame(
        cls, info: RunInfo, tasks: Sequence[TaskMeta], frame: TrialFrame, extra: ExtraValues
    ) -> RunData:
        """From a frame (any row order) and the extra values of its counted trials in
        (task id, trial index) order."""
        names = np.asarray(frame.task_ids, dtype=object)
        by_name = np.argsort(names, kind="stable")
        rank = np.empty(names.size, dtype=np.intp)
        rank[by_name] = np.arange(names.size)
        task_rank = rank[frame.task]
        order = np.lexsort((frame.trial_index, task_rank))
        counted = order[~np.isnan(frame.reward[order])]
        used, codes = np.unique(task_rank[counted], return_inverse=True)
        success = frame.reward[counted]
        base = {
            "success": success,
            "failure": 1.0 - success,
            "latency_s": frame.latency_s[counted].astype(np.float64),
            "cost_usd": frame.cost_usd[counted],
            "input_tokens": frame.input_tokens[counted],
            "output_tokens": frame.output_tokens[counted],
        }
        return cls(
            run_id=info.run_id,
            label=info.config.agent,
            info=info,
            tasks={t.task_id: t for t in tasks},
            task_ids=[str(names[by_name[u]]) for u in used],
            task=codes.astype(np.intp),
            trial_index=frame.trial_index[counted],
            base=base,
            excluded=int(len(frame) - counted.size),
            extra=extra,
        )

    def first_trials(self, k: int) -> RunData:
        """The run restricted to each task's first ``k`` trials (trial index below ``k``),
        to compare runs of different trials per task on the same k."""
        keep = self.trial_index < k
        used, codes = np.unique(self.task[keep], return_inverse=True)
        return RunData(
            run_id=self.run_id,
            label=self.label,
            info=self.info,
            tasks=self.tasks,
            task_ids=[self.task_ids[u] for u in used],
            task=codes.astype(np.intp),
            trial_index=self.trial_index[keep],
            base={name: values[keep] for name, values in self.base.items()},
            excluded=self.excluded,
            extra=FirstTrials(self.extra, k),
        )

    # reading -----------------------------------------------------------------------
    @property
    def counted(self) -> int:
        """How many counted trials the run has."""
        return int(self.task.size)

    def task_counts(self) -> tuple[IntArray, IntArray]:
        """Per task (``task_ids`` order): successes and counted trials."""
        size = len(self.task_ids)
        n = np.bincount(self.task, minlength=size)
        c = np.bincount(self.task, weights=self.base["success"], minlength=size).round()
        return c.astype(np.intp), n.astype(np.intp)

    def _extra_sums(self) -> dict[str, tuple[FloatArray, FloatArray]]:
        if self._sums is None:
            size = len(self.task_ids)
            sums: dict[str, tuple[FloatArray, FloatArray]] = {}
            rows = self.extra.sums()
            if rows:
                tasks, names, totals, counts = zip(*rows, strict=True)
                code = {t: i for i, t in enumerate(self.task_ids)}
                codes = np.fromiter((code.get(t, -1) for t in tasks), dtype=np.intp, count=len(rows))
                name_of = np.asarray(names, dtype=object)
                total, count = np.asarray(totals, dtype=np.float64), np.asarray(counts, dtype=np.float64)
                for name in sorted(set(names) - set(BASE_VALUES)):
                    pick = (name_of == name) & (codes >= 0)
                    sums[name] = (
                        np.bincount(codes[pick], weights=total[pick], minlength=size).astype(np.float64),
                        np.bincount(codes[pick], weights=count[pick], minlength=size).astype(np.float64),
                    )
            self._sums = sums
        return self._sums

    def prefetch(self) -> RunData:
        """Read what comparisons will ask for now (the per-task sums), e.g. in a thread
        while another run loads."""
        self._extra_sums()
        return self

    def metric_names(self) -> set[str]:
        """Every number at least one counted trial carries."""
        names = {n for n, v in self.base.items() if v.size and not np.all(np.isnan(v))}
        return names | {n for n, (_, count) in self._extra_sums().items() if count.sum() > 0}

    def measured(self, name: str) -> int:
        """How many counted trials carry ``name``."""
        if name in self.base:
            return int(np.count_nonzero(~np.isnan(self.base[name])))
        sums = self._extra_sums().get(name)
        return 0 if sums is None else int(sums[1].sum())

    def per_task_mean(self, name: str) -> FloatArray:
        """Per task, the mean of ``name`` over its counted trials that carry it (NaN
        where none does)."""
        size = len(self.task_ids)
        total: FloatArray
        count: FloatArray
        if name in self.base:
            values = self.base[name]
            have = ~np.isnan(values)
            total = np.bincount(self.task[have], weights=values[have], minlength=size).astype(np.float64)
            count = np.bincount(self.task[have], minlength=size).astype(np.float64)
        else:
            total, count = self._extra_sums().get(name, (np.zeros(size), np.zeros(size)))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, total / np.where(count > 0, count, 1.0), np.nan)

    def per_trial(self, name: str) -> FloatArray:
        """``name`` for every counted trial (NaN where a trial has none)."""
        if name in self.base:
            return self.base[name]
        if name not in self._trial_cache:
            self._trial_cache[name] = self._align(self.extra.rows(name) if self.measured(name) else [])
        return self._trial_cache[name]

    def _align(self, rows: list[tuple[str, int, float]]) -> FloatArray:
        """Values given by (task id, trial index) as one per counted trial."""
        out = np.full(self.counted, np.nan)
        if not rows:
            return out
        code = {t: i for i, t in enumerate(self.task_ids)}
        tasks, index, values = zip(*rows, strict=True)
        row_task = np.fromiter((code.get(t, -1) for t in tasks), dtype=np.int64, count=len(tasks))
        row_index = np.asarray(index, dtype=np.int64)
        span = int(max(self.trial_index.max(initial=0), row_index.max(initial=0))) + 1
        keys = self.task.astype(np.int64) * span + self.trial_index  # ascending: task, then trial
        known = row_task >= 0
        wanted = row_task[known] * span + row_index[known]
        pos = np.minimum(np.searchsorted(keys, wanted), max(self.counted - 1, 0))
        hit = keys[pos] == wanted
        out[pos[hit]] = np.asarray(values, dtype=np.float64)[known][hit]  # repeated keys: the last
        return out
