"""Pairwise judging in both orders against scripted judges: agreement wins, flips become
ties for review, the position-bias rate, and battles that ``assay rank`` reads."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.support.fake_llm_replies import to_messages
from tests.support.fake_llm_server import FakeLLMServer

from assay.compare.judging import judge_runs
from assay.core import Config, Message, RunInfo, TaskMeta, Transcript, TrialResult
from assay.core.spec import RunSpec
from assay.graders import PairInput, judge_pair, write_battles
from assay.graders.pairwise import combine_orders
from assay.llm import get_model
from assay.report.ranking import load_votes
from assay.stats import bradley_terry
from assay.store import Store, now_iso

RESPONSE = re.compile(r"<<<(UNTRUSTED-[0-9A-F]{12}) response (\d)>>>\n(.*?)\n<<<END \1>>>", re.DOTALL)


def responses(request: dict[str, Any]) -> dict[str, str]:
    prompt = to_messages(request)[1].content  # the first user message holds the responses
    return {m.group(2): m.group(3) for m in RESPONSE.finditer(prompt)}


def prefers(word: str):
    """A fair judge: picks the response containing ``word``; tie if both or none do."""

    def handler(request: dict[str, Any]) -> str:
        r = responses(request)
        hits = [k for k, v in r.items() if word in v]
        return json.dumps({"winner": hits[0] if len(hits) == 1 else "tie", "reason": f"has {word}"})

    return handler


def always_first(request: dict[str, Any]) -> str:
    return '{"winner": "1", "reason": "the first one reads better"}'


@pytest.mark.parametrize(
    ("first", "second", "winner", "consistent", "review"),
    [
        ("a", "a", "a", True, False),
        ("b", "b", "b", True, False),
        ("tie", "tie", "tie", True, False),
        ("a", "b", "tie", False, True),  # a flip: position bias, to review
        ("a", "tie", "tie", False, False),
        (None, "a", "tie", False, True),
    ],
)
def test_both_orders_must_agree(first, second, winner, consistent, review) -> None:
    assert combine_orders(first, second) == (winner, consistent, review)


async def judge(handler, a: str, b: str):
    with FakeLLMServer(handler) as srv:
        model = get_model("openai:pair-judge", base_url=srv.openai_base_url, api_key="x")
        result = await judge_pair(model, PairInput("Which doctor?", a, b))
        return result, srv.request_count


async def test_a_consistent_judge_gives_a_win() -> None:
    result, calls = await judge(prefers("GOOD"), "GOOD: Dr. Chen", "bad: Dr. Smith")
    assert (result.winner, result.first, result.second, result.consistent) == ("a", "a", "a", True)
    assert calls == 2  # one call per order
    result, _ = await judge(prefers("GOOD"), "bad", "GOOD")
    assert result.winner == "b" and not result.needs_review


async def test_position_swapped_verdicts_that_disagree_become_ties() -> None:
    result, _ = await judge(always_first, "one answer", "another answer")
    assert result.first == "a" and result.second == "b"
    assert result.winner == "tie" and not result.consistent and result.needs_review


async def test_malformed_pairwise_answers_are_retried_then_reviewed() -> None:
    def handler(request: dict[str, Any]) -> str:
        ab_order = responses(request)["1"] == "x"
        retry = len(request["messages"]) > 2
        # A/B order: malformed, then fine on the retry; B/A order: malformed twice
        return '{"winner": "1"}' if ab_order and retry else "I prefer the first."

    result, calls = await judge(handler, "x", "y")
    assert calls == 4 and result.first == "a" and result.second is None
    assert result.winner == "tie" and result.needs_review


def store_run(store: Store, run_id: str, agent: str, answers: dict[tuple[str, int], str]) -> None:
    """A finished run whose trials ended with the given final answers."""
    tasks = sorted({t for t, _ in answers})
    config = Config(agent=agent)
    info = RunInfo(
        run_id=run_id,
        created_at=now_iso(),
        suite_name="s",
        suite_version="1",
        suite_hash="h",
        suite_source="s",
        spec=RunSpec(suite="s"),
        config=config,
        config_hash=config.hash,
        seed=0,
        trials_per_task=max(i for _, i in answers) + 1,
        task_ids=tasks,
        status="finished",
    )
    store.create_run(info, [TaskMeta(t, description=f"question {t}") for t in tasks])
    for (task_id, index), text in answers.items():
        store.write_trial(
            TrialResult(
                run_id=run_id,
                task_id=task_id,
                trial_index=index,
                seed=index,
                config_hash=config.hash,
                reward=1,
                termination="user_stop",
                started_at=now_iso(),
                ended_at=now_iso(),
                transcript=Transcript([Message("user", f"ask {task_id}"), Message("assistant", text)]),
            )
        )


async def test_judge_runs_writes_battles_that_rank_reads(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    keys = [(f"t{i}", j) for i in range(4) for j in range(2)]
    store_run(store, "run-a", "python:a", {k: ("GOOD answer" if k[0] != "t3" else "weak") for k in keys})
    store_run(store, "run-b", "python:b", {k: ("weak" if k[0] != "t3" else "GOOD answer") for k in keys})
    with FakeLLMServer(prefers("GOOD")) as srv:
        model = get_model("openai:pair-judge", base_url=srv.openai_base_url, api_key="x")
        report = await judge_runs(store, "run-a", "run-b", [("openai:pair-judge", model)])
    assert len(report.battles) == 8 and report.position_bias_rate() == 0.0
    assert (
        sum(b.winner == "a" for b in report.battles) == 6
        and sum(b.winner == "b" for b in report.battles) == 2
    )
    first = report.battles[0]
    assert (first.model_a, first.model_b, first.question_id) == ("python:a", "python:b", "t0#0")
    path = tmp_path / "battles.jsonl"
    assert write_battles(path, report.battles) == 8
    row = json.loads(path.read_text().splitlines()[0])
    assert {"model_a", "model_b", "winner", "question_id", "timestamp"} <= set(row)
    votes = load_votes(path)
    ratings = bradley_terry([v.triple() for v in votes])
    assert ratings["python:a"] > ratings["python:b"]


async def test_a_position_biased_judge_shows_in_the_rate(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    store_run(store, "a", "python:x", {("t", 0): "one", ("u", 0): "two"})
    store_run(store, "b", "python:x", {("t", 0): "three", ("u", 0): "four"})
    with FakeLLMServer(always_first) as srv:
        model = get_model("openai:biased", base_url=srv.openai_base_url, api_key="x")
        report = await judge_runs(store, "a", "b", [("openai:biased", model)])
    assert report.position_bias_rate() == 1.0 and all(b.winner == "tie" for b in report.battles)
    assert report.summary()["needs_review"] == 2
    assert {b.model_a for b in report.battles} == {"a"}  # same agent on both sides: run ids name them
