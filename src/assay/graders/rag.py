"""RAG graders of retrieval and citations: ``retrieval`` and ``citations``.

``retrieval`` compares the documents a trial retrieved (see :mod:`.rag_sources`) with
the task's gold documents and records every metric of
:func:`assay.metrics.rag.retrieval_metrics` (``recall@5``, ``mrr``, ``ndcg@10``, ...)
in the grade's ``metrics``; it passes when every bound of ``pass_if`` holds (default:
every gold document was retrieved, ``recall >= 1``).

``citations`` checks each citation marker of the answer (``[doc_id]`` by default):
the id **exists** (in the domain's corpus when it has one, else among the retrieved
documents), was **retrieved** in this trial, and **supports** its sentence (at least
``min_support`` of the sentence's content words occur in the cited document). It
passes when the share of citations meeting all three reaches ``min_accuracy`` and, with
``require``, the answer cites something.

A run's summary (:func:`assay.metrics.rag_summary.rag_summary`) puts the kind
``retrieval`` in the retrieval stage and ``citations`` (with ``groundedness``,
``faithfulness`` and ``answer_correctness``) in the generation stage, so retrieval
failures and generation failures are reported apart. Failures carry the category
``retrieval`` or ``generation``.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from ..core.results import GradeResult, Outcome
from ..core.task import Task
from ..core.transcript import Transcript
from ..metrics.rag import DEFAULT_KS, Gain, is_metric_name, metric_by_name, qrels_of, retrieval_metrics
from .base import Grader, PathKey, named_tools
from .rag_sources import SourceParams, answer_text, corpus_of, retrieved_docs
from .rag_text import CITATION, content_words, is_claim, sentences, support


class RetrievalParams(SourceParams):
    gold: list[str] | dict[str, float] = Field(description="relevant ids, or graded qrels id -> grade")
    k: list[int] = Field(default_factory=lambda: list(DEFAULT_KS))
    gain: Gain = "linear"
    pass_if: dict[str, float] = Field(default_factory=lambda: {"recall": 1.0})

    @field_validator("gold", mode="before")
    @classmethod
    def _ids_as_text(cls, value: Any) -> Any:
        if isinstance(value, list):  # numeric ids are ids too
            return [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
        return value

    @field_validator("gold")
    @classmethod
    def _some_relevant(cls, value: list[str] | dict[str, float]) -> list[str] | dict[str, float]:
        qrels_of(value)  # ValueError when nothing is relevant
        return value

    @field_validator("k")
    @classmethod
    def _positive(cls, value: list[int]) -> list[int]:
        if any(k < 1 for k in value):
            raise ValueError("every cut-off k must be at least 1")
        return value

    @field_validator("pass_if")
    @classmethod
    def _known(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = [name for name in value if not is_metric_name(name)]
        if unknown:
            raise ValueError(
                f"unknown metric(s) {', '.join(unknown)}; use recall, precision, hit_rate, mrr, map, "
                "ndcg, context_precision (optionally @k), capped_recall@k or r_precision"
            )
        return value


class RetrievalGrader(Grader[RetrievalParams]):
    kind = "retrieval"
    Params = RetrievalParams

    @classmethod
    def coerce(cls, raw: Any) -> Any:
        return {"gold": raw} if isinstance(raw, list) else ({} if raw is None else raw)

    @classmethod
    def tool_refs(cls, params: RetrievalParams) -> list[tuple[PathKey, str]]:
        return named_tools(params, "tools")

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        p = self.params
        found = retrieved_docs(transcript, p)
        ids = found.ids
        metrics = retrieval_metrics(ids, p.gold, p.k, p.gain)
        for name in p.pass_if:
            metrics.setdefault(name, metric_by_name(name, ids, p.gold, p.gain))
        metrics["retrieval_calls"] = float(found.calls)
        qrels = qrels_of(p.gold)
        have = set(ids)
        missing = [g for g in qrels if g not in have]
        short = [f"{n} {metrics[n]:.2f} < {b:g}" for n, b in p.pass_if.items() if metrics[n] < b - 1e-12]
        summary = (
            f"retrieved {len(qrels) - len(missing)} of {len(qrels)} gold documents in {len(ids)} "
            f"(recall {metrics['recall']:.2f}, MRR {metrics['mrr']:.2f})"
        )
        if not ids:
            via = "a retrieved field" if found.source == "answer" else "its retrieval tools"
            return self.result(
                False,
                f"no document was retrieved through {via}",
                category="retrieval",
                metrics=metrics,
                score=0.0,
            )
        if short:
            listed = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
            return self.result(
                False,
                f"{summary}: {'; '.join(short)}" + (f"; missing {listed}" if missing else ""),
                category="retrieval",
                metrics=metrics,
                score=metrics["recall"],
            )
        return self.result(True, summary, metrics=metrics, score=metrics["recall"])


class CitationsParams(SourceParams):
    pattern: str = Field(CITATION, description="regex of a citation marker; group 1 holds the ids")
    min_support: float = Field(0.5, ge=0, le=1)
    min_accuracy: float = Field(1.0, ge=0, le=1)
    require: bool = True

    @field_validator("pattern")
    @classmethod
    def _pattern_compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"pattern is not a valid regular expression: {exc}") from None
        return value


class CitationsGrader(Grader[CitationsParams]):
    kind = "citations"
    Params = CitationsParams

    @classmethod
    def tool_refs(cls, params: CitationsParams) -> list[tuple[PathKey, str]]:
        return named_tools(params, "tools")

    def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        p = self.params
        answer = answer_text(transcript)
        if not answer.strip():
            return self.result(False, "the agent gave no answer to check", category="generation", score=0.0)
        found = retrieved_docs(transcript, p).by_id()
        corpus = corpus_of(self.domain, task)
        words = {doc_id: set(content_words(f"{d.title}\n{d.text}")) for doc_id, d in found.items()}
        checked = exists = retrieved = supported = correct = 0
        problems: list[str] = []
        parts = sentences(answer, p.pattern)
        for s in parts:
            for doc_id in s.cited:
                checked += 1
                in_corpus = corpus.get(doc_id) is not None if corpus is not None else doc_id in found
                ok_support = (
                    doc_id in words and support(content_words(s.plain), words[doc_id]) >= p.min_support
                )
                exists += in_corpus
                retrieved += doc_id in found
                supported += ok_support
                good = in_corpus and doc_id in found and ok_support
                correct += good
                if not good:
                    why = (
                        "does not exist"
                        if not in_corpus
                        else "was not retrieved"
                        if doc_id not in found
                        else "does not support its sentence"
                    )
                    problems.append(f"[{doc_id}] {why}")
        claims = [s for s in parts if is_claim(s)]
        metrics = {
            "citations": float(checked),
            "citation_exists": exists / checked if checked else 0.0,
            "citation_retrieved": retrieved / checked if checked else 0.0,
            "citation_supported": supported / checked if checked else 0.0,
            "citation_accuracy": correct / checked if checked else 0.0,
            "claims": float(len(claims)),
            "cited_claims": float(sum(bool(s.cited) for s in claims)),
        }
        if not checked:
            if p.require:
                return self.result(
                    False, "the answer cites no document", category="generation", metrics=metrics, score=0.0
                )
            return self.result(True, "the answer cites no document (not required)", metrics=metrics)
        accuracy = metrics["citation_accuracy"]
        if accuracy < p.min_accuracy - 1e-12:
            shown = "; ".join(problems[:4]) + (" ..." if len(problems) > 4 else "")
            return self.result(
                False,
                f"{correct} of {checked} citations correct ({shown})",
                category="generation",
                metrics=metrics,
                score=accuracy,
            )
        return self.result(True, f"{correct} of {checked} citations correct", metrics=metrics, score=accuracy)
