"""Trials in the store: writing finished trials (each whole, in one transaction) and
reading them and their transcripts back."""

from __future__ import annotations

from dataclasses import replace
from operator import itemgetter
from typing import Any

from pydantic_core import PydanticSerializationError
from sqlalchemy import Engine, select
from sqlalchemy.exc import DataError, IntegrityError

from ..core.results import TrialResult
from ..core.transcript import Transcript
from . import bulk, schema
from .codec import decode_record, decode_transcript, grade_from_row, unicode_text
from .rows import _of_keys, _rows


class TrialRecords:
    """The trial and transcript methods of :class:`~assay.store.store.Store`."""

    engine: Engine

    # trials -------------------------------------------------------------------------
    def completed_keys(self, run_id: str) -> set[tuple[str, int]]:
        t = schema.trials
        with self.engine.connect() as conn:
            rows = conn.execute(select(t.c.task_id, t.c.trial_index).where(t.c.run_id == run_id))
            return {(r.task_id, r.trial_index) for r in rows}

    def write_trial(self, result: TrialResult) -> bool:
        """Write one finished trial atomically. False if it was already there."""
        return self.write_trials([result]) == 1

    def write_trials(self, results: list[TrialResult]) -> int:
        """Write finished trials in one transaction (each trial whole: its row with its
        process metrics, grades and transcript). A trial already stored is skipped, never duplicated. Returns
        how many were written."""
        if not results:
            return 0
        try:
            rows = [_rows(r) for r in results]
        except (UnicodeEncodeError, PydanticSerializationError) as exc:
            return self._write_unicode(results, exc)
        try:
            with self.engine.begin() as conn:
                self._insert(conn, schema.trials, [r[0] for r in rows])
                self._insert(conn, schema.grades, [g for r in rows for g in r[1]])
                self._insert(conn, schema.transcripts, [r[2] for r in rows if r[2] is not None])
                self._insert(conn, schema.trial_metrics, [m for r in rows for m in r[3]])
                self._insert(conn, schema.trial_usage, [u for r in rows for u in r[4]])
                self._insert(conn, schema.trial_calls, [c for r in rows for c in r[5]])
            return len(results)
        except IntegrityError:
            if len(results) == 1:
                return 0
        except UnicodeEncodeError as exc:  # the driver refused a text column's value
            return self._write_unicode(results, exc)
        except DataError as exc:
            if "NUL (0x00)" not in str(exc.orig):  # PostgreSQL: text columns hold no NUL
                raise
            return self._write_unicode(results, exc, nul=True)
        # some were already there (another writer): write the others one by one
        return sum(self.write_trials([r]) for r in results)

    def _write_unicode(self, results: list[TrialResult], error: Exception, nul: bool = False) -> int:
        """Write trials whose text holds an unpaired surrogate (no encoder writes one: a
        model endpoint's JSON ``\\ud800`` escape decodes to it) with U+FFFD in its
        place; with ``nul``, the NULs of their text columns too (PostgreSQL holds none; the
        transcript, stored as bytes, keeps them). ``error`` (the encoder's or the
        database's) is raised if that was not its cause."""
        cleaned, changed = [], False
        for result in results:
            kept = replace(result, transcript=None) if nul else result
            clean = unicode_text(kept, nul=nul)
            changed = changed or clean is not kept
            cleaned.append(replace(clean, transcript=result.transcript) if nul else clean)
        if not changed:
            raise error
        return self.write_trials(cleaned)

    def _insert(self, conn: Any, table: Any, rows: list[dict[str, Any]]) -> None:
        """Insert many rows. With positional DBAPI placeholders (SQLite, psycopg) they go
        as a few multi-row statements (:mod:`assay.store.bulk`)."""
        if not rows:
            return
        dialect = self.engine.dialect
        mark = bulk.mark_of(dialect.paramstyle)
        if mark is None:
            conn.execute(table.insert(), rows)
            return
        columns = list(rows[0])
        pick = itemgetter(*columns)
        values = list(map(pick, rows)) if len(columns) > 1 else [(pick(row),) for row in rows]
        head = f"INSERT INTO {table.name} ({', '.join(columns)})"
        bulk.insert_many(conn, dialect.name, mark, head, len(columns), values)

    def load_results(self, run_id: str, task_id: str | None = None) -> list[TrialResult]:
        """Trial results of a run (without transcripts), in task and trial order."""
        t, g = schema.trials, schema.grades
        trial_q = select(t.c.task_id, t.c.trial_index, t.c.record).where(t.c.run_id == run_id)
        grade_q = select(g).where(g.c.run_id == run_id)
        if task_id is not None:
            trial_q = trial_q.where(t.c.task_id == task_id)
            grade_q = grade_q.where(g.c.task_id == task_id)
        with self.engine.connect() as conn:
            grades_by_key: dict[tuple[str, int], list[Any]] = {}
            for row in conn.execute(grade_q.order_by(g.c.task_id, g.c.trial_index, g.c.position)):
                grades_by_key.setdefault((row.task_id, row.trial_index), []).append(grade_from_row(row))
            rows = conn.execute(trial_q.order_by(t.c.task_id, t.c.trial_index)).all()
        return [decode_record(r.record, grades_by_key.get((r.task_id, r.trial_index), [])) for r in rows]

    def load_trials(self, run_id: str, keys: list[tuple[str, int]]) -> list[TrialResult]:
        """The trials with these (task id, trial index) keys (without transcripts), in the
        order given; keys the run does not have are left out."""
        t, g = schema.trials, schema.grades
        found: dict[tuple[str, int], TrialResult] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                grades: dict[tuple[str, int], list[Any]] = {}
                grade_q = select(g).where(_of_keys(g, run_id, chunk))
                for row in conn.execute(grade_q.order_by(g.c.task_id, g.c.trial_index, g.c.position)):
                    grades.setdefault((row.task_id, row.trial_index), []).append(grade_from_row(row))
                trial_q = select(t.c.task_id, t.c.trial_index, t.c.record).where(_of_keys(t, run_id, chunk))
                for r in conn.execute(trial_q):
                    k = (r.task_id, r.trial_index)
                    found[k] = decode_record(r.record, grades.get(k, []))
        return [found[k] for k in keys if k in found]

    def load_transcripts(self, run_id: str, task_id: str) -> dict[int, Transcript]:
        """Every stored transcript of one task of a run, by trial index."""
        tr = schema.transcripts
        query = select(tr.c.trial_index, tr.c.data).where(tr.c.run_id == run_id, tr.c.task_id == task_id)
        with self.engine.connect() as conn:
            return {row.trial_index: decode_transcript(row.data) for row in conn.execute(query)}

    def load_transcripts_of(
        self, run_id: str, keys: list[tuple[str, int]]
    ) -> dict[tuple[str, int], Transcript]:
        """The stored transcripts of these (task id, trial index) trials, by key (a few
        queries of 500 keys, not one per trial); trials without one are left out."""
        tr = schema.transcripts
        out: dict[tuple[str, int], Transcript] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                query = select(tr.c.task_id, tr.c.trial_index, tr.c.data).where(_of_keys(tr, run_id, chunk))
                for row in conn.execute(query):
                    out[(row.task_id, row.trial_index)] = decode_transcript(row.data)
        return out

    def load_transcript(self, run_id: str, task_id: str, trial_index: int) -> Transcript | None:
        tr = schema.transcripts
        with self.engine.connect() as conn:
            row = conn.execute(
                select(tr.c.data).where(
                    tr.c.run_id == run_id, tr.c.task_id == task_id, tr.c.trial_index == trial_index
                )
            ).first()
        return None if row is None else decode_transcript(row.data)
