"""Redacting one trial: every free text it recorded, with one set of pseudonyms.

:func:`redact_trial` is what a report (``assay report --redact``) and a run record
(``assay export RUN --redact``) apply to each trial. Redacted, in one
:meth:`~assay.redact.Redactor.session` (so ``<EMAIL_1>`` in a tool output is
``<EMAIL_1>`` in the message that repeats it, and a value under a personal key anywhere
in the trial is replaced where it recurs):

- messages: content, tool call arguments, image URLs (``data:`` URIs are kept);
- spans: errors and attributes;
- the prompt snapshots (system prompts, tool definitions);
- grader reasons;
- the outcome's error and state diff (its final state is dropped).

Pseudonyms are numbered in the order their values are met, the result's own text
(grader reasons, then the outcome) before the transcript's: a trial shown without its
transcript (a list of trials, ``assay show --json``) numbers its grader reasons as the
same trial shown with it (its transcript page) does.

Everything else is kept as it is: ids, seeds, rewards, terminations, categories,
timings, token counts, costs, hashes, grader names and scores, tool and span names;
so the figures computed from a redacted trial are the figures of the trial.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..core.messages import Message
from ..core.results import Outcome, TrialResult
from ..core.transcript import Transcript
from .redactor import Redactor


@dataclass(frozen=True)
class TrialRedaction:
    """A redacted trial: the result (its grades, outcome and, when it had one, its
    transcript redacted), the transcript, and what was replaced (counts per kind,
    never the values)."""

    result: TrialResult
    transcript: Transcript | None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def redacted(self) -> bool:
        return bool(self.counts)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _message_text(m: Message) -> list[Any]:
    return [
        m.content,
        [c.arguments for c in m.tool_calls],
        [u for u in m.images if not u.startswith("data:")],
    ]


def _message(m: Message, red: list[Any]) -> Message:
    content, arguments, urls = red
    images = list(m.images)
    if urls:
        it = iter(urls)
        images = [u if u.startswith("data:") else next(it) for u in m.images]
    calls = [replace(c, arguments=a) for c, a in zip(m.tool_calls, arguments, strict=True)]
    return replace(m, content=content, tool_calls=calls, images=images)


def redact_trial(result: TrialResult, transcript: Transcript | None, redactor: Redactor) -> TrialRedaction:
    """``result`` and ``transcript`` (default: the result's own) with every free text
    redacted by ``redactor`` in one session; the inputs are not changed."""
    t = transcript if transcript is not None else result.transcript
    outcome = result.outcome
    free: list[Any] = [  # the result's own text first: see the module's docstring
        [g.reason for g in result.grades],
        [outcome.error, outcome.diff] if outcome is not None else [None, []],
        [_message_text(m) for m in t.messages] if t is not None else [],
        [[s.error, s.attributes] for s in t.spans] if t is not None else [],
        dict(t.prompts) if t is not None else {},
    ]
    session = redactor.session()
    reasons, (error, diff), messages, spans, prompts = session.redact(free)
    new_t: Transcript | None = None
    if t is not None:
        new_t = replace(
            t,
            messages=[_message(m, r) for m, r in zip(t.messages, messages, strict=True)],
            spans=[replace(s, error=e, attributes=a) for s, (e, a) in zip(t.spans, spans, strict=True)],
            prompts=prompts,
        )
    new_outcome: Outcome | None = None
    if outcome is not None:
        new_outcome = replace(outcome, error=error, diff=diff, final_state=None)
    new_result = replace(
        result,
        grades=[replace(g, reason=r) for g, r in zip(result.grades, reasons, strict=True)],
        outcome=new_outcome,
        transcript=new_t if result.transcript is not None else None,
    )
    return TrialRedaction(new_result, new_t, session.counts)
