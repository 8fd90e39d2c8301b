"""``assay view --redact``: what the viewer reads of trials comes back redacted.

Two doors, both here, so no page redacts for itself:

- :class:`RedactedRun`, the :class:`~assay.runner.stored.Run` the run cache hands every
  page when the app has a redactor: its trial reads (``results``, ``task_results``,
  ``trials``, ``transcript``) return each trial redacted on its own;
- :func:`load_trial` (and :func:`read_trial` over a run): one trial with its
  transcript, redacted together, as ``assay show RUN --task T --redact`` shows it (the
  same pseudonyms for the same trial: :func:`assay.redact.redact_trial` is deterministic).

What the viewer shows besides trials comes from columns (rewards, terminations,
categories, root-cause layers, timings, counts), which redaction keeps as they are, so
the figures are those of the unredacted run. Badcase documents (their evidence was
redacted when they were made, with the redactor of that day) go through
:func:`redact_badcase` with the view's redactor.
"""

from __future__ import annotations

from typing import Any

from ..core.results import TrialResult
from ..core.transcript import Transcript
from ..redact import Redactor, redact_trial
from ..runner.stored import Run
from ..store import Store

#: The free-text parts of a badcase document; ids, versions, status and dates are kept.
_BADCASE_TEXT = ("evidence", "signature", "phenomenon", "root_cause", "owner")


def shown(
    result: TrialResult, transcript: Transcript | None, redactor: Redactor | None
) -> tuple[TrialResult, Transcript | None]:
    """A trial as the viewer shows it: redacted in one session when there is a redactor."""
    if redactor is None:
        return result, transcript
    done = redact_trial(result, transcript, redactor)
    return done.result, done.transcript


def load_trial(
    store: Store, run_id: str, task_id: str, index: int, redactor: Redactor | None
) -> tuple[TrialResult, Transcript | None] | None:
    """One trial of a stored run and its transcript (None when the run has no such
    trial), redacted together by ``redactor``."""
    found = store.load_trials(run_id, [(task_id, index)])
    if not found:
        return None
    return shown(found[0], store.load_transcript(run_id, task_id, index), redactor)


class RedactedRun(Run):
    """A stored run whose trials come back redacted, each with its own pseudonyms (the
    figures, read from columns and SQL aggregates, are the run's own)."""

    def __init__(self, run: Run, redactor: Redactor):
        super().__init__(run.info, run.tasks, None, run.store)
        self.redactor = redactor
        self._redacted: list[TrialResult] | None = None

    def _one(self, result: TrialResult) -> TrialResult:
        return redact_trial(result, None, self.redactor).result

    @property
    def results(self) -> list[TrialResult]:
        if self._redacted is None:
            self._redacted = [self._one(r) for r in super().results]
        return self._redacted

    def task_results(self, task_id: str) -> list[TrialResult]:
        if self._redacted is not None:
            return [r for r in self._redacted if r.task_id == task_id]
        return [self._one(r) for r in super().task_results(task_id)]

    def trials(self, keys: list[tuple[str, int]]) -> list[TrialResult]:
        return [self._one(r) for r in super().trials(keys)]

    def transcript(self, task_id: str, trial_index: int = 0) -> Transcript | None:
        """The trial's transcript, redacted with its trial (None without the trial)."""
        found = load_trial(self.store, self.run_id, task_id, trial_index, self.redactor)
        return None if found is None else found[1]


def read_trial(run: Run, task_id: str, index: int) -> tuple[TrialResult, Transcript | None] | None:
    """One trial of ``run`` with its transcript, redacted together when ``run`` is a
    :class:`RedactedRun`: what a page showing a transcript reads."""
    redactor = run.redactor if isinstance(run, RedactedRun) else None
    return load_trial(run.store, run.run_id, task_id, index, redactor)


def redact_badcase(case: dict[str, Any], redactor: Redactor | None) -> dict[str, Any]:
    """A badcase document with its free text (evidence, signature, phenomenon, root
    cause, owner, link notes, history values) redacted in one session."""
    if redactor is None:
        return case
    session = redactor.session()
    text = {k: case[k] for k in _BADCASE_TEXT if k in case}
    text["links"] = [link.get("note", "") for link in case.get("links") or []]
    text["history"] = [[h.get("old"), h.get("new")] for h in case.get("history") or []]
    out = session.redact(text)
    links = [
        {**link, "note": note} for link, note in zip(case.get("links") or [], out.pop("links"), strict=True)
    ]
    history = [
        {**h, "old": old, "new": new}
        for h, (old, new) in zip(case.get("history") or [], out.pop("history"), strict=True)
    ]
    return {**case, **out, "links": links, "history": history}
