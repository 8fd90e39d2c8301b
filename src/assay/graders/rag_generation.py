"""RAG graders of the generated answer: ``groundedness`` (rule-based support check),
``faithfulness`` (an LLM judge on a shipped rubric) and ``answer_correctness``.

``groundedness``: every *claim* of the answer (a sentence with at least
``min_words`` content words) must be supported by some retrieved document: at least
``min_support`` of its content words occur in one document (see :mod:`.rag_text`).
With ``check_numbers`` every number the answer states must occur in a retrieved
document. Passes when the share of supported claims reaches ``min_share`` and no number
is unsupported. Metrics: ``claims``, ``supported_claims``, ``support_share``,
``mean_support``, ``unsupported_numbers``.

``faithfulness``: the ``judge`` machinery (single judge or panel, calibration, review)
with :data:`FAITHFULNESS_RUBRIC` by default; the judge sees the question, the answer
and, fenced as untrusted evidence, the documents retrieved in the trial. Skipped
without ``--judge``.

``answer_correctness``: the answer against a reference answer (``reference``, default
the task's ``reference.answer``) after SQuAD normalisation (lower case, no punctuation
or articles): ``exact_match``, ``token_f1`` and ``contains`` (the reference inside the
answer) are recorded; ``criterion`` picks the one that decides (``contains`` by
default; ``f1`` passes at ``min_f1``). For open answers use a ``judge`` grader in
reference mode instead.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import Field

from ..core.results import GradeResult, Outcome
from ..core.task import Task
from ..core.transcript import Transcript
from .base import Grader, Params, PathKey, named_tools
from .judge import JudgeGrader, JudgeParams
from .judge_prompt import JudgeInput
from .rag_sources import SourceParams, answer_text, render_docs, retrieved_docs
from .rag_text import content_words, is_claim, numbers, sentences, support

#: The rubric ``faithfulness`` uses unless given another.
FAITHFULNESS_RUBRIC = Path(__file__).with_name("rubrics") / "faithfulness.yaml"


class GroundednessParams(SourceParams):
    min_support: float = Field(0.5, ge=0, le=1)
    min_share: float = Field(1.0, ge=0, le=1)
    min_words: int = Field(4, ge=1)
    check_numbers: bool = True


class GroundednessGrader(Grader[GroundednessParams]):
    kind = "groundedness"
    Params = GroundednessParams

    @classmethod
    def tool_refs(cls, params: GroundednessParams) -> list[tuple[PathKey, str]]:
        return named_tools(params, "tools")

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        p = self.params
        answer = answer_text(transcript)
        if not answer.strip():
            return self.result(False, "the agent gave no answer to check", category="generation", score=0.0)
        docs = retrieved_docs(transcript, p).docs
        doc_words = [set(content_words(f"{d.title}\n{d.text}")) for d in docs]
        doc_numbers = set().union(*(numbers(f"{d.title}\n{d.text}") for d in docs)) if docs else set()
        parts = sentences(answer)
        claims = [s for s in parts if is_claim(s, p.min_words)]
        scores = [max((support(content_words(s.plain), w) for w in doc_words), default=0.0) for s in claims]
        unsupported = [s.plain for s, score in zip(claims, scores, strict=True) if score < p.min_support]
        said = numbers(" ".join(s.plain for s in parts))  # citation markers (ids) are not claims
        stray = sorted(said - doc_numbers) if p.check_numbers else []
        share = 1.0 - len(unsupported) / len(claims) if claims else 1.0
        metrics = {
            "claims": float(len(claims)),
            "supported_claims": float(len(claims) - len(unsupported)),
            "support_share": share,
            "mean_support": sum(scores) / len(scores) if scores else 1.0,
            "unsupported_numbers": float(len(stray)),
        }
        if not claims and not stray:
            return self.result(True, "the answer states no checkable claim", metrics=metrics, score=1.0)
        problems = []
        if share < p.min_share - 1e-12:
            first = unsupported[0][:120]
            problems.append(
                f"{len(unsupported)} of {len(claims)} claims unsupported by the retrieved text ({first!r})"
            )
        if stray:
            problems.append(f"numbers not in any retrieved document: {', '.join(stray[:5])}")
        if problems:
            return self.result(
                False, "; ".join(problems), category="generation", metrics=metrics, score=share
            )
        return self.result(
            True, f"{len(claims)} claims supported by the retrieved text", metrics=metrics, score=share
        )


class FaithfulnessParams(JudgeParams, SourceParams):
    rubric: str | dict[str, Any] = Field(str(FAITHFULNESS_RUBRIC), description="default: the shipped rubric")
    max_doc_chars: int = Field(4000, ge=100, description="each retrieved document shown up to this length")


class FaithfulnessGrader(JudgeGrader):
    """The ``judge`` grader on the retrieved documents (see the module docstring)."""

    kind = "faithfulness"
    Params = FaithfulnessParams

    @classmethod
    def coerce(cls, raw: Any) -> Any:
        return {} if raw is None else raw

    @classmethod
    def tool_refs(cls, params: JudgeParams) -> list[tuple[PathKey, str]]:
        return named_tools(params, "tools")

    def judge_input(self, task: Task, transcript: Transcript) -> JudgeInput | str:
        p = cast(FaithfulnessParams, self.params)
        answer = answer_text(transcript)
        if not answer.strip():
            return "the agent produced no answer to judge"
        docs = retrieved_docs(transcript, p).docs
        evidence = "Documents retrieved in this trial:\n\n" + (
            render_docs(docs, p.max_doc_chars) if docs else "(no document was retrieved)"
        )
        reference = p.reference if p.reference is not None else task.reference.answer
        return JudgeInput(
            question=p.question or task.user.goal or task.user.opening or task.description,
            answer=answer,
            context=p.context,
            evidence=evidence,
            reference=None if p.mode == "free" else reference,
        )


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def squad_normalize(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles, single spaces."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split())


def token_f1(answer: str, reference: str) -> float:
    """SQuAD token F1 of the normalised answer against the normalised reference."""
    a, r = squad_normalize(answer).split(), squad_normalize(reference).split()
    common = sum((Counter(a) & Counter(r)).values())
    if not a or not r:
        return float(a == r)
    if common == 0:
        return 0.0
    precision, recall = common / len(a), common / len(r)
    return 2 * precision * recall / (precision + recall)


class AnswerCorrectnessParams(Params):
    reference: str | None = Field(None, description="default: the task's reference.answer")
    criterion: Literal["contains", "exact", "f1"] = "contains"
    min_f1: float = Field(0.5, ge=0, le=1)


class AnswerCorrectnessGrader(Grader[AnswerCorrectnessParams]):
    kind = "answer_correctness"
    Params = AnswerCorrectnessParams

    @classmethod
    def coerce(cls, raw: Any) -> Any:
        return {"reference": raw} if isinstance(raw, str) else ({} if raw is None else raw)

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        p = self.params
        reference = p.reference if p.reference is not None else task.reference.answer
        if reference is None:
            return self.skip("the task has no reference answer")
        answer = answer_text(transcript)
        norm_a, norm_r = squad_normalize(answer), squad_normalize(reference)
        metrics = {
            "exact_match": float(norm_a == norm_r),
            "token_f1": token_f1(answer, reference),
            "contains": float(bool(norm_r) and f" {norm_r} " in f" {norm_a} "),
        }
        passed = {
            "contains": metrics["contains"] == 1.0,
            "exact": metrics["exact_match"] == 1.0,
            "f1": metrics["token_f1"] >= p.min_f1,
        }[p.criterion]
        score = metrics["token_f1"] if p.criterion == "f1" else float(passed)
        what = f"token F1 {metrics['token_f1']:.2f}, exact {int(metrics['exact_match'])}"
        if passed:
            return self.result(
                True, f"the answer matches the reference ({what})", metrics=metrics, score=score
            )
        return self.result(
            False,
            f"the answer does not match the reference {reference!r} by {p.criterion} ({what})",
            category="generation",
            metrics=metrics,
            score=score,
        )
