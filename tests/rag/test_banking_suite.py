"""tau2's banking_knowledge as an assay RAG suite: the import, the BM25 index, the
oracle (recall 1 on all 97 tasks) and the BM25 baseline, whose figures are pinned here
and in docs/rag.md; through the library and through the CLI a user runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from assay.domains.tau2.banking_kb import (
    KnowledgeBaseError,
    corpus_digest,
    format_results,
    knowledge_base,
    load_documents,
)
from assay.domains.tau2.banking_knowledge import customer_request, import_banking_knowledge
from assay.graders.rag_sources import SourceParams, parse_tool_output
from assay.metrics import rag as metrics
from assay.runner.api import Run, run
from assay.suites.loader import load_suite
from tests.support.cli import CliResult, assay_main

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs" / "rag.md"
#: BM25 (builtin:kb-bm25, one KB_search with the opening message) over the 97 tasks:
#: mean and 95% percentile bootstrap interval over tasks (2000 resamples, seed 0).
BM25_FIGURES = {
    "recall@5": (0.2094, [0.1619, 0.2631]),
    "mrr": (0.6088, [0.5249, 0.692]),
    "ndcg@10": (0.3206, [0.2747, 0.3688]),
}


def tau2_tasks(banking_dir: Path) -> list[dict[str, Any]]:
    return json.loads((banking_dir / "tasks.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("store") / "assay.db")


@pytest.fixture(scope="module")
def oracle_run(banking_suite: Path, store: str) -> Run:
    answers = {"answers": str(banking_suite)}
    return run(banking_suite, agent="builtin:kb-oracle", trials=1, store=store, params=answers)


@pytest.fixture(scope="module")
def bm25_run(banking_suite: Path, store: str) -> Run:
    return run(banking_suite, agent="builtin:kb-bm25", trials=1, store=store)


def rag_of(r: Run) -> dict[str, Any]:
    rag = r.summary().rag
    assert rag is not None
    return rag


def retrieval_grades(r: Run) -> dict[str, Any]:
    return {res.task_id: next(g for g in res.grades if g.kind == "retrieval") for res in r.results}


# the import ----------------------------------------------------------------------------
def test_import_writes_a_valid_suite_with_the_gold_documents(banking_dir: Path, banking_suite: Path):
    suite = load_suite(banking_suite)  # validates every task and grader (tools exist, gold non-empty)
    raw = {t["id"]: t for t in tau2_tasks(banking_dir)}
    assert suite.domain == "tau2-banking-kb" and len(suite.tasks) == len(raw) == 97
    kb = knowledge_base(banking_dir)
    assert len(kb.documents) == 698
    for task in suite.tasks:
        kinds = [(g.kind, g.gating) for g in task.graders]
        assert kinds == [
            ("retrieval", True),
            ("citations", True),
            ("groundedness", False),
            ("faithfulness", False),
        ]
        assert task.graders[0].params["gold"] == raw[task.id]["required_documents"]
        assert task.initial_state.records["knowledge_base"] == [
            {"id": "kb", "path": str(banking_dir), "digest": kb.digest}
        ]
        assert task.user.instructions == raw[task.id]["user_scenario"]["instructions"]
        assert task.user.opening and "playing the role" not in task.user.opening.lower()
    # the documents are read from the tau2 folder, never copied into the suite
    assert sorted(p.name for p in banking_suite.rglob("*") if p.is_file()) == [
        "banking_knowledge.yaml",
        "suite.yaml",
    ]
    assert len({t.user.opening for t in suite.tasks}) == 97  # the oracle finds each task by its opening


def test_customer_request_drops_directions_to_the_simulator():
    text = (
        "You are playing the role of a customer contacting a customer service representative agent. "
        "Your annual income is $62,000.\n\nYou want a card with no annual fee. Never respond as the agent."
    )
    assert customer_request(text) == "Your annual income is $62,000.\nYou want a card with no annual fee."


def test_bad_tau2_folders_are_one_sentence_errors(banking_dir: Path, tmp_path: Path):
    with pytest.raises(KnowledgeBaseError, match="not a tau2 banking_knowledge folder"):
        import_banking_knowledge(tmp_path / "nowhere", tmp_path / "out")
    fake = tmp_path / "banking_knowledge"
    (fake / "documents").mkdir(parents=True)
    shutil.copy(next((banking_dir / "documents").glob("*.json")), fake / "documents")
    (fake / "tasks.json").write_text('[{"id": "t1",\n "user_scenario": }]')
    with pytest.raises(KnowledgeBaseError, match=r"tasks.json:2: invalid JSON"):
        import_banking_knowledge(fake, tmp_path / "out")
    task = {
        "id": "t1",
        "user_scenario": {"instructions": "I need a card."},
        "required_documents": ["doc_nope"],
    }
    (fake / "tasks.json").write_text(json.dumps([task]))
    with pytest.raises(
        KnowledgeBaseError, match=r"task 0 \(t1\): required_documents: no document 'doc_nope'"
    ):
        import_banking_knowledge(fake, tmp_path / "out")
    (fake / "documents" / "broken.json").write_text('{"id": "x", "title": "t"}')
    with pytest.raises(KnowledgeBaseError, match=r"broken.json:1: field 'content' is missing"):
        load_documents(fake)


def test_a_changed_knowledge_base_is_refused(banking_dir: Path):
    kb = knowledge_base(banking_dir)
    assert corpus_digest(kb.documents) == kb.digest
    with pytest.raises(KnowledgeBaseError, match="changed since the suite was imported"):
        knowledge_base(banking_dir, digest="0" * 64)


# the index -----------------------------------------------------------------------------
def test_bm25_search_is_deterministic_and_in_tau2_format(banking_dir: Path):
    kb = knowledge_base(banking_dir)
    query = "credit card with the highest cash back and no annual fee"
    first, again = kb.search(query), kb.search(query)
    assert first == again and len(first) == 10
    scores = [s for _, s in first]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0
    text = format_results(first)
    assert text.startswith(f"1. {first[0][0].title}\n   ID: {first[0][0].id}\n   Score: {scores[0]:.4f}\n")
    parsed = parse_tool_output(text, SourceParams())
    assert [(d.id, d.text, d.title) for d in parsed] == [(d.id, d.text, d.title) for d, _ in first]
    assert kb.search("zzzz qqqq") == [] and format_results([]) == "No relevant documents found."
    assert knowledge_base(banking_dir) is kb  # one index per folder and process


# the oracle ----------------------------------------------------------------------------
def test_the_oracle_retrieves_every_gold_document_on_all_97_tasks(oracle_run: Run, banking_dir: Path):
    gold = {t["id"]: t["required_documents"] for t in tau2_tasks(banking_dir)}
    grades = retrieval_grades(oracle_run)
    assert len(grades) == 97
    for task_id, g in grades.items():
        m = g.metrics
        assert g.passed is True, (task_id, g.reason)
        assert m["recall"] == 1.0 and m["retrieved"] == len(gold[task_id]), task_id
        assert m["mrr"] == m["map"] == m["ndcg@10"] == m["r_precision"] == 1.0, task_id
        for k in (1, 3, 5, 10):  # recall@k is 1 wherever k covers the gold set; capped recall always
            assert m[f"capped_recall@{k}"] == 1.0
            if k >= len(gold[task_id]):
                assert m[f"recall@{k}"] == 1.0
    summary = oracle_run.summary()
    assert summary.overall.success_rate == 1.0
    rag = summary.rag
    assert rag is not None
    assert rag["failures"] == {
        "retrieval_only": 0,
        "generation_only": 0,
        "both": 0,
        "neither": 97,
        "undecided": 0,
    }
    figures = rag["stages"]["retrieval"]["graders"]["retrieval"]["metrics"]
    assert figures["recall"] == {"mean": 1.0, "ci": [1.0, 1.0], "n": 97}
    written = DOCS.read_text(encoding="utf-8")
    for name in ("recall@5", "recall@10"):  # the oracle's plain recall@k, as docs/rag.md gives it
        mean, (low, high) = figures[name]["mean"], figures[name]["ci"]
        assert f"{name} is {mean:.3f} [{low:.3f}, {high:.3f}]" in written.replace("\n", " "), name


# the BM25 baseline ------------------------------------------------------------------------
def test_bm25_figures_are_the_index_s_own_and_pinned(bm25_run: Run, banking_dir: Path, banking_suite: Path):
    kb = knowledge_base(banking_dir)
    suite = {t.id: t for t in load_suite(banking_suite).tasks}
    for task_id, g in retrieval_grades(bm25_run).items():
        ranked = [d.id for d, _ in kb.search(suite[task_id].user.opening)]
        expected = metrics.retrieval_metrics(ranked, suite[task_id].graders[0].params["gold"])
        assert {k: g.metrics[k] for k in expected} == expected, task_id
    figures = rag_of(bm25_run)["stages"]["retrieval"]["graders"]["retrieval"]["metrics"]
    assert {name: (figures[name]["mean"], figures[name]["ci"]) for name in BM25_FIGURES} == BM25_FIGURES
    written = DOCS.read_text(encoding="utf-8")
    for name, (mean, (low, high)) in BM25_FIGURES.items():
        assert f"| {name} | {mean:.3f} | [{low:.3f}, {high:.3f}] |" in written, name


def test_bm25_failures_are_located_in_retrieval(bm25_run: Run):
    rag = rag_of(bm25_run)
    retrieval = rag["stages"]["retrieval"]
    assert rag["failures"]["generation_only"] == 0 and rag["failures"]["both"] == 0
    assert rag["failures"]["retrieval_only"] == 97 - retrieval["passed"] > 0
    assert rag["stages"]["generation"]["graders"]["citations"]["pass_rate"] == 1.0


# through the CLI -------------------------------------------------------------------------
def assay(*args: str, store: Path) -> CliResult:
    return assay_main(*args, env={"ASSAY_STORE": str(store)}, cwd=ROOT)


def test_the_cli_reports_the_same_figures(banking_suite: Path, bm25_run: Run, tmp_path: Path):
    proc = assay(
        "run", str(banking_suite), "--agent", "builtin:kb-bm25", "-k", "1", "--json", store=tmp_path / "s.db"
    )
    assert proc.returncode == 0, proc.stderr
    cli = json.loads(proc.stdout)["rag"]
    library = rag_of(bm25_run)
    assert cli["stages"] == library["stages"] and cli["failures"] == library["failures"]


def test_the_oracle_without_its_answers_says_how_to_run_it(banking_suite: Path, tmp_path: Path):
    proc = assay(
        "run",
        str(banking_suite),
        "--agent",
        "builtin:kb-oracle",
        "-k",
        "1",
        "--task",
        "task_001",
        store=tmp_path / "s.db",
    )
    assert proc.returncode == 2
    assert "--param answers=SUITE_DIR" in proc.stderr and "Traceback" not in proc.stderr
