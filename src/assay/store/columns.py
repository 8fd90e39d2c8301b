"""A run read as columns and aggregates (one query each, kept for the next reader of
a finished run, see :mod:`.runcache`), and the gating graders that failed its trials."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Engine, select

from . import runcache, schema
from .frames import (
    GradeTuple,
    failed_grader_rows,
    frame_aggregates,
    frame_columns,
    grade_rows,
    graded_scores,
    value_rows,
    value_sums,
)
from .rows import _of_keys


class ColumnReads:
    """The column and aggregate reads of :class:`~assay.store.store.Store`."""

    engine: Engine
    read_only: str | None
    metric_columns: bool
    cache_min_trials: int

    def failed_graders(
        self, run_id: str, keys: list[tuple[str, int]] | None = None
    ) -> dict[tuple[str, int], list[str]]:
        """The gating graders that failed each trial (only trials some gating grader
        failed), by (task id, trial index); of the trials ``keys`` only, when given."""
        out: dict[tuple[str, int], list[str]] = {}
        if keys is None:
            rows = failed_grader_rows(self.engine, run_id)
        else:
            g = schema.grades
            rows = []
            with self.engine.connect() as conn:
                for start in range(0, len(keys), 500):
                    # gating failures are picked here, and kind (not in the covering index by
                    # grader) is read: otherwise SQLite, with no statistics, walks that index
                    # over every grade of the run instead of seeking the few trials' rows
                    columns = (g.c.task_id, g.c.trial_index, g.c.grader, g.c.position, g.c.gating, g.c.passed)
                    query = select(*columns, g.c.kind).where(_of_keys(g, run_id, keys[start : start + 500]))
                    rows.extend(r[:4] for r in conn.execute(query) if r.gating and r.passed is False)
            rows.sort(key=lambda r: (r[0], r[1], r[3]))
        for task_id, index, grader, _ in rows:
            out.setdefault((task_id, index), []).append(grader)
        return out

    def _cached(self, run_id: str, part: str, compute: Any, encode: Any, decode: Any) -> Any:
        """``compute()``, kept for the next reader when the run is finished (see :mod:`.runcache`)."""
        return runcache.cached(
            self.engine,
            run_id,
            part,
            compute,
            encode,
            decode,
            min_trials=self.cache_min_trials,
            writable=not self.read_only,
        )

    def frame_columns(self, run_id: str) -> dict[str, Any]:
        """A run's trials as columns (one query; for summaries of any size): the fields
        of a :class:`assay.metrics.TrialFrame`."""
        return self._cached(
            run_id,
            "frame",
            lambda: frame_columns(self.engine, run_id),
            runcache.encode_frame,
            runcache.decode_frame,
        )

    def grade_rows(self, run_id: str, kinds: Iterable[str]) -> list[GradeTuple]:
        """A run's grades of the given kinds with their metrics (for the RAG summary):
        the fields of :class:`assay.metrics.GradeRow`."""
        return grade_rows(self.engine, run_id, kinds)

    def graded_scores(self, run_id: str) -> list[tuple[str, str, float]]:
        """Scores of the run's graders that score beyond 0/1 (see :func:`.frames.graded_scores`)."""
        return self._cached(
            run_id,
            "graded_scores",
            lambda: graded_scores(self.engine, run_id),
            runcache.encode_scores,
            runcache.decode_scores,
        )

    def frame_aggregates(self, run_id: str) -> dict[str, Any]:
        """Grader, process-metric, usage and failure aggregates of a run (SQL): the
        fields of a :class:`assay.metrics.FrameExtras`."""
        return self._cached(
            run_id,
            "aggregates",
            lambda: frame_aggregates(self.engine, run_id, self.metric_columns),
            runcache.encode_aggregates,
            runcache.decode_aggregates,
        )

    def value_sums(self, run_id: str) -> list[tuple[str, str, float, int]]:
        """Per task and name, sum and count of the process metrics and grader scores
        (``score.<grader>``) of the run's counted trials (see :func:`frames.value_sums`)."""
        return self._cached(
            run_id,
            "value_sums",
            lambda: value_sums(self.engine, run_id, self.metric_columns),
            runcache.encode_value_sums,
            runcache.decode_value_sums,
        )

    def value_rows(self, run_id: str, name: str) -> list[tuple[str, int, float]]:
        """``(task id, trial index, value)`` of every trial of the run that carries a
        process metric or a grader score (``score.<grader>``)."""
        return value_rows(self.engine, run_id, name, self.metric_columns)
