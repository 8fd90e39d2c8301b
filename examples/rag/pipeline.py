"""A plain RAG pipeline graded by assay (docs/rag.md): keyword retrieval over a small
corpus, an extractive answer with citations, and the ``retrieved`` field assay reads.

Run it:  PYTHONPATH=examples/rag assay run examples/rag --agent python:pipeline:rag_pipeline -k 1 --json
"""

from __future__ import annotations

import re

from assay.graders.rag_sources import rag_answer

CORPUS = {
    "fees_checking": "Orbit Everyday Checking has a monthly fee of $12. "
    "The monthly fee is waived when the balance stays at or above $1,500.",
    "fees_savings": "Orbit Savings has no monthly fee. "
    "Orbit Savings earns 3.1% APY on balances above $10,000.",
    "card_orbit": "The Orbit Card has no annual fee and earns 2% cash back on every purchase.",
    "card_orbit_plus": "The Orbit Plus Card has a $95 annual fee "
    "and earns 3% cash back on travel and dining.",
    "wires_international": "International wire transfers cost $35 and take three to five business days.",
    "wires_domestic": "Domestic wire transfers cost $20 and arrive the same business day.",
}
STOP = {"the", "a", "an", "of", "on", "is", "does", "do", "what", "how", "much", "and", "to", "my", "i", "it"}


def words(text: str) -> set[str]:
    return {w.rstrip("s") for w in re.findall(r"[a-z0-9]+", text.lower())} - STOP


def retrieve(question: str, k: int = 2) -> list[str]:
    """The ``k`` documents sharing most words with the question (ties by id)."""
    q = words(question)
    return sorted(CORPUS, key=lambda d: (-len(q & words(CORPUS[d])), d))[:k]


def answer(question: str, doc_ids: list[str]) -> str:
    """The sentence of the retrieved documents closest to the question, cited."""
    q = words(question)
    candidates = [(s.rstrip("."), d) for d in doc_ids for s in re.split(r"(?<=\.)\s+", CORPUS[d])]
    sentence, doc_id = max(candidates, key=lambda c: len(q & words(c[0])))
    return f"{sentence} [{doc_id}]."


def rag_pipeline(conversation):
    """The agent assay runs: question in, answer plus what was retrieved out."""
    question = conversation[-1].content
    doc_ids = retrieve(question)
    return rag_answer(answer(question, doc_ids), [{"id": d, "text": CORPUS[d]} for d in doc_ids])
