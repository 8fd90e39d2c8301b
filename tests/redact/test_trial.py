"""``redact_trial``: one trial's free text redacted in one session, its figures kept, its
inputs untouched."""

from __future__ import annotations

import copy
import json
from dataclasses import asdict

from assay.core.messages import Message, ToolCall
from assay.core.results import GradeResult, Outcome, TrialResult
from assay.core.transcript import Span, Transcript
from assay.redact import Redactor, redact_trial

EMAIL = "mia.wong@example.net"
CARD = "5555 5555 5555 4444"
KEY = "sk-test-Hq72Lp0Zx93Wv18Nb4Rt6Yc"
DATA_URL = "data:image/png;base64,iVBORw0KGgo="


def _trial() -> tuple[TrialResult, Transcript]:
    call = ToolCall("c1", "find_user", {"email": EMAIL})
    transcript = Transcript(
        [
            Message(
                "user", f"I'm {EMAIL}", images=[DATA_URL, f"https://img.example.net/a.png?api_key={KEY}"]
            ),
            Message("assistant", "", [call]),
            Message("tool", json.dumps({"email": EMAIL, "card_number": CARD}), tool_call_id="c1"),
            Message("assistant", f"Your card {CARD} is on file."),
        ],
        [
            Span(0, "trial", "t", 0.0, 2.0),
            Span(1, "tool", "find_user", 0.5, 0.6, 0, {"args": {"email": EMAIL}, "input_tokens": 12}),
            Span(2, "agent", "respond", 0.7, 0.8, 0, {}, f"upstream rejected {KEY}"),
        ],
        "2025-06-15T12:00:00+00:00",
        {"system:abc": f"Escalate to {EMAIL}."},
    )
    outcome = Outcome(
        "user_stop",
        "h0",
        "h1",
        [{"op": "change", "table": "users", "key": "u1", "field": "email", "old": EMAIL, "new": "x@y.org"}],
        f"card {CARD} declined",
        final_state={"users": {"u1": {"email": EMAIL}}},
    )
    result = TrialResult(
        "r",
        "task",
        0,
        4111111111111111,  # a seed that is a valid card number: a figure, kept
        "cfg",
        0,
        "user_stop",
        grades=[
            GradeResult("state", "state", False, 0.0, f"users u1.email is 'x@y.org', expected '{EMAIL}'")
        ],
        latency_s=2.0,
        input_tokens=12,
        transcript=transcript,
        outcome=outcome,
    )
    return result, transcript


def test_redact_trial_replaces_every_free_text_with_one_set_of_pseudonyms() -> None:
    result, transcript = _trial()
    before = (copy.deepcopy(asdict(result)), copy.deepcopy(asdict(transcript)))
    done = redact_trial(result, None, Redactor())  # the result's own transcript
    assert (asdict(result), asdict(transcript)) == before  # the inputs are not changed
    t = done.transcript
    assert t is not None and done.result.transcript is t
    text = json.dumps([asdict(done.result), asdict(t)], default=str)
    for value in (EMAIL, CARD, KEY, "5555555555554444"):
        assert value not in text
    # numbered in the order met: grader reasons, the outcome, then the transcript
    assert t.messages[0].content == "I'm <EMAIL_2>"
    assert t.messages[0].images[0] == DATA_URL and KEY not in t.messages[0].images[1]
    assert t.messages[1].tool_calls[0].arguments == {"email": "<EMAIL_2>"}
    assert json.loads(t.messages[2].content) == {"email": "<EMAIL_2>", "card_number": "<CARD_1>"}
    assert t.messages[3].content == "Your card <CARD_1> is on file."
    assert t.spans[1].attributes == {"args": {"email": "<EMAIL_2>"}, "input_tokens": 12}
    assert t.spans[2].error is not None and "<OPENAI_KEY_1>" in t.spans[2].error
    assert t.prompts == {"system:abc": "Escalate to <EMAIL_2>."}
    r = done.result
    assert r.grades[0].reason == "users u1.email is '<EMAIL_1>', expected '<EMAIL_2>'"
    assert r.outcome is not None and r.outcome.error == "card <CARD_1> declined"
    assert r.outcome.diff[0]["old"] == "<EMAIL_2>" and r.outcome.diff[0]["new"] == "<EMAIL_1>"
    assert r.outcome.final_state is None
    # figures, ids and names are kept
    assert (r.seed, r.reward, r.latency_s, r.input_tokens, r.grades[0].score) == (
        4111111111111111,
        0,
        2.0,
        12,
        0.0,
    )
    assert [(s.kind, s.name, s.start, s.end) for s in t.spans] == [
        (s.kind, s.name, s.start, s.end) for s in transcript.spans
    ]
    assert done.redacted and done.counts["EMAIL"] >= 8 and done.counts["CARD"] == 3
    assert done.total == sum(done.counts.values())


def test_a_trial_without_transcript_or_outcome() -> None:
    result, _ = _trial()
    bare = TrialResult("r", "task", 0, 1, "cfg", None, "harness_error", grades=[])
    done = redact_trial(bare, None, Redactor())
    assert done.transcript is None and done.result == bare and not done.redacted
    stored = redact_trial(TrialResult(**{**asdict(bare), "outcome": None}), result.transcript, Redactor())
    assert stored.transcript is not None and stored.result.transcript is None  # stored apart, as given


def test_a_trial_shown_without_its_transcript_numbers_its_result_as_with_it() -> None:
    """A list of trials redacts each result alone (no transcript loaded), a transcript
    page the trial with its transcript: the grader reasons and outcome read the same."""
    result, transcript = _trial()
    stored = TrialResult(**{**asdict(result), "transcript": None})
    stored.grades, stored.outcome = result.grades, result.outcome
    alone = redact_trial(stored, None, Redactor()).result
    together = redact_trial(stored, transcript, Redactor()).result
    assert [g.reason for g in alone.grades] == [g.reason for g in together.grades]
    assert alone.outcome == together.outcome
    assert "<EMAIL_1>" in alone.grades[0].reason and "<EMAIL_2>" in alone.grades[0].reason
