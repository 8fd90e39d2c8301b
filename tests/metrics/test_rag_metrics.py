"""Retrieval metrics against ranx on 200 random runs (to 1e-9), plus their edge cases.

What is compared, metric by metric (assay name -> ranx name):

- ``recall_at_k`` -> ``recall@k``; ``precision_at_k`` -> ``precision@k``;
  ``hit_rate_at_k`` -> ``hit_rate@k``; ``reciprocal_rank`` -> ``mrr`` / ``mrr@k``;
  ``average_precision`` -> ``map`` / ``map@k``; ``r_precision`` -> ``r-precision``;
  ``ndcg_at_k(gain="linear")`` -> ``ndcg@k`` (Järvelin: gain = grade);
  ``ndcg_at_k(gain="exponential")`` -> ``ndcg_burges@k`` (gain = 2^grade - 1).
- ``k`` runs over 1, 3, 5, 10 and 25; runs hold 1..20 documents, so k=25 (and often
  k=10) is beyond the list: ranx then looks at the whole list, and precision@k still
  divides by k. assay does the same.
- Gold is binary (grade 1) and graded (grades 1..3, with some grade-0 entries that
  both treat as not relevant: ranx's ``rel_lvl=1``).
- Duplicates: a ranx run is a dict and cannot hold a document twice. assay counts a
  repeated id once at its first rank; the random lists given to assay repeat some ids
  after their first appearance, and the run given to ranx is the de-duplicated order.
- Ties: run scores are strictly decreasing, so ranx's order is the list's order.
"""

from __future__ import annotations

import random

import pytest
import ranx  # the test extra installs it: a missing ranx fails, never skips

from assay.metrics import rag

pytestmark = pytest.mark.filterwarnings("ignore:unsafe cast:Warning")

KS = (1, 3, 5, 10, 25)
N_RUNS = 200


def _random_case(rng: random.Random, graded: bool) -> tuple[list[str], dict[str, int]]:
    docs = [f"d{i:02d}" for i in range(30)]
    gold_ids = rng.sample(docs, rng.randint(1, 8))
    gold = {d: (rng.randint(1, 3) if graded else 1) for d in gold_ids}
    if graded:  # judged but not relevant
        for d in rng.sample([d for d in docs if d not in gold], 2):
            gold[d] = 0
    ranked = rng.sample(docs, rng.randint(1, 20))
    with_repeats = list(ranked)
    for _ in range(rng.randint(0, 3)):  # repeats land after the first occurrence
        pos = rng.randint(1, len(with_repeats))
        with_repeats.insert(pos, rng.choice(with_repeats[:pos]))
    return with_repeats, gold


def _cases(seed: int, graded: bool) -> dict[str, tuple[list[str], dict[str, int]]]:
    rng = random.Random(seed)
    return {f"q{i:03d}": _random_case(rng, graded) for i in range(N_RUNS)}


def _ranx_scores(cases: dict[str, tuple[list[str], dict[str, int]]], metrics: list[str]) -> dict[str, list]:
    qrels = ranx.Qrels({q: dict(gold) for q, (_, gold) in cases.items()})
    run = ranx.Run(
        {
            q: {doc: 1000.0 - rank for rank, doc in enumerate(rag.ranked_unique(retrieved))}
            for q, (retrieved, _) in cases.items()
        }
    )
    scores = ranx.evaluate(qrels, run, metrics, return_mean=False)
    return {m: list(scores[m]) for m in metrics}  # ranx orders queries by id: so do the cases


@pytest.mark.parametrize("graded", [False, True], ids=["binary", "graded"])
def test_metrics_equal_ranx_on_200_random_runs(graded):
    cases = _cases(11 if graded else 7, graded)
    assert list(cases) == sorted(cases)
    ours = {
        "mrr": rag.reciprocal_rank,
        "map": rag.average_precision,
        "r-precision": lambda r, g, k=None: rag.r_precision(r, g),
    }
    pairs: dict[str, object] = dict(ours)
    for k in KS:
        pairs[f"recall@{k}"] = lambda r, g, k=k: rag.recall_at_k(r, g, k)
        pairs[f"precision@{k}"] = lambda r, g, k=k: rag.precision_at_k(r, g, k)
        pairs[f"hit_rate@{k}"] = lambda r, g, k=k: rag.hit_rate_at_k(r, g, k)
        pairs[f"mrr@{k}"] = lambda r, g, k=k: rag.reciprocal_rank(r, g, k)
        pairs[f"map@{k}"] = lambda r, g, k=k: rag.average_precision(r, g, k)
        pairs[f"ndcg@{k}"] = lambda r, g, k=k: rag.ndcg_at_k(r, g, k, "linear")
        pairs[f"ndcg_burges@{k}"] = lambda r, g, k=k: rag.ndcg_at_k(r, g, k, "exponential")
    expected = _ranx_scores(cases, list(pairs))
    mismatches = []
    for name, fn in pairs.items():
        for (qid, (retrieved, gold)), want in zip(cases.items(), expected[name], strict=True):
            got = fn(retrieved, gold)  # type: ignore[operator]
            if abs(got - want) > 1e-9:
                mismatches.append((name, qid, got, float(want)))
    assert not mismatches, mismatches[:10]
    # the random runs exercise what the conventions are about
    assert any(len(set(r)) < len(r) for r, _ in cases.values())
    assert any(len(set(r)) < 25 for r, _ in cases.values())
    assert 0 < sum(v for v in expected["recall@5"]) < N_RUNS


def test_named_metrics_match_the_functions():
    cases = _cases(3, graded=True)
    retrieved, gold = cases["q005"]
    named = rag.retrieval_metrics(retrieved, gold, ks=(2, 7))
    assert named["recall@7"] == rag.recall_at_k(retrieved, gold, 7)
    assert named["ndcg@2"] == rag.ndcg_at_k(retrieved, gold, 2)
    assert named["mrr"] == rag.reciprocal_rank(retrieved, gold)
    assert named["map"] == rag.average_precision(retrieved, gold)
    assert named["retrieved"] == len(set(retrieved))
    assert named["gold"] == sum(1 for v in gold.values() if v > 0)
    for name in ("recall@7", "ndcg@2", "mrr", "map", "capped_recall@2", "r_precision", "precision"):
        assert rag.metric_by_name(name, retrieved, gold) == pytest.approx(named[name], abs=1e-12)


def test_context_precision_and_capped_recall_from_ranx_quantities():
    """Context precision = AP * |R| / relevant retrieved; capped recall = recall when
    |R| <= k and precision@k when |R| >= k: checked against ranx's map and recall."""
    cases = _cases(5, graded=False)
    expected = _ranx_scores(cases, ["map", "recall@5", "precision@5"])
    for i, (retrieved, gold) in enumerate(cases.values()):
        found = sum(d in gold for d in set(retrieved))
        want = expected["map"][i] * len(gold) / found if found else 0.0
        assert rag.context_precision(retrieved, gold) == pytest.approx(want, abs=1e-9)
        cap = expected["recall@5"][i] if len(gold) <= 5 else expected["precision@5"][i]
        assert rag.capped_recall_at_k(retrieved, gold, 5) == pytest.approx(cap, abs=1e-9)


def test_hand_computed_values():
    retrieved = ["a", "x", "b", "a", "y"]  # "a" again at rank 4 counts once
    gold = {"a", "b", "c"}
    assert rag.recall_at_k(retrieved, gold, 3) == pytest.approx(2 / 3)
    assert rag.precision_at_k(retrieved, gold, 3) == pytest.approx(2 / 3)
    assert rag.precision_at_k(retrieved, gold, 10) == pytest.approx(2 / 10)  # beyond the list: / k
    assert rag.precision_at_k(retrieved, gold) == pytest.approx(2 / 4)  # whole (de-duplicated) list
    assert rag.reciprocal_rank(["x", "b"], gold) == 0.5
    assert rag.reciprocal_rank(["x", "b"], gold, 1) == 0.0
    assert rag.average_precision(retrieved, gold) == pytest.approx((1 + 2 / 3) / 3)
    assert rag.context_precision(retrieved, gold) == pytest.approx((1 + 2 / 3) / 2)
    assert rag.hit_rate_at_k(["x", "y"], gold) == 0.0
    graded = {"a": 3, "b": 1}
    assert rag.ndcg_at_k(["b", "a"], graded, gain="linear") == pytest.approx(
        (1 + 3 / 1.584962500721156) / (3 + 1 / 1.584962500721156)
    )
    assert rag.ndcg_at_k(["a", "b"], graded) == pytest.approx(1.0)
    assert rag.capped_recall_at_k(["a", "b"], {"a", "b", "c", "d"}, 2) == 1.0
    assert rag.recall_at_k([], gold) == 0.0 and rag.precision_at_k([], gold) == 0.0


def test_undefined_and_bad_input():
    with pytest.raises(ValueError, match="no relevant document"):
        rag.recall_at_k(["a"], [])
    with pytest.raises(ValueError, match="no relevant document"):
        rag.ndcg_at_k(["a"], {"a": 0})
    with pytest.raises(ValueError, match="positive integer"):
        rag.recall_at_k(["a"], ["a"], 0)
    with pytest.raises(TypeError):
        rag.recall_at_k(["a"], "a")
    with pytest.raises(ValueError, match="unknown retrieval metric"):
        rag.metric_by_name("recal@5", ["a"], ["a"])
    assert rag.is_metric_name("ndcg@10") and not rag.is_metric_name("f1@3")
