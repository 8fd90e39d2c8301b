"""Retried trials: the trials of a run that ended in an error not the agent's, moved
to its attempts so that a resume runs them again, and the attempts read back."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import delete, exists, func, insert, or_, select
from sqlalchemy.exc import IntegrityError

from . import schema
from .codec import pack_line
from .trials import TrialRecords


class RetriedTrials(TrialRecords):
    """The retried-trial and attempt methods of :class:`~assay.store.store.Store`."""

    # retried trials -----------------------------------------------------------------
    def _retryable(self, run_id: str) -> Any:
        """Trials that ended in an error that is not the agent's and may pass on another
        attempt: a harness or environment error, or a gating grader that crashed."""
        t, g = schema.trials, schema.grades
        crashed = exists().where(
            g.c.run_id == t.c.run_id,
            g.c.task_id == t.c.task_id,
            g.c.trial_index == t.c.trial_index,
            g.c.gating,
            g.c.category == "grader_error",
        )
        return (t.c.run_id == run_id) & or_(
            t.c.termination.in_(("harness_error", "environment_error")), t.c.reward.is_(None) & crashed
        )

    def count_retryable(self, run_id: str) -> int:
        with self.engine.connect() as conn:
            query = select(func.count()).select_from(schema.trials).where(self._retryable(run_id))
            return int(conn.execute(query).scalar_one())

    def count_attempts(self, run_id: str) -> int:
        a = schema.attempts
        with self.engine.connect() as conn:
            return int(
                conn.execute(select(func.count()).select_from(a).where(a.c.run_id == run_id)).scalar_one()
            )

    def retry_errors(self, run_id: str) -> int:
        """Move the run's retryable trials (see :meth:`_retryable`) to its attempts, so
        they run again; in one transaction. Returns how many were moved."""
        t = schema.trials
        with self.engine.connect() as conn:
            keys: list[tuple[str, int]] = [
                (r.task_id, r.trial_index)
                for r in conn.execute(select(t.c.task_id, t.c.trial_index).where(self._retryable(run_id)))
            ]
        lines = {key: line for key in keys if (line := self._line(run_id, *key)) is not None}
        if not lines:
            return 0
        try:
            with self.engine.begin() as conn:
                self._move_to_attempts(conn, run_id, lines)
        except IntegrityError:  # another process moved them first (two resumes at once)
            return 0
        return len(lines)

    def _move_to_attempts(self, conn: Any, run_id: str, lines: dict[tuple[str, int], bytes]) -> None:
        t, a = schema.trials, schema.attempts
        for (task_id, index), line in lines.items():
            previous = conn.execute(
                select(func.count())
                .select_from(a)
                .where(a.c.run_id == run_id, a.c.task_id == task_id, a.c.trial_index == index)
            ).scalar_one()
            conn.execute(
                insert(a).values(
                    run_id=run_id, task_id=task_id, trial_index=index, attempt=previous + 1, data=line
                )
            )
            conn.execute(
                delete(t).where(t.c.run_id == run_id, t.c.task_id == task_id, t.c.trial_index == index)
            )

    def _line(self, run_id: str, task_id: str, index: int) -> bytes | None:
        """A stored trial, packed whole (None if it is gone: another process moved it)."""
        result = next((r for r in self.load_results(run_id, task_id) if r.trial_index == index), None)
        return None if result is None else pack_line(result, self.load_transcript(run_id, task_id, index))

    def load_attempts(self, run_id: str) -> list[tuple[int, bytes]]:
        """The run's failed attempts: (attempt number, packed trial line), in order."""
        a = schema.attempts
        query = (
            select(a.c.attempt, a.c.data)
            .where(a.c.run_id == run_id)
            .order_by(a.c.task_id, a.c.trial_index, a.c.attempt)
        )
        with self.engine.connect() as conn:
            return [(int(r.attempt), bytes(r.data)) for r in conn.execute(query)]

    def add_attempts(self, run_id: str, attempts: Iterable[tuple[str, int, int, bytes]]) -> None:
        """Store failed attempts (task id, trial index, attempt, packed line), as an import does."""
        rows = [
            {"run_id": run_id, "task_id": task, "trial_index": index, "attempt": n, "data": data}
            for task, index, n, data in attempts
        ]
        if rows:
            with self.engine.begin() as conn:
                conn.execute(insert(schema.attempts), rows)
