"""Retrieval metrics of RAG systems, as pure functions over one ranked list.

Every function takes ``retrieved`` (document ids, best first) and ``gold``: the
relevant ids (a collection: binary relevance) or graded qrels (a mapping id -> grade;
grades <= 0 are not relevant). Conventions, the same as ``ranx`` and ``trec_eval``:

- ``k=None`` means the whole list; ``k`` beyond the list's length looks at the whole
  list, but precision@k still divides by ``k`` (a short list is not rewarded).
- A document retrieved twice counts once, at its first (best) rank: the list is
  de-duplicated before anything is computed (ranx's runs are dicts, so they cannot
  hold duplicates; this makes an agent that searches twice comparable).
- Recall, MAP and R-precision divide by the number of relevant documents; nDCG
  divides by the DCG of the ideal ranking of the gold qrels cut at ``k``.
- An empty gold set leaves every metric undefined: :class:`ValueError`.

Context precision and recall are the id-based forms of RAGAS's measures: context
precision is the mean of precision@i over the ranks i that hold a relevant document
(so it divides by the relevant documents *retrieved*, where average precision divides
by all relevant ones); context recall is the share of gold documents retrieved.

:func:`retrieval_metrics` returns the named set a grader records (``recall@5``,
``mrr``, ``ndcg@10``...). :mod:`assay.metrics.rag_summary` summarises them over a run.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Literal

Gold = Collection[str] | Mapping[str, float]
Gain = Literal["linear", "exponential"]

#: The cut-offs a retrieval grader reports by default.
DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)


def ranked_unique(retrieved: Iterable[str]) -> list[str]:
    """``retrieved`` without repeats, each id at its first rank."""
    return list(dict.fromkeys(retrieved))


def qrels_of(gold: Gold) -> dict[str, float]:
    """Gold as graded qrels of the relevant documents only (grade > 0)."""
    if isinstance(gold, Mapping):
        qrels = {str(k): float(v) for k, v in gold.items() if float(v) > 0}
    else:
        if isinstance(gold, str):
            raise TypeError("gold must be a collection of ids or a mapping id -> grade, not one string")
        qrels = dict.fromkeys(map(str, gold), 1.0)
    if not qrels:
        raise ValueError("gold has no relevant document: retrieval metrics are undefined")
    return qrels


def _cut(retrieved: Iterable[str], k: int | None) -> list[str]:
    ranked = ranked_unique(retrieved)
    if k is None:
        return ranked
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer or None, got {k!r}")
    return ranked[:k]


def _hits(retrieved: Iterable[str], gold: Gold, k: int | None) -> tuple[list[bool], dict[str, float]]:
    qrels = qrels_of(gold)
    return [doc in qrels for doc in _cut(retrieved, k)], qrels


def recall_at_k(retrieved: Iterable[str], gold: Gold, k: int | None = None) -> float:
    """Relevant documents in the top ``k`` / all relevant documents."""
    hits, qrels = _hits(retrieved, gold, k)
    return sum(hits) / len(qrels)


def precision_at_k(retrieved: Iterable[str], gold: Gold, k: int | None = None) -> float:
    """Relevant documents in the top ``k`` / ``k`` (``k=None``: / the list's length; 0
    for an empty list)."""
    hits, _ = _hits(retrieved, gold, k)
    denominator = k if k is not None else len(hits)
    return sum(hits) / denominator if denominator else 0.0


def hit_rate_at_k(retrieved: Iterable[str], gold: Gold, k: int | None = None) -> float:
    """1 if any relevant document is in the top ``k``, else 0."""
    hits, _ = _hits(retrieved, gold, k)
    return float(any(hits))


def reciprocal_rank(retrieved: Iterable[str], gold: Gold, k: int | None = None) -> float:
    """1 / rank of the first relevant document in the top ``k`` (0 if none). Its mean
    over queries is MRR."""
    hits, _ = _hits(retrieved, gold, k)
    return next((1.0 / rank for rank, hit in enumerate(hits, start=1) if hit), 0.0)


def average_precision(retrieved: Iterable[str], gold: Gold, k: int | None = None) -> float:
    """Sum of precision@i over the ranks i <= k holding a relevant document, divided by
    the number of relevant documents. Its mean over queries is MAP."""
    hits, qrels = _hits(retrieved, gold, k)
    found, total = 0, 0.0
    for rank, hit in enumerate(hits, start=1):
        if hit:
            found += 1
            total += found / rank
    return total / len(qrels)


def r_precision(retrieved: Iterable[str], gold: Gold) -> float:
    """Precision at R, the number of relevant documents."""
    return precision_at_k(retrieved, gold, len(qrels_of(gold)))


def _gain(grade: float, gain: Gain) -> float:
    return grade if gain == "linear" else 2.0**grade - 1.0


def dcg_at_k(retrieved: Iterable[str], gold: Gold, k: int | None = None, gain: Gain = "linear") -> float:
    """Discounted cumulative gain: sum of gain(grade_i) / log2(i + 1) over the top ``k``.
    ``linear`` gain is the grade (Järvelin & Kekäläinen; ranx ``dcg``), ``exponential``
    is 2^grade - 1 (Burges et al.; ranx ``dcg_burges``)."""
    qrels = qrels_of(gold)
    return sum(
        _gain(qrels[doc], gain) / math.log2(rank + 1)
        for rank, doc in enumerate(_cut(retrieved, k), start=1)
        if doc in qrels
    )


def ndcg_at_k(retrieved: Iterable[str], gold: Gold, k: int | None = None, gain: Gain = "linear") -> float:
    """DCG@k / the DCG@k of the ideal ranking (gold documents by grade, best first).
    With binary relevance both gains agree."""
    qrels = qrels_of(gold)
    ideal = sorted(qrels, key=lambda doc: -qrels[doc])
    return dcg_at_k(retrieved, qrels, k, gain) / dcg_at_k(ideal, qrels, k, gain)


def capped_recall_at_k(retrieved: Iterable[str], gold: Gold, k: int) -> float:
    """Relevant documents in the top ``k`` / min(k, relevant documents): 1 when the top
    ``k`` is as relevant as it can be (BEIR's ``R_cap@k``)."""
    hits, qrels = _hits(retrieved, gold, k)
    return sum(hits) / min(k, len(qrels))


def context_precision(retrieved: Iterable[str], gold: Gold, k: int | None = None) -> float:
    """RAGAS context precision with id relevance: mean of precision@i over the ranks
    i <= k that hold a relevant document; 0 when none does."""
    hits, _ = _hits(retrieved, gold, k)
    found, total = 0, 0.0
    for rank, hit in enumerate(hits, start=1):
        if hit:
            found += 1
            total += found / rank
    return total / found if found else 0.0


def context_recall(retrieved: Iterable[str], gold: Gold) -> float:
    """Share of the gold documents found anywhere in the retrieved list."""
    return recall_at_k(retrieved, gold, None)


def retrieval_metrics(
    retrieved: Sequence[str], gold: Gold, ks: Iterable[int] = DEFAULT_KS, gain: Gain = "linear"
) -> dict[str, float]:
    """The named metrics a retrieval grader records for one ranked list.

    For every ``k`` in ``ks``: ``recall@k``, ``precision@k``, ``hit_rate@k``,
    ``ndcg@k``, ``capped_recall@k``; over the whole list: ``recall`` (= context
    recall), ``precision``, ``hit_rate``, ``mrr`` (reciprocal rank), ``map`` (average
    precision), ``ndcg``, ``r_precision``, ``context_precision``; and the counts
    ``retrieved`` (distinct documents) and ``gold``.
    """
    qrels = qrels_of(gold)
    ranked = ranked_unique(retrieved)
    out: dict[str, float] = {}
    for k in sorted(set(ks)):
        out[f"recall@{k}"] = recall_at_k(ranked, qrels, k)
        out[f"precision@{k}"] = precision_at_k(ranked, qrels, k)
        out[f"hit_rate@{k}"] = hit_rate_at_k(ranked, qrels, k)
        out[f"ndcg@{k}"] = ndcg_at_k(ranked, qrels, k, gain)
        out[f"capped_recall@{k}"] = capped_recall_at_k(ranked, qrels, k)
    out["recall"] = recall_at_k(ranked, qrels)
    out["precision"] = precision_at_k(ranked, qrels)
    out["hit_rate"] = hit_rate_at_k(ranked, qrels)
    out["mrr"] = reciprocal_rank(ranked, qrels)
    out["map"] = average_precision(ranked, qrels)
    out["ndcg"] = ndcg_at_k(ranked, qrels, None, gain)
    out["r_precision"] = r_precision(ranked, qrels)
    out["context_precision"] = context_precision(ranked, qrels)
    out["retrieved"] = float(len(ranked))
    out["gold"] = float(len(qrels))
    return out


_METRICS = {
    "recall": recall_at_k,
    "precision": precision_at_k,
    "hit_rate": hit_rate_at_k,
    "mrr": reciprocal_rank,
    "map": average_precision,
    "ndcg": ndcg_at_k,
    "context_precision": context_precision,
}


def metric_by_name(name: str, retrieved: Sequence[str], gold: Gold, gain: Gain = "linear") -> float:
    """One metric by its recorded name: ``recall``, ``recall@5``, ``mrr@10``,
    ``ndcg@10``, ``capped_recall@5``, ``r_precision``... (ValueError if unknown)."""
    base, _, cut = name.partition("@")
    if cut and not cut.isdigit():
        raise ValueError(f"metric {name!r}: the cut-off after @ must be a positive integer")
    k = int(cut) if cut else None
    if base == "capped_recall":
        if k is None:
            raise ValueError("capped_recall needs a cut-off, e.g. capped_recall@5")
        return capped_recall_at_k(retrieved, gold, k)
    if base == "r_precision" and k is None:
        return r_precision(retrieved, gold)
    if base == "ndcg":
        return ndcg_at_k(retrieved, gold, k, gain)
    if base not in _METRICS:
        known = ", ".join([*_METRICS, "capped_recall", "r_precision"])
        raise ValueError(f"unknown retrieval metric {name!r}; known: {known} (with @k)")
    return _METRICS[base](retrieved, gold, k)


def is_metric_name(name: str) -> bool:
    """Whether :func:`metric_by_name` knows ``name``."""
    try:
        metric_by_name(name, [], ["x"])
    except ValueError:
        return False
    return True
