"""best@k against brute force over all k-subsets; equals pass@k on 0/1 scores; in the
run summary computed the same way from the store and in memory."""

from __future__ import annotations

import random
from itertools import combinations

import pytest
from tests.compare.fakes import make_run

from assay.metrics import summarize
from assay.metrics.best_at_k import best_at_k, best_at_k_curve, score_stats
from assay.stats import pass_at_k


def brute(scores: list[float], k: int) -> float:
    subsets = list(combinations(scores, k))
    return sum(max(s) for s in subsets) / len(subsets)


def test_equals_the_mean_of_the_best_over_every_subset() -> None:
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(1, 8)
        scores = [rng.choice([0.0, 0.25, 0.5, 1.0, rng.random()]) for _ in range(n)]
        for k in range(1, n + 1):
            assert best_at_k(scores, k) == pytest.approx(brute(scores, k), abs=1e-12)


def test_is_pass_at_k_on_binary_scores() -> None:
    for n in range(1, 9):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert best_at_k([1.0] * c + [0.0] * (n - c), k) == pytest.approx(pass_at_k(n, c, k))
    with pytest.raises(ValueError, match="k must be between 1"):
        best_at_k([0.5], 2)


def test_curve_of_many_tasks_is_bit_for_bit_the_one_task_formula() -> None:
    rng = random.Random(11)
    tasks = [
        [rng.choice([0.0, 0.25, 0.5, 1.0, rng.random()]) for _ in range(rng.choice([0, 1, 2, 5, 30, 50, 60]))]
        for _ in range(400)
    ]
    curve = best_at_k_curve(tasks, 50)
    assert curve.shape == (400, 50)
    for t, scores in enumerate(tasks):
        for k in range(1, 51):
            if k <= len(scores):
                assert curve[t, k - 1] == best_at_k(scores, k)  # exactly: same operations, same order
            else:
                assert curve[t, k - 1] != curve[t, k - 1]  # NaN: fewer than k scores


def test_score_stats_average_over_tasks_with_enough_scores() -> None:
    rows = [("a", "judge", 0.2), ("a", "judge", 0.8), ("b", "judge", 0.5)]
    stats = score_stats(rows, 2)["judge"]
    assert stats.mean == pytest.approx(0.5) and stats.tasks == 2 and stats.scored == 3
    assert stats.best_at_k == {"1": pytest.approx((0.5 + 0.5) / 2), "2": pytest.approx(0.8)}


def test_summary_scores_from_the_store_equal_in_memory(tmp_path) -> None:
    from assay.core.results import GradeResult
    from assay.runner.api import Run
    from assay.store import Store

    run = make_run("scored", {"t1": [1, 0, 1], "t2": [0, 0, 1]})
    for i, result in enumerate(run.results):
        result.grades.append(
            GradeResult("rubric", "judge", None, score=[0.25, 0.5, 1.0][i % 3], gating=False)
        )
    store = Store(tmp_path / "s.db")
    store.create_run(run.info, run.tasks)
    store.write_trials(run.results)
    from_store = Run.load("scored", store).summary().scores
    in_memory = summarize(run.results, run.tasks, 3).scores
    assert set(from_store) == {"rubric"}  # the 0/1 "state" grader is left out
    assert from_store == in_memory
    assert from_store["rubric"].best_at_k["3"] == pytest.approx(1.0)
