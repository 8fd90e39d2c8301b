"""RAG graders on hand-made transcripts: documents read from tool outputs (tau2 text,
JSON) and from a plain pipeline's ``retrieved`` field; retrieval, citations,
groundedness, faithfulness (fake judge server) and answer correctness; and a run's
retrieval failures told apart from its generation failures."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from tests.support.fake_llm_server import FakeLLMServer
from tests.toydomain import DOMAIN, generate

from assay.core import GraderSpec, Message, Outcome, Task, ToolCall, Transcript
from assay.core.results import TrialResult
from assay.envs import ToolDomain, Toolkit
from assay.graders import GraderSettings, build_grader, check_grader_spec
from assay.graders.rag_sources import Doc, SourceParams, parse_tool_output, rag_answer, retrieved_docs
from assay.graders.registry import is_judge_kind
from assay.metrics import grade_rows, rag_summary
from assay.metrics import rag as metrics

FEE = Doc(
    "doc_fee_001",
    "The Orbit checking account has a monthly fee of $12.\n"
    "The fee is waived with a balance of $1,500 or more.",
    "Orbit checking fees",
)
CARD = Doc(
    "doc_card_001", "The Orbit Card earns 2% cash back on every purchase and has no annual fee.", "Orbit Card"
)
WIRE = Doc(
    "doc_wire_001", "International wire transfers take three to five business days to arrive.", "Wires"
)
CORPUS = {d.id: d for d in (FEE, CARD, WIRE)}
GOLD = [FEE.id, CARD.id]
QUESTION = "What does the Orbit checking account cost, and does the Orbit Card have an annual fee?"


def tau2_output(docs: list[Doc]) -> str:
    """What tau2's KB_search prints, timing line included."""
    blocks = [
        f"{i}. {d.title}\n   ID: {d.id}\n   Score: {9 - i:.4f}\n   Content: {d.text}\n"
        for i, d in enumerate(docs, start=1)
    ]
    return "\n".join(blocks) + "\n\n[Timing: retrieval=3ms, total=3ms]"


def transcript(
    answer: str, *searches: list[Doc], tool: str = "KB_search", output: Any = tau2_output
) -> Transcript:
    messages = [Message("user", QUESTION)]
    for i, docs in enumerate(searches):
        call = ToolCall(f"c{i}", tool, {"query": QUESTION})
        messages += [Message("assistant", "", [call]), Message("tool", output(docs), tool_call_id=call.id)]
    messages.append(Message("assistant", answer))
    return Transcript(messages)


@dataclass
class KbDomain(ToolDomain):
    def corpus(self, task: Task) -> Any:
        return CORPUS


KB = KbDomain(name="kb", toolkit=Toolkit([]), generate=generate)
TASK = Task(id="t", user={"opening": QUESTION}, reference={"answer": "$12 a month"})
GOOD_ANSWER = (
    "The Orbit checking account has a monthly fee of $12 [doc_fee_001]. "
    "The Orbit Card has no annual fee and earns 2% cash back [doc_card_001]."
)


def grade(kind: str, params: Any, t: Transcript, domain: Any = KB, task: Task = TASK, **settings: Any):
    g = build_grader(GraderSpec.model_validate({kind: params}), domain, GraderSettings(**settings))
    return g.grade(task, t, Outcome("user_stop"))


# where the documents come from -----------------------------------------------------------
def test_tau2_text_output_is_parsed_with_titles_and_multiline_content():
    docs = parse_tool_output(tau2_output([FEE, CARD]), SourceParams())
    assert [d.id for d in docs] == GOLD
    assert docs[0].title == FEE.title and docs[0].text == FEE.text  # the second line kept, no timing line
    assert parse_tool_output("No relevant documents found.", SourceParams()) == []


def test_json_outputs_and_regex_ids():
    listing = json.dumps({"results": [{"doc_id": "a", "page_content": "alpha"}, {"doc_id": "b"}]})
    docs = parse_tool_output(listing, SourceParams(id_field="doc_id"))
    assert [(d.id, d.text) for d in docs] == [("a", "alpha"), ("b", "")]
    nested = json.dumps({"data": {"hits": [{"id": 7}]}})
    assert [d.id for d in parse_tool_output(nested, SourceParams(results_path="data.hits"))] == ["7"]
    numeric = transcript("ok", [], output=lambda docs: nested)
    assert grade("retrieval", {"gold": [7], "results_path": "data.hits"}, numeric).passed is True
    assert [d.id for d in parse_tool_output("see KB-12 and KB-9", SourceParams(id_pattern=r"KB-(\d+)"))] == [
        "12",
        "9",
    ]


def test_several_calls_are_ranked_in_call_order_without_repeats_and_errors_ignored():
    t = transcript("ok", [WIRE, FEE], [FEE, CARD])
    assert retrieved_docs(t, SourceParams()).ids == [WIRE.id, FEE.id, CARD.id]
    assert retrieved_docs(t, SourceParams(calls="last")).ids == [FEE.id, CARD.id]
    t.messages[2].error = True  # the first search failed: its output is an error message
    assert retrieved_docs(t, SourceParams()).ids == [FEE.id, CARD.id]
    assert retrieved_docs(t, SourceParams(tools=["other_tool"])).ids == []


def test_a_plain_pipeline_reports_what_it_retrieved_in_its_answer():
    final = rag_answer(GOOD_ANSWER, [{"id": FEE.id, "text": FEE.text}, CARD.id])
    t = Transcript([Message("user", QUESTION), Message("assistant", final)])
    found = retrieved_docs(t, SourceParams())
    assert found.source == "answer" and found.ids == GOLD and found.docs[0].text == FEE.text
    result = grade("retrieval", {"gold": GOLD}, t)
    assert result.passed and result.metrics["recall"] == 1.0 and result.metrics["mrr"] == 1.0
    # the answer field is what the generation graders read, not the JSON
    cited = grade("citations", {}, t)
    assert cited.metrics["citations"] == 2.0 and cited.metrics["citation_exists"] == 1.0


# retrieval -----------------------------------------------------------------------------
def test_retrieval_metrics_are_recorded_and_pass_if_decides():
    t = transcript(GOOD_ANSWER, [WIRE, FEE, CARD])
    result = grade("retrieval", {"gold": GOLD}, t)
    expected = metrics.retrieval_metrics([WIRE.id, FEE.id, CARD.id], GOLD)
    assert result.passed is True and result.kind == "retrieval"
    assert {k: result.metrics[k] for k in expected} == expected
    assert result.metrics["mrr"] == 0.5 and result.metrics["recall@1"] == 0.0
    strict = grade("retrieval", {"gold": GOLD, "pass_if": {"mrr": 1.0, "recall@3": 1.0}}, t)
    assert strict.passed is False and strict.category == "retrieval" and "mrr 0.50 < 1" in strict.reason
    graded = grade("retrieval", {"gold": {FEE.id: 2, CARD.id: 1}, "gain": "exponential"}, t)
    assert graded.metrics["ndcg@3"] == pytest.approx(
        metrics.ndcg_at_k([WIRE.id, FEE.id, CARD.id], {FEE.id: 2, CARD.id: 1}, 3, "exponential")
    )


def test_retrieval_failures_say_what_is_missing():
    missed = grade("retrieval", {"gold": GOLD}, transcript(GOOD_ANSWER, [WIRE, FEE]))
    assert missed.passed is False and missed.score == 0.5 and "missing doc_card_001" in missed.reason
    nothing = grade(
        "retrieval", {"gold": GOLD}, Transcript([Message("user", QUESTION), Message("assistant", "?")])
    )
    assert nothing.passed is False and nothing.metrics["recall"] == 0.0 and "no document" in nothing.reason


def test_retrieval_params_are_checked():
    task = Task(id="t")
    assert check_grader_spec(GraderSpec.model_validate({"retrieval": {"gold": []}}), DOMAIN, task)
    bad_metric = GraderSpec.model_validate({"retrieval": {"gold": ["a"], "pass_if": {"recal@5": 1}}})
    assert "unknown metric" in check_grader_spec(bad_metric, DOMAIN, task)[0][1]
    for kind, params in (("citations", {"pattern": "("}), ("groundedness", {"id_pattern": "["})):
        problems = check_grader_spec(GraderSpec.model_validate({kind: params}), DOMAIN, task)
        assert len(problems) == 1 and "not a valid regular expression" in problems[0][1]
    bad_tool = GraderSpec.model_validate({"retrieval": {"gold": ["a"], "tools": ["KB_search"]}})
    assert check_grader_spec(bad_tool, DOMAIN, task) == [
        (
            ("tools", 0),
            f"unknown tool 'KB_search' for domain 'toy'; tools: {', '.join(sorted(DOMAIN.toolkit.names()))}",
        )
    ]


# citations ---------------------------------------------------------------------------
def test_correct_citations_pass():
    result = grade("citations", {}, transcript(GOOD_ANSWER, [FEE, CARD]))
    assert result.passed is True and result.metrics["citation_accuracy"] == 1.0
    assert result.metrics["citations"] == 2.0 and result.metrics["cited_claims"] == 2.0


@pytest.mark.parametrize(
    ("answer", "why", "metric"),
    [
        ("The Orbit Card has no annual fee [doc_card_009].", "does not exist", "citation_exists"),
        (
            "International wire transfers take three to five business days [doc_wire_001].",
            "was not retrieved",
            "citation_retrieved",
        ),
        (
            "The Orbit Card has no annual fee and 2% cash back [doc_fee_001].",
            "does not support",
            "citation_supported",
        ),
    ],
)
def test_citation_failures(answer, why, metric):
    result = grade("citations", {}, transcript(answer, [FEE, CARD]))
    assert result.passed is False and result.category == "generation" and why in result.reason
    assert result.metrics[metric] == 0.0


def test_without_a_corpus_exists_means_retrieved_and_markers_after_the_stop_count():
    answer = "The Orbit Card has no annual fee. [doc_card_001]\nSee also [doc_card_009]."
    result = grade("citations", {}, transcript(answer, [FEE, CARD]), domain=DOMAIN)
    assert result.metrics["citations"] == 2.0 and result.metrics["citation_exists"] == 0.5
    uncited = grade("citations", {}, transcript("The Orbit Card has no annual fee.", [CARD]))
    assert uncited.passed is False and "cites no document" in uncited.reason
    assert grade("citations", {"require": False}, transcript("No fee.", [CARD])).passed is True


# groundedness -------------------------------------------------------------------------
def test_groundedness_supported_unsupported_and_invented_numbers():
    ok = grade("groundedness", {}, transcript(GOOD_ANSWER, [FEE, CARD]))
    assert ok.passed is True and ok.metrics["support_share"] == 1.0 and ok.metrics["claims"] == 2.0
    made_up = "The Orbit Card includes complimentary airport lounge access worldwide for cardholders."
    off = grade("groundedness", {}, transcript(made_up, [FEE, CARD]))
    assert off.passed is False and off.metrics["support_share"] == 0.0 and "unsupported" in off.reason
    number = grade(
        "groundedness", {}, transcript("The Orbit checking account has a monthly fee of $15.", [FEE])
    )
    assert number.passed is False and number.metrics["unsupported_numbers"] == 1.0 and "15" in number.reason
    polite = grade("groundedness", {}, transcript("Happy to help!", [FEE]))
    assert polite.passed is True and polite.metrics["claims"] == 0.0


# answer correctness -------------------------------------------------------------------
def test_answer_correctness_against_the_reference():
    right = grade("answer_correctness", None, transcript("It costs $12 a month [doc_fee_001].", [FEE]))
    assert right.passed is True and right.metrics["contains"] == 1.0
    wrong = grade(
        "answer_correctness", {"criterion": "f1", "min_f1": 0.9}, transcript("About 15 a year.", [FEE])
    )
    assert wrong.passed is False and 0 <= wrong.metrics["token_f1"] < 0.9
    exact = grade(
        "answer_correctness",
        {"reference": "The 12 dollars", "criterion": "exact"},
        transcript("12 dollars!", []),
    )
    assert exact.passed is True and exact.metrics["exact_match"] == 1.0
    assert grade("answer_correctness", None, transcript("x", []), task=Task(id="t")).skipped


# faithfulness (the judge machinery, on a fake judge server) ----------------------------
def _judge(request: dict[str, Any]) -> str:
    prompt = request["messages"][-1]["content"]
    grounded = "no annual fee" in prompt.split("AI answer")[0]  # the claim is in the retrieved documents
    level = 4 if grounded else 1
    dims = {
        "claim_support": {"score": level, "reason": "checked against the documents"},
        "citation_fit": {"score": level, "reason": "citations"},
        "admits_gaps": {"score": 4, "reason": "nothing missing"},
        "fabrication": {"score": "pass" if grounded else "fail", "reason": "specifics"},
    }
    return json.dumps({"dimensions": dims, "verdict": "pass" if grounded else "fail", "reason": "r"})


async def test_faithfulness_judges_the_answer_against_the_retrieved_documents():
    answer = "The Orbit Card has no annual fee [doc_card_001]."
    with FakeLLMServer(_judge) as srv:
        settings = {
            "judges": ("openai:judge",),
            "judge_options": {"base_url": srv.openai_base_url, "api_key": "x", "cache": False},
        }
        good = await grade("faithfulness", None, transcript(answer, [CARD]), **settings)
        bad = await grade("faithfulness", None, transcript(answer, [WIRE]), **settings)
        prompt = srv.requests[0][1]["messages"][-1]["content"]
    assert good.passed is True and good.kind == "faithfulness" and "rag-faithfulness@" in good.version
    assert bad.passed is False and bad.category == "veto:fabrication"
    assert "Documents retrieved in this trial" in prompt and "[doc_card_001] Orbit Card" in prompt
    assert QUESTION in prompt
    skipped = await grade("faithfulness", None, transcript(answer, [CARD]))
    assert skipped.skipped and "no judge" in skipped.reason
    # its grades are judge grades: humans label them and `assay calibrate` checks them
    assert is_judge_kind("faithfulness") and is_judge_kind("judge") and not is_judge_kind("groundedness")


# a run mixing retrieval and generation failures ------------------------------------------
def _trial(task_id: str, t: Transcript) -> TrialResult:
    graders = ["retrieval", "citations", "groundedness"]
    grades = [grade(kind, {"gold": GOLD} if kind == "retrieval" else {}, t) for kind in graders]
    return TrialResult("run", task_id, 0, 0, "c", None, "user_stop", grades=grades)


def test_retrieval_failures_and_generation_failures_are_reported_apart():
    invented = "The Orbit Card charges a $95 annual fee [doc_card_002]."
    results = [
        _trial("both-fine", transcript(GOOD_ANSWER, [FEE, CARD])),
        _trial(
            "retrieval-miss",
            transcript("The Orbit checking account has a monthly fee of $12 [doc_fee_001].", [WIRE, FEE]),
        ),
        _trial("bad-citation", transcript(invented, [CARD, FEE])),
        _trial("both-bad", transcript(invented, [WIRE])),
    ]
    summary = rag_summary(grade_rows(results))
    assert summary is not None
    assert summary["failures"] == {
        "retrieval_only": 1,
        "generation_only": 1,
        "both": 1,
        "neither": 1,
        "undecided": 0,
    }
    tasks = {row["task_id"]: row for row in summary["tasks_table"]}
    assert tasks["retrieval-miss"]["failures"] == {"retrieval_only": 1}
    assert tasks["bad-citation"]["failures"] == {"generation_only": 1}
    assert (
        tasks["retrieval-miss"]["retrieval_passed"] == 0 and tasks["retrieval-miss"]["generation_passed"] == 1
    )
    retrieval = summary["stages"]["retrieval"]
    assert (
        retrieval["passed"] == 2 and retrieval["graders"]["retrieval"]["metrics"]["recall"]["mean"] == 0.625
    )
    low, high = retrieval["graders"]["retrieval"]["metrics"]["recall"]["ci"]
    assert 0 <= low <= 0.625 <= high <= 1 and low < high
    generation = summary["stages"]["generation"]
    assert generation["passed"] == 2 and set(generation["graders"]) == {"citations", "groundedness"}
    assert tasks["both-bad"]["metrics"]["retrieval.recall"] == 0.0
    assert rag_summary([]) is None
