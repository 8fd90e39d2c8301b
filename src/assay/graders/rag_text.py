"""Word-level text support for the rule-based RAG checks: content words, sentences,
citation markers and how much of a sentence a document covers.

A sentence's *support* by a document is the share of its distinct content words
(lower-cased, English stop words dropped, a plural ``s`` stripped, numbers without
thousands separators or ``$``) that occur in the document. Rough by design: it catches
answers that say what no retrieved document says, not paraphrases; the judge rubric
(``faithfulness``) is the finer instrument.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .matching import normalize_text

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "also",
        "may",
        "might",
        "must",
        "shall",
        "us",
        "per",
        "via",
        "get",
        "got",
    ]
)
_WORD = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
#: Default citation marker: ``[id]`` or ``[id1, id2]`` (ids hold no whitespace).
CITATION = r"\[([^\[\]\n]+)\]"


def _stem(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss") and not _NUMBER.match(word):
        return word[:-1]
    return word


def content_words(text: str) -> list[str]:
    """The content words of ``text``, in order (see the module docstring)."""
    words = _WORD.findall(normalize_text(text))
    return [_stem(w.strip(".'")) for w in words if (w not in STOPWORDS and len(w) > 1) or _NUMBER.match(w)]


def numbers(text: str) -> set[str]:
    """The numbers ``text`` states (normalised: ``$1,200.00`` -> ``1200``)."""
    return {w for w in _WORD.findall(normalize_text(text)) if _NUMBER.match(w)}


def support(sentence_words: Iterable[str], document_words: set[str]) -> float:
    """Share of the sentence's distinct content words found in the document."""
    words = set(sentence_words)
    return len(words & document_words) / len(words) if words else 0.0


@dataclass
class Sentence:
    """A sentence of an answer with the ids it cites and its text without them."""

    text: str
    cited: list[str]
    plain: str


def cited_ids(marker_body: str) -> list[str]:
    """The ids inside one citation marker: comma/semicolon separated tokens without
    whitespace (``[see below]`` cites nothing)."""
    parts = [p.strip() for p in re.split(r"[,;]", marker_body)]
    return [p for p in parts if p and not re.search(r"\s", p)]


def sentences(text: str, pattern: str = CITATION) -> list[Sentence]:
    """Sentences of an answer, each with the ids it cites. A marker standing after the
    full stop (``... fee. [doc_1]``) belongs to the sentence before it."""
    marker = re.compile(pattern)
    out: list[Sentence] = []
    for raw in (s.strip() for s in _SPLIT.split(text)):
        if not raw:
            continue
        ids = [
            i for m in marker.finditer(raw) for i in cited_ids(m.group(1) if marker.groups else m.group(0))
        ]
        plain = marker.sub(" ", raw).strip()
        if out and not content_words(plain) and ids:  # only markers: they cite the sentence before
            out[-1].cited.extend(ids)
            continue
        out.append(Sentence(raw, ids, plain))
    return out


def is_claim(sentence: Sentence, min_words: int = 4) -> bool:
    """Whether a sentence states something checkable: at least ``min_words`` content
    words ("Here is what I found:" is not a claim)."""
    return len(set(content_words(sentence.plain))) >= min_words


def best_support(sentence: Sentence, documents: Sequence[set[str]]) -> float:
    """The highest support any one document gives the sentence (0 without documents)."""
    words = content_words(sentence.plain)
    return max((support(words, d) for d in documents), default=0.0)
