"""Pairing two runs of one suite version: per-trial values, task outcomes, matched units.

A *unit* is what the paired tests treat as one independent observation:

- ``match="task"`` (default): one unit per task both runs have counted trials of. Its
  binary outcome is the task's outcome (see :data:`TaskOutcome`; by default "solved in
  every trial", so the quality figure of a run is its pass^k); its continuous values
  are the means over the task's counted trials. Tasks are the independent draws of a
  suite, so tests over task units are valid however correlated a task's trials are.
- ``match="trial"``: one unit per (task id, trial index) both runs counted. Trials of a
  task share its difficulty, so continuous tests cluster on the task; McNemar on trial
  pairs treats them as independent and is optimistic when k > 1.

Trials whose reward is ``None`` (harness, environment or grader errors) are not the
agent's doing and are left out of every unit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from ..core.results import RunInfo, TaskMeta, TrialResult
from ..errors import AssayError
from ..metrics.frame import TrialFrame
from ..metrics.summary_model import RunSummary
from .outcomes import (
    BoolArray,
    TaskOutcome,
    passed_tasks,
)
from .rundata import FloatArray, IntArray, RunData

MatchBy = Literal["task", "trial"]


class RunLike(Protocol):
    """What pairing needs of a run (``assay.runner.api.Run`` has it)."""

    @property
    def info(self) -> RunInfo: ...

    @property
    def tasks(self) -> list[TaskMeta]: ...

    @property
    def results(self) -> list[TrialResult]: ...

    def summary(self) -> RunSummary: ...

    def frame(self) -> TrialFrame: ...

    def task_results(self, task_id: str) -> list[TrialResult]: ...


@dataclass(frozen=True)
class Unit:
    """One paired observation: baseline (a) and candidate (b) outcome and values."""

    task_id: str
    trial_index: int | None
    a_pass: bool
    b_pass: bool
    a: Mapping[str, float]
    b: Mapping[str, float]
    a_trials: tuple[int, int]
    b_trials: tuple[int, int]


@dataclass
class Pairing:
    """Two runs matched task by task (or trial by trial), ready for paired tests, as
    columns: one entry per *task unit* (common tasks with counted trials in both runs,
    sorted) and per *unit* (the task units, or with ``match="trial"`` the common trials).

    ``a_pass``/``b_pass`` are the units' outcomes; :meth:`values` gives a metric per
    unit; :attr:`units` and :attr:`task_units` build :class:`Unit` objects on demand
    (for small comparisons and tests; the analysis reads the columns)."""

    a: RunData
    b: RunData
    match: MatchBy
    task_outcome: TaskOutcome
    task_ids: list[str]
    a_task: IntArray
    """Code in ``a.task_ids`` of each task unit (``b_task`` likewise)."""
    b_task: IntArray
    a_counts: tuple[IntArray, IntArray]
    """(successes, counted trials) of each task unit in run a (``b_counts`` likewise)."""
    b_counts: tuple[IntArray, IntArray]
    task_a_pass: BoolArray
    task_b_pass: BoolArray
    unit_task: IntArray
    """Task unit of each unit."""
    unit_trial: npt.NDArray[np.int64] | None
    """Trial index of each unit (``match="trial"``), else None."""
    a_rows: IntArray | None
    """Counted-trial row in run a of each trial unit (``b_rows`` likewise)."""
    b_rows: IntArray | None
    only_a: list[str]
    only_b: list[str]
    notes: list[str]
    _values: dict[str, tuple[FloatArray, FloatArray]] = field(default_factory=dict, repr=False)

    @property
    def n_units(self) -> int:
        return int(self.unit_task.size)

    @property
    def n_tasks(self) -> int:
        return len(self.task_ids)

    @property
    def a_pass(self) -> BoolArray:
        if self.a_rows is None:
            return self.task_a_pass
        return np.asarray(self.a.base["success"][self.a_rows] == 1.0)

    @property
    def b_pass(self) -> BoolArray:
        if self.b_rows is None:
            return self.task_b_pass
        return np.asarray(self.b.base["success"][self.b_rows] == 1.0)

    @property
    def tasks(self) -> dict[str, TaskMeta]:
        return {t: self.a.tasks.get(t, TaskMeta(t)) for t in self.task_ids}

    def values(self, name: str) -> tuple[FloatArray, FloatArray]:
        """``name`` per unit in run a and run b (NaN where a unit lacks it): the mean over
        the task's counted trials for task units, the trial's value for trial units."""
        if name not in self._values:
            if self.a_rows is None or self.b_rows is None:
                pair = (self.a.per_task_mean(name)[self.a_task], self.b.per_task_mean(name)[self.b_task])
            else:
                pair = (self.a.per_trial(name)[self.a_rows], self.b.per_trial(name)[self.b_rows])
            self._values[name] = pair
        return self._values[name]

    def metric_names(self) -> set[str]:
        return self.a.metric_names() | self.b.metric_names()

    def _build(self, trial_units: bool) -> list[Unit]:
        names = sorted(self.metric_names())
        if trial_units:
            columns = {n: self.values(n) for n in names}
            tasks, a_pass, b_pass = self.unit_task, self.a_pass, self.b_pass
        else:
            columns = {
                n: (self.a.per_task_mean(n)[self.a_task], self.b.per_task_mean(n)[self.b_task]) for n in names
            }
            tasks = np.arange(self.n_tasks, dtype=np.intp)
            a_pass, b_pass = self.task_a_pass, self.task_b_pass
        units = []
        for u, task in enumerate(tasks.tolist()):
            a = {n: float(v[0][u]) for n, v in columns.items() if not np.isnan(v[0][u])}
            b = {n: float(v[1][u]) for n, v in columns.items() if not np.isnan(v[1][u])}
            if trial_units and self.unit_trial is not None:
                index: int | None = int(self.unit_trial[u])
                at, bt = (int(a["success"]), 1), (int(b["success"]), 1)
            else:
                index = None
                at = (int(self.a_counts[0][task]), int(self.a_counts[1][task]))
                bt = (int(self.b_counts[0][task]), int(self.b_counts[1][task]))
            units.append(Unit(self.task_ids[task], index, bool(a_pass[u]), bool(b_pass[u]), a, b, at, bt))
        return units

    @property
    def units(self) -> list[Unit]:
        return self._build(self.unit_trial is not None)

    @property
    def task_units(self) -> list[Unit]:
        return self._build(False)


def _common_tasks(
    a: RunData, b: RunData, common_only: bool
) -> tuple[list[str], list[str], list[str], list[str]]:
    notes: list[str] = []
    same_suite = a.info.suite_hash == b.info.suite_hash
    if not same_suite and not common_only:
        raise AssayError(
            f"runs {a.run_id} (suite {a.info.suite_name} v{a.info.suite_version}, hash "
            f"{a.info.suite_hash}) and {b.run_id} (suite {b.info.suite_name} v{b.info.suite_version}, "
            f"hash {b.info.suite_hash}) were made on different suite versions; pass --common-only "
            "(common_only=True) to compare them on the tasks they share"
        )
    ids_a, ids_b = set(a.tasks), set(b.tasks)
    common = ids_a & ids_b
    if not same_suite:
        changed = {t for t in common if a.tasks[t].task_hash != b.tasks[t].task_hash}
        common -= changed
        notes.append(
            f"different suite versions ({a.run_id}: {a.info.suite_name} v{a.info.suite_version} hash "
            f"{a.info.suite_hash}; {b.run_id}: {b.info.suite_name} v{b.info.suite_version} hash "
            f"{b.info.suite_hash}): compared only on the {len(common)} task(s) both versions share with the "
            f"same content; left out: {len(changed)} changed, {len(ids_a - ids_b)} only in {a.run_id}, "
            f"{len(ids_b - ids_a)} only in {b.run_id}"
        )
        if changed:
            notes.append(
                f"{len(changed)} task(s) with the same id differ in content between the suite versions "
                "and were left out"
            )
    elif a.info.seed != b.info.seed:
        notes.append(
            f"the runs used different seeds ({a.info.seed} and {b.info.seed}): templated tasks are "
            "paired by id but are different instances"
        )
    pa, pb = a.info.config.prompt_version, b.info.config.prompt_version
    if pa != pb:
        notes.append(
            f"the runs differ in prompt ({pa or 'none'} vs {pb or 'none'}): "
            f"assay prompt diff {a.run_id} {b.run_id} shows what changed"
        )
    if not common:
        raise AssayError(f"runs {a.run_id} and {b.run_id} share no task, so there is nothing to pair")
    only_a, only_b = sorted(ids_a - ids_b), sorted(ids_b - ids_a)
    if (only_a or only_b) and same_suite:
        notes.append(
            f"compared on {len(common)} common task(s); {len(only_a)} only in {a.run_id}, "
            f"{len(only_b)} only in {b.run_id}"
        )
    return sorted(common), only_a, only_b, notes


def aligned_k(a: RunData, b: RunData) -> tuple[RunData, RunData, str | None]:
    """Runs of different trials per task compared on the same k: the smaller one, using
    each task's first k trials of both (pass^4 is never put against pass^8)."""
    ka, kb = a.info.trials_per_task, b.info.trials_per_task
    if ka == kb:
        return a, b, None
    k = min(ka, kb)

    note = (
        f"{a.run_id} has {ka} trials per task and {b.run_id} has {kb}: both are compared on "
        f"the first {k} trials of each task"
    )
    return a.first_trials(k), b.first_trials(k), note


def pair_runs(
    a: RunLike | RunData,
    b: RunLike | RunData,
    *,
    match: MatchBy = "task",
    task_outcome: TaskOutcome = "all",
    common_only: bool = False,
) -> Pairing:
    """Match run ``b`` (candidate) against run ``a`` (baseline).

    Runs of different suite versions (content hashes) are refused with an
    :class:`~assay.errors.AssayError` unless ``common_only``; then only tasks with the
    same id *and* content are compared.
    """
    if match not in ("task", "trial"):
        raise AssayError(f"match must be 'task' or 'trial', not {match!r}")
    if task_outcome not in ("majority", "all", "any"):
        raise AssayError(f"task outcome must be 'majority', 'all' or 'any', not {task_outcome!r}")
    ra = a if isinstance(a, RunData) else RunData.of(a)
    rb = b if isinstance(b, RunData) else RunData.of(b)
    ra, rb, k_note = aligned_k(ra, rb)
    common, only_a, only_b, notes = _common_tasks(ra, rb, common_only)
    notes = [*([k_note] if k_note else []), *notes]
    code_a = {t: i for i, t in enumerate(ra.task_ids)}
    code_b = {t: i for i, t in enumerate(rb.task_ids)}
    kept = [t for t in common if t in code_a and t in code_b]
    dropped = len(common) - len(kept)
    if dropped:
        notes.append(f"{dropped} common task(s) had no counted trial in one of the runs and were left out")
    if not kept:
        raise AssayError(f"runs {ra.run_id} and {rb.run_id} have no task with counted trials in both")
    a_task = np.array([code_a[t] for t in kept], dtype=np.intp)
    b_task = np.array([code_b[t] for t in kept], dtype=np.intp)
    (ca, na), (cb, nb) = ra.task_counts(), rb.task_counts()
    a_counts, b_counts = (ca[a_task], na[a_task]), (cb[b_task], nb[b_task])
    task_a_pass = passed_tasks(*a_counts, task_outcome)
    task_b_pass = passed_tasks(*b_counts, task_outcome)
    unit_task = np.arange(len(kept), dtype=np.intp)
    unit_trial = a_rows = b_rows = None
    if match == "trial":
        a_rows, b_rows, unit_task, unit_trial = _common_trials(ra, rb, a_task, b_task)
    return Pairing(
        ra,
        rb,
        match,
        task_outcome,
        kept,
        a_task,
        b_task,
        a_counts,
        b_counts,
        task_a_pass,
        task_b_pass,
        unit_task,
        unit_trial,
        a_rows,
        b_rows,
        only_a,
        only_b,
        notes,
    )


def _common_trials(
    ra: RunData, rb: RunData, a_task: IntArray, b_task: IntArray
) -> tuple[IntArray, IntArray, IntArray, npt.NDArray[np.int64]]:
    """The (task, trial index) keys counted in both runs, in task then trial order: the
    rows in each run, the task unit and the trial index of each."""
    span = int(max(ra.trial_index.max(initial=0), rb.trial_index.max(initial=0))) + 1

    def keys(run: RunData, tasks: IntArray) -> npt.NDArray[np.int64]:
        unit_of = np.full(len(run.task_ids), -1, dtype=np.int64)
        unit_of[tasks] = np.arange(tasks.size)
        unit = unit_of[run.task]
        return np.where(unit >= 0, unit * span + run.trial_index, -1)

    ka, kb = keys(ra, a_task), keys(rb, b_task)
    common, rows_a, rows_b = np.intersect1d(ka[ka >= 0], kb[kb >= 0], assume_unique=True, return_indices=True)
    rows_a = np.flatnonzero(ka >= 0)[rows_a]
    rows_b = np.flatnonzero(kb >= 0)[rows_b]
    return rows_a.astype(np.intp), rows_b.astype(np.intp), (common // span).astype(np.intp), common % span
