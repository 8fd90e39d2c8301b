"""A run as stored: :class:`Run` reads a run's trials, columns, aggregates and summary
from the store, and :func:`pick_trial` chooses the trial of a task to show. Reading a run
needs none of the machinery that executes one (``assay show``, ``compare``, ``report``
and the viewer import this module, not :mod:`assay.runner.api`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.results import RunInfo, TaskMeta, TrialResult
from ..core.transcript import Transcript
from ..errors import AssayError
from ..metrics.best_at_k import score_stats
from ..metrics.frame import FrameExtras, TrialFrame
from ..metrics.rag_summary import RAG_STAGES, GradeRow, rag_summary
from ..metrics.safety import SAFETY_KINDS, safety_summary
from ..metrics.summary import RunSummary, summarize_run
from ..store.frames import concurrently
from ..store.store import Store


class Run:
    """The results of one configuration on one suite version, in the store.

    ``tasks`` (the run's task metadata) and ``results`` (every trial's full record,
    without transcripts) load on first use; ``summary()`` and ``frame()`` read columns
    and SQL aggregates instead, so they stay fast on runs of any size."""

    def __init__(
        self, info: RunInfo, tasks: list[TaskMeta] | None, results: list[TrialResult] | None, store: Store
    ):
        self.info, self.store = info, store
        self._tasks = tasks
        self._results = results
        self._frame: TrialFrame | None = None
        self._extras: FrameExtras | None = None
        self._summary: RunSummary | None = None
        self.derived: dict[str, Any] = {}
        """What other layers derive from a finished run and keep with it (compare's
        columns, so that a report reads them once)."""

    @property
    def run_id(self) -> str:
        return self.info.run_id

    @property
    def tasks(self) -> list[TaskMeta]:
        if self._tasks is None:
            self._tasks = self.store.load_tasks(self.run_id)
        return self._tasks

    @property
    def results(self) -> list[TrialResult]:
        if self._results is None:
            self._results = self.store.load_results(self.run_id)
        return self._results

    @classmethod
    def load(cls, run_id: str, store: Store | str | None = None) -> Run:
        st = store if isinstance(store, Store) else Store(store)
        info = st.get_run(st.resolve(run_id))  # a run id, or latest, latest~1...
        return cls(info, None, None, st)

    def frame(self) -> TrialFrame:
        """The run's trials as columns (see :class:`assay.metrics.TrialFrame`); kept
        once the run is finished."""
        if self._frame is not None:
            return self._frame
        frame = TrialFrame(**self.store.frame_columns(self.run_id))
        if self.info.status == "finished":
            self._frame = frame
        return frame

    def task_results(self, task_id: str) -> list[TrialResult]:
        """The trials of one task (without transcripts), in trial order."""
        if self._results is not None:
            return [r for r in self._results if r.task_id == task_id]
        return self.store.load_results(self.run_id, task_id)

    def transcript(self, task_id: str, trial_index: int = 0) -> Transcript | None:
        return self.store.load_transcript(self.run_id, task_id, trial_index)

    def extras(self) -> FrameExtras:
        """Aggregates of the run's grades, metrics and usage (SQL; see
        :class:`assay.metrics.FrameExtras`); kept once the run is finished."""
        if self._extras is not None:
            return self._extras
        extras = FrameExtras(**self.store.frame_aggregates(self.run_id))
        if self.info.status == "finished":
            self._extras = extras
        return extras

    def summary(self) -> RunSummary:
        """The run's summary: what ``assay run --json`` prints and every report reads
        (with ``rag`` when the suite has RAG graders: :func:`rag_summary`)."""
        if self._summary is not None:
            return self._summary

        def scores() -> list[tuple[str, str, float]]:
            return self.store.graded_scores(self.run_id)

        # The frame first, alone: read row by row, it would trade the GIL with another
        # row-by-row read at every row (two such reads in threads take twice as long as
        # one after the other); then the aggregates (the database works, Python waits)
        # while the graded scores are read.
        frame = self.frame()
        read: list[Callable[[], Any]] = [self.extras, scores]
        extras, scored = concurrently(self.store.engine, read)
        summary = summarize_run(self.info, frame, extras, self.tasks, self.store.count_attempts(self.run_id))
        summary.rag = rag_summary(GradeRow(*row) for row in self.store.grade_rows(self.run_id, RAG_STAGES))
        summary.scores = score_stats(scored, self.info.trials_per_task)
        safety_rows = self.store.grade_rows(self.run_id, SAFETY_KINDS)
        summary.safety = safety_summary(row[6] for row in safety_rows if not row[5])
        if self.info.status == "finished":
            self._summary = summary
        return summary

    def trials(self, keys: list[tuple[str, int]]) -> list[TrialResult]:
        """The trials with these (task id, trial index) keys (without transcripts), in
        the order given; keys the run does not have are left out."""
        return self.store.load_trials(self.run_id, keys)


def pick_trial(results: list[TrialResult], run_id: str, task_id: str, trial: int | None) -> TrialResult:
    """The trial of a task to show: the one asked for, else the first failure, else the
    first; AssayError (one sentence) when there is none."""
    if not results:
        raise AssayError(f"run {run_id} has no trials of task {task_id!r}")
    if trial is None:
        return next((r for r in results if r.reward == 0), results[0])
    for r in results:
        if r.trial_index == trial:
            return r
    raise AssayError(f"task {task_id!r} of run {run_id} has no trial {trial}")
