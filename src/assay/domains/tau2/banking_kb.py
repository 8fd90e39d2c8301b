"""The knowledge base of tau2's ``banking_knowledge`` domain, read from a tau2 folder.

The 698 documents (``documents/*.json``: ``id``, ``title``, ``content``) are indexed with
BM25 (``bm25s``, Lucene variant, k1 = 1.5, b = 0.75, float64 scores) over
``title + "\\n" + content``, tokenised by bm25s (lower case, words of two or more
characters, bm25s's English stop words, Snowball English stemmer from PyStemmer).
A query's results are every document with a positive score, ranked by score, ties by
id: the same query always gives the same list. One index per folder and process,
built on first use (:func:`knowledge_base`).

The corpus digest (SHA-256 of the documents' canonical JSON) is recorded by the suite
importer; a knowledge base whose digest changed since is refused, so a run never mixes
two versions of the documents.

:func:`format_results` writes tau2's ``KB_search`` output (``N. title`` / ``ID:`` /
``Score:`` / ``Content:``) without tau2's timing trailer, which would make tool outputs
differ from run to run.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...core.hashing import stable_hash
from ...errors import AssayError
from ...graders.rag_sources import Doc

DOMAIN_DIR = "banking_knowledge"
#: Results KB_search returns (tau2's default ``top_k``).
TOP_K = 10


class KnowledgeBaseError(AssayError):
    """The tau2 banking_knowledge folder is missing, malformed or changed since import."""


def find_banking_dir(path: str | Path) -> Path:
    """The ``banking_knowledge`` folder of ``path``: the folder itself (``documents/`` next
    to ``tasks.json`` or ``db.json``: an imported suite's ``data``), a tau2 data folder
    (``domains/banking_knowledge``) or a tau2 checkout (``data/domains/...``)."""
    base = Path(path).expanduser()
    candidates = [base, base / "domains" / DOMAIN_DIR, base / "data" / "domains" / DOMAIN_DIR]
    candidates.append(base / "data" / "tau2" / "domains" / DOMAIN_DIR)  # a tau2-bench checkout
    for folder in candidates:
        if (folder / "documents").is_dir() and any((folder / f).is_file() for f in ("tasks.json", "db.json")):
            return folder.resolve()
    raise KnowledgeBaseError(
        f"{base}: not a tau2 banking_knowledge folder (no documents/ and tasks.json or db.json in it, "
        f"nor in domains/{DOMAIN_DIR} or data/domains/{DOMAIN_DIR} below it)"
    )


def load_documents(folder: Path) -> dict[str, Doc]:
    """The documents of ``folder/documents``, by id (sorted)."""
    docs: dict[str, Doc] = {}
    files = sorted((folder / "documents").glob("*.json"))
    if not files:
        raise KnowledgeBaseError(f"{folder / 'documents'}: no document (*.json) in this folder")
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise KnowledgeBaseError(f"{file}:{exc.lineno}: invalid JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise KnowledgeBaseError(f"{file}:1: a document must be a JSON object with id, title and content")
        for key in ("id", "title", "content"):
            if not isinstance(data.get(key), str):
                raise KnowledgeBaseError(f"{file}:1: field {key!r} is missing or not a string")
        if data["id"] in docs:
            raise KnowledgeBaseError(f"{file}:1: id: {data['id']!r} is also the id of another document")
        docs[data["id"]] = Doc(data["id"], data["content"], data["title"])
    return dict(sorted(docs.items()))


def corpus_digest(docs: dict[str, Doc]) -> str:
    """Content hash of the documents (ids, titles and texts)."""
    return stable_hash([[d.id, d.title, d.text] for d in docs.values()], length=64)


def _bm25() -> tuple[Any, Any]:
    try:
        import bm25s
        import Stemmer
    except ImportError:
        raise AssayError(
            "the banking knowledge base needs bm25s and PyStemmer: pip install 'assay[rag]'"
        ) from None
    return bm25s, Stemmer.Stemmer("english")


@dataclass
class KnowledgeBase:
    """Documents of one folder with their BM25 index. ``get`` makes it a
    :class:`~assay.graders.rag_sources.Corpus` (citations of unknown ids are caught)."""

    folder: Path
    documents: dict[str, Doc]
    digest: str
    _index: Any = field(default=None, repr=False)
    _ids: list[str] = field(default_factory=list, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def get(self, doc_id: str) -> Doc | None:
        return self.documents.get(doc_id)

    def _tokens(self, texts: list[str]) -> list[list[str]]:
        bm25s, stemmer = _bm25()
        tokens: list[list[str]] = bm25s.tokenize(
            texts, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
        )
        return tokens

    def index(self) -> Any:
        """The BM25 index, built on first use."""
        with self._lock:
            if self._index is None:
                bm25s, _ = _bm25()
                self._ids = list(self.documents)
                corpus = [f"{d.title}\n{d.text}" for d in self.documents.values()]
                retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene", dtype="float64")
                retriever.index(self._tokens(corpus), show_progress=False)
                self._index = retriever
            return self._index

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document (in id order) for ``query``."""
        index = self.index()
        words = self._tokens([query])[0]
        if not words:
            return np.zeros(len(self._ids))
        return np.asarray(index.get_scores(words), dtype=np.float64)

    def search(self, query: str, k: int = TOP_K) -> list[tuple[Doc, float]]:
        """The ``k`` best documents with a positive score, best first (ties by id)."""
        scores = self.scores(query)
        order = np.lexsort((np.arange(scores.size), -scores))  # ids are sorted: index order = id order
        return [(self.documents[self._ids[i]], float(scores[i])) for i in order[:k] if scores[i] > 0]


_CACHE: dict[Path, KnowledgeBase] = {}
_CACHE_LOCK = threading.Lock()


def knowledge_base(path: str | Path, digest: str | None = None) -> KnowledgeBase:
    """The knowledge base of a tau2 folder, loaded once per process. With ``digest``
    (recorded at import), a folder whose documents changed since is refused."""
    folder = find_banking_dir(path)
    with _CACHE_LOCK:
        kb = _CACHE.get(folder)
        if kb is None:
            docs = load_documents(folder)
            kb = _CACHE[folder] = KnowledgeBase(folder, docs, corpus_digest(docs))
    if digest is not None and kb.digest != digest:
        raise KnowledgeBaseError(
            f"{folder}: the knowledge base changed since the suite was imported (digest {kb.digest[:12]}, "
            f"suite expects {digest[:12]}); import the suite again"
        )
    return kb


def format_results(results: list[tuple[Doc, float]]) -> str:
    """tau2's ``KB_search`` output (without its timing line)."""
    if not results:
        return "No relevant documents found."
    blocks = [
        f"{i}. {doc.title or 'Untitled'}\n   ID: {doc.id}\n   Score: {score:.4f}\n   Content: {doc.text}\n"
        for i, (doc, score) in enumerate(results, start=1)
    ]
    return "\n".join(blocks)


def format_document(doc: Doc) -> str:
    """One document in the same layout, without a score."""
    return f"1. {doc.title or 'Untitled'}\n   ID: {doc.id}\n   Content: {doc.text}\n"
