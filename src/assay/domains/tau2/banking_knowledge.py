"""tau2's ``banking_knowledge`` as an assay RAG suite: the domain ``tau2-banking-kb``
and :func:`import_banking_knowledge`.

The domain is the knowledge-base side of tau2's banking domain: the agent searches 698
Rho-Bank documents with ``KB_search`` (BM25, tau2's tool name and output format, 10
results) and reads one by id with ``KB_get_document``. Its data is read at run time
from the tau2 folder the suite was imported from: each task's initial state holds one
``knowledge_base`` record ``{id: kb, path, digest}``, so the folder and the digest of its
documents are part of the task's hash, and a changed folder is refused.

The importer writes one task per tau2 task: the customer's request as the user's
opening message (tau2's scenario with the role-play directions to the simulator taken
out; the full scenario is kept as the LLM user's instructions), tau2's
``required_documents`` as the gold of a gating ``retrieval`` grader, a gating
``citations`` grader, and non-gating ``groundedness`` and ``faithfulness`` graders.
tau2's transactional tools and its DB / ACTION reward are not part of this suite: it
grades retrieval and the answer, not the account operations (``assay import tau2
--domain banking_knowledge-rag`` writes it). The full domain, with tau2's tools and
reward, is the port in :mod:`.banking` (``--domain banking_knowledge``).
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ...core.task import Task
from ...envs.environment import ToolDomain
from ...envs.state import Database
from ...envs.tools import ToolContext, ToolError, Toolkit, tool
from .banking_kb import (
    TOP_K,
    KnowledgeBase,
    KnowledgeBaseError,
    find_banking_dir,
    format_document,
    format_results,
    knowledge_base,
)

NAME = "tau2-banking-kb"
SUITE_NAME = "tau2-banking-knowledge"
VERSION = "1"
KEYS = {"knowledge_base": "id"}
RETRIEVAL_TOOLS = ["KB_search", "KB_get_document"]

POLICY = """You are a customer service agent of Rho-Bank. Answer the customer's questions
from the Rho-Bank knowledge base only. Search it with KB_search (a BM25 keyword search
returning the 10 best documents with their ID, title and content) and read a document
by its ID with KB_get_document. Base every statement on a document you retrieved and
cite it by its ID in square brackets, e.g. [doc_credit_cards_gold_rewards_card_001].
If the knowledge base does not answer a question, say so."""


def _kb(ctx: ToolContext) -> KnowledgeBase:
    record = ctx.db.get("knowledge_base", "kb")
    if record is None:
        raise KnowledgeBaseError(
            "this task names no knowledge base: its initial_state.records needs a knowledge_base "
            "record {id: kb, path: <tau2 banking_knowledge folder>} (import the suite with "
            "assay.domains.tau2.banking_knowledge.import_banking_knowledge)"
        )
    return knowledge_base(str(record["path"]), record.get("digest"))


@tool
def KB_search(ctx: ToolContext, query: str) -> str:
    """Search the knowledge base for relevant documents.

    Args:
        query: The search query to find relevant documents
    """
    if not query.strip():
        raise ToolError("KB_search: the query is empty; pass the words to search for")
    return format_results(_kb(ctx).search(query, TOP_K))


@tool
def KB_get_document(ctx: ToolContext, doc_id: str) -> str:
    """Read one knowledge base document by its ID (the ID shown in KB_search results).

    Args:
        doc_id: The document ID, such as 'doc_credit_cards_gold_rewards_card_001'
    """
    doc = _kb(ctx).get(doc_id.strip())
    if doc is None:
        raise ToolError(f"KB_get_document: there is no document with ID {doc_id!r}; use an ID from KB_search")
    return format_document(doc)


TOOLKIT = Toolkit([KB_search, KB_get_document])


def generate(seed: int) -> Database:
    """The empty state; each task's records name its knowledge base."""
    return Database(KEYS)


@dataclass
class BankingKbDomain(ToolDomain):
    """The ``tau2-banking-kb`` domain; ``corpus(task)`` lets the ``citations`` grader
    check that a cited id exists in the knowledge base."""

    def corpus(self, task: Task) -> KnowledgeBase | None:
        for record in task.initial_state.records.get("knowledge_base", []):
            if record.get("id") == "kb":
                return knowledge_base(str(record["path"]), record.get("digest"))
        return None


DOMAIN = BankingKbDomain(name=NAME, toolkit=TOOLKIT, generate=generate, policy=POLICY, version=VERSION)
"""The domain, registered as ``tau2-banking-kb``."""


# the importer -------------------------------------------------------------------------
_SIMULATOR_DIRECTIONS = re.compile(
    r"playing the role|never respond as|on the line with|don'?t dump|do not dump|only provide additional"
    r"|information you should provide upfront|do not bring this up|###stop###|you are now on the line"
    r"|you are currently on the line|customer service representative agent|have access to a tool"
    r"|end the conversation|only mention this|^how to behave$|^what not to do$",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"*(])")


def customer_request(instructions: str) -> str:
    """The customer's request in a tau2 scenario: its sentences without the directions
    to the user simulator (role play, pacing, stop token), markdown emphasis removed."""
    lines = []
    for line in instructions.replace("**", "").splitlines():
        kept = [s for s in _SENTENCE.split(line.strip()) if s and not _SIMULATOR_DIRECTIONS.search(s)]
        text = " ".join(kept).strip().lstrip("#").strip()
        if text:
            lines.append(text)
    return "\n".join(lines)


def _difficulty(gold: int) -> int:
    return 1 if gold <= 3 else 2 if gold <= 9 else 3


def _task(raw: dict[str, Any], where: str, record: dict[str, Any]) -> dict[str, Any]:
    for key in ("id", "user_scenario", "required_documents"):
        if key not in raw:
            raise KnowledgeBaseError(f"{where}: field {key!r} is missing")
    gold = raw["required_documents"]
    scenario = raw["user_scenario"] or {}
    instructions = scenario.get("instructions") if isinstance(scenario, dict) else None
    if not isinstance(gold, list) or not gold or not all(isinstance(g, str) for g in gold):
        raise KnowledgeBaseError(f"{where}: required_documents must be a non-empty list of document ids")
    if not isinstance(instructions, str) or not instructions.strip():
        raise KnowledgeBaseError(f"{where}: user_scenario.instructions is missing or empty")
    source = {"tools": list(RETRIEVAL_TOOLS)}
    return {
        "id": str(raw["id"]),
        "description": f"tau2-bench banking_knowledge {raw['id']}: find the {len(gold)} required documents "
        "and answer from them",
        "tags": ["tau2", "rag", "banking"],
        "difficulty": _difficulty(len(gold)),
        "initial_state": {"records": {"knowledge_base": [record]}},
        "user": {"opening": customer_request(instructions), "instructions": instructions},
        "graders": [
            {"retrieval": {"gold": list(gold), **source}},
            {"citations": source},
            {"groundedness": source, "gating": False},
            {"faithfulness": source, "gating": False},
        ],
        "metadata": {
            "tau2_task_id": str(raw["id"]),
            "tau2_reward_basis": list((raw.get("evaluation_criteria") or {}).get("reward_basis") or []),
        },
    }


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def import_banking_knowledge(data_dir: str | Path, out_dir: str | Path) -> Path:
    """Write tau2's banking_knowledge as an assay suite in ``out_dir`` (``suite.yaml`` and
    ``tasks/banking_knowledge.yaml``) and return ``out_dir``. ``data_dir`` is the
    banking_knowledge folder, a tau2 data folder or a tau2 checkout. The suite reads the
    documents from that folder at run time (nothing is copied); every gold id must be a
    document of it."""
    folder = find_banking_dir(data_dir)
    kb = knowledge_base(folder)
    tasks_file = folder / "tasks.json"
    try:
        raw_tasks = json.loads(tasks_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise KnowledgeBaseError(f"{tasks_file}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    except RecursionError:
        raise KnowledgeBaseError(f"{tasks_file}: values nest too deeply") from None
    except (OSError, ValueError) as exc:  # not UTF-8, a 5,000-digit number
        raise KnowledgeBaseError(f"{tasks_file}: cannot read: {str(exc).split(';')[0]}") from None
    if not isinstance(raw_tasks, list):
        raise KnowledgeBaseError(f"{tasks_file}:1: expected a list of tasks")
    record = {"id": "kb", "path": str(folder), "digest": kb.digest}
    tasks = []
    for i, raw in enumerate(raw_tasks):
        where = f"{tasks_file}: task {i} ({raw.get('id', '?') if isinstance(raw, dict) else '?'})"
        if not isinstance(raw, dict):
            raise KnowledgeBaseError(f"{where}: expected an object")
        task = _task(raw, where, record)
        unknown = [g for g in raw["required_documents"] if kb.get(g) is None]
        if unknown:
            raise KnowledgeBaseError(f"{where}: required_documents: no document {unknown[0]!r} in {folder}")
        tasks.append(task)
    out = Path(out_dir)
    (out / "tasks").mkdir(parents=True, exist_ok=True)
    suite = {
        "name": SUITE_NAME,
        "version": VERSION,
        "domain": NAME,
        "description": (
            "tau2-bench banking_knowledge (Sierra Research, MIT) as a retrieval suite: "
            f"{len(tasks)} customer requests over a {len(kb.documents)}-document knowledge base, "
            "graded on the required documents retrieved and on the cited answer. "
            f"Documents read from {folder}."
        ),
        "canary": f"assay-canary GUID {uuid.uuid5(uuid.NAMESPACE_URL, f'assay:{SUITE_NAME}:{kb.digest}')}",
        "defaults": {"trials": 1, "limits": {"max_turns": 10, "max_tool_calls": 40, "timeout_s": 60}},
        "task_files": ["tasks/*.yaml"],
    }
    (out / "suite.yaml").write_text(yaml.dump(suite, Dumper=_Dumper, sort_keys=False, width=100), "utf-8")
    text = yaml.dump(tasks, Dumper=_Dumper, sort_keys=False, width=100, allow_unicode=True)
    (out / "tasks" / "banking_knowledge.yaml").write_text(text, encoding="utf-8")
    return out
