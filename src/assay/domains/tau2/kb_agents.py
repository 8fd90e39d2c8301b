"""Two baseline agents of knowledge-base suites: ``builtin:kb-bm25`` and ``builtin:kb-oracle``.

``builtin:kb-bm25`` is a plain BM25 retriever: it calls ``KB_search`` once with the
user's message as the query and answers from the first three results, one sentence of
each (the sentence sharing most words with the question), cited ``[doc_id]``. What it
retrieves is what the domain's BM25 index returns, so a suite run with it measures the
index.

``builtin:kb-oracle`` is an **oracle**: it is handed the answers. It reads the gold
documents of every task from the suite folder given as ``--param answers=SUITE_DIR``
(the ``gold`` of each task's ``retrieval`` grader, keyed by the task's opening message;
static tasks only), reads each gold document with ``KB_get_document`` and answers like
the BM25 agent from the first three. Ordinary agents never see the gold: the oracle gets
it only through its own parameter, recorded in the run's config. It checks the
pipeline (tools, document extraction, graders, summary): its recall must be 1. It
needs the scripted user (an LLM user rephrases the opening, which the oracle then
cannot find).

Options (``--param``): ``search_tool`` (default ``KB_search``), ``get_tool`` (default
``KB_get_document``), ``cite`` (documents cited in the answer, default 3).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...agents.base import AgentContext, AgentTurn
from ...core.messages import Message, ToolCall, ToolSpec
from ...errors import AssayError
from ...graders.rag import RetrievalGrader
from ...graders.rag_sources import Doc, SourceParams, merge_ranked, parse_tool_output
from ...graders.rag_text import content_words
from ...suites.loader import iter_specs, load_suite

_PARSE = SourceParams(format="blocks")
_LINE = re.compile(r"(?<=[.!?])\s+|\n+")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)]|#+)\s*")


def best_sentence(question: str, text: str) -> str | None:
    """The sentence of ``text`` (at least four content words) sharing most content
    words with ``question``; the first on ties; brackets made parentheses so it never
    reads as a citation."""
    wanted = set(content_words(question))
    best, best_score = None, -1
    for raw in _LINE.split(text):
        sentence = _BULLET.sub("", raw).strip().rstrip(".").strip()
        words = set(content_words(sentence))
        if len(words) < 4:
            continue
        score = len(words & wanted)
        if score > best_score:
            best, best_score = sentence, score
    return None if best is None else best.replace("[", "(").replace("]", ")")


def cited_answer(question: str, docs: Sequence[Doc], cite: int = 3) -> str:
    """An answer of one cited sentence per document, from the first ``cite`` documents."""
    lines = []
    for doc in docs[:cite]:
        sentence = best_sentence(question, doc.text)
        if sentence:
            lines.append(f"- {sentence} [{doc.id}].")
    if not lines:
        return "I could not find anything in the knowledge base that answers this."
    return "Here is what the knowledge base says:\n" + "\n".join(lines)


def _since_user(conversation: Sequence[Message]) -> tuple[str, list[Message]]:
    """The last user message and the tool results after it."""
    for i in range(len(conversation) - 1, -1, -1):
        if conversation[i].role == "user":
            return conversation[i].content, [m for m in conversation[i + 1 :] if m.role == "tool"]
    return "", []


class _KbAgent:
    """Shared turn logic: on a user message, retrieve; on tool results, answer."""

    def __init__(self, ctx: AgentContext | None = None):
        options: dict[str, Any] = dict(ctx.params) if ctx is not None else {}
        self.search_tool = str(options.get("search_tool", "KB_search"))
        self.get_tool = str(options.get("get_tool", "KB_get_document"))
        self.cite = int(options.get("cite", 3))
        self.calls = 0

    def call(self, name: str, arguments: dict[str, Any]) -> ToolCall:
        self.calls += 1
        return ToolCall(id=f"kb_{self.calls}", name=name, arguments=arguments)

    def retrieve(self, question: str, tools: set[str]) -> list[ToolCall] | str:
        raise NotImplementedError

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        question, results = _since_user(conversation)
        if results:
            docs = merge_ranked(parse_tool_output(m.content, _PARSE) for m in results if not m.error)
            return AgentTurn(text=cited_answer(question, docs, self.cite))
        calls = self.retrieve(question, {t.name for t in tools})
        return AgentTurn(text=calls) if isinstance(calls, str) else AgentTurn(tool_calls=calls)


class KbBm25Agent(_KbAgent):
    """``builtin:kb-bm25``: one ``KB_search`` with the user's message (module docstring)."""

    def retrieve(self, question: str, tools: set[str]) -> list[ToolCall] | str:
        if self.search_tool not in tools:
            return f"I cannot search the knowledge base: there is no {self.search_tool} tool."
        return [self.call(self.search_tool, {"query": question})]


_KEYS: dict[Path, dict[str, list[list[str]]]] = {}
_KEYS_LOCK = threading.Lock()


def _normal(text: str) -> str:
    return " ".join(text.split())


def answer_key(suite_dir: str | Path) -> dict[str, list[list[str]]]:
    """Opening message -> gold documents (best first) of each static task of a suite
    whose graders include ``retrieval``; loaded once per folder and process."""
    path = Path(suite_dir).expanduser().resolve()
    with _KEYS_LOCK:
        if path not in _KEYS:
            key: dict[str, list[list[str]]] = {}
            for spec in iter_specs(load_suite(path)):
                grader = next((g for g in spec.graders if g.kind == "retrieval"), None)
                if grader is None or spec.template is not None:
                    continue
                gold = RetrievalGrader.coerce(grader.params).get("gold")
                ranked = sorted(gold, key=lambda d: -float(gold[d])) if isinstance(gold, dict) else list(gold)
                key.setdefault(_normal(spec.user.opening), []).append(ranked)
            _KEYS[path] = key
        return _KEYS[path]


class KbOracleAgent(_KbAgent):
    """``builtin:kb-oracle``: reads the gold documents (module docstring)."""

    def __init__(self, ctx: AgentContext | None = None):
        super().__init__(ctx)
        answers = ctx.params.get("answers") if ctx is not None else None
        if not answers:
            raise AssayError(
                "builtin:kb-oracle is an oracle and reads the gold documents from the suite: "
                "run it with --param answers=SUITE_DIR"
            )
        self.key = answer_key(str(answers))
        self.source = str(answers)

    def retrieve(self, question: str, tools: set[str]) -> list[ToolCall] | str:
        golds = self.key.get(_normal(question))
        if not golds:
            raise AssayError(
                f"builtin:kb-oracle: no task of {self.source} opens with this message "
                f"({question[:60]!r}...); pass the suite being run as --param answers, with the scripted user"
            )
        if len(golds) > 1 and any(g != golds[0] for g in golds):
            raise AssayError(f"builtin:kb-oracle: several tasks of {self.source} open with the same message")
        if self.get_tool not in tools:
            raise AssayError(
                f"builtin:kb-oracle: the domain has no {self.get_tool} tool to read documents with"
            )
        return [self.call(self.get_tool, {"doc_id": doc_id}) for doc_id in golds[0]]
