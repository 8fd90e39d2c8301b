"""Percentile bootstrap (iid and task-clustered) against scipy and by its properties."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from assay.stats import (
    bootstrap_ci,
    bootstrap_replicates,
    cluster_bootstrap_ci,
    group_by_cluster,
    pass_hat_k,
    percentile_interval,
)


def test_percentile_matches_scipy_within_monte_carlo_error() -> None:
    rng = np.random.default_rng(42)
    x = rng.normal(10.0, 2.0, size=60)
    ours = bootstrap_ci(x, n_resamples=10000, seed=1)
    ref = stats.bootstrap(
        (x,), np.mean, n_resamples=10000, method="percentile", random_state=2
    ).confidence_interval
    se = x.std(ddof=1) / np.sqrt(x.size)
    # MC sd of a 2.5% quantile with B=10^4 is ≈ 0.03·SE; allow ~8 sd of the difference
    assert ours.low == pytest.approx(ref.low, abs=0.25 * se)
    assert ours.high == pytest.approx(ref.high, abs=0.25 * se)
    assert ours.estimate == pytest.approx(x.mean())
    # and the interval is close to the normal one for a mean of 60 normals
    assert ours.high - ours.low == pytest.approx(2 * 1.96 * se, rel=0.1)


def test_generic_statistic_path_agrees_with_fast_mean_path() -> None:
    rng = np.random.default_rng(3)
    x = rng.exponential(size=80)
    fast = bootstrap_ci(x, np.mean, n_resamples=4000, seed=5)
    slow = bootstrap_ci(x, lambda v: float(np.mean(v)), n_resamples=4000, seed=5)
    se = x.std(ddof=1) / np.sqrt(x.size)
    assert slow.low == pytest.approx(fast.low, abs=0.25 * se)
    assert slow.high == pytest.approx(fast.high, abs=0.25 * se)


def test_deterministic_given_seed_and_generator() -> None:
    x = np.arange(30.0)
    a = bootstrap_ci(x, np.median, n_resamples=500, seed=7)
    b = bootstrap_ci(x, np.median, n_resamples=500, seed=7)
    c = bootstrap_ci(x, np.median, n_resamples=500, seed=8)
    assert a == b
    assert a != c
    g1 = bootstrap_ci(x, n_resamples=500, seed=np.random.default_rng(11))
    g2 = bootstrap_ci(x, n_resamples=500, seed=np.random.default_rng(11))
    assert g1 == g2


def test_2d_rows_are_resampled_together() -> None:
    rng = np.random.default_rng(0)
    rows = np.column_stack([rng.normal(size=40), rng.normal(size=40)])
    rows[:, 1] = rows[:, 0] + 1.0  # second column always first + 1

    def gap(r: np.ndarray) -> float:
        return float(np.mean(r[:, 1] - r[:, 0]))

    ci = bootstrap_ci(rows, gap, n_resamples=200, seed=0)
    assert ci.low == pytest.approx(1.0) and ci.high == pytest.approx(1.0)


def test_cluster_bootstrap_of_identical_trials_equals_bootstrap_of_task_means() -> None:
    # every trial of a task has the same value: resampling tasks is resampling task means
    rng = np.random.default_rng(1)
    task_means = rng.random(20)
    values = np.repeat(task_means, 4)
    tasks = np.repeat([f"t{i}" for i in range(20)], 4)
    clustered = bootstrap_ci(values, clusters=tasks, n_resamples=3000, seed=9)
    per_task = bootstrap_ci(task_means, n_resamples=3000, seed=9)
    assert clustered.low == pytest.approx(per_task.low, abs=1e-12)
    assert clustered.high == pytest.approx(per_task.high, abs=1e-12)
    # while treating the 80 trials as independent is overconfident (≈ 1/2 as wide)
    naive = bootstrap_ci(values, n_resamples=3000, seed=9)
    assert (naive.high - naive.low) < 0.7 * (clustered.high - clustered.low)


def test_cluster_resampling_keeps_tasks_whole() -> None:
    sizes = {0: 1, 1: 2, 2: 3, 3: 5}
    task_col = np.concatenate([[t] * s for t, s in sizes.items()]).astype(float)
    rows = np.column_stack([task_col, np.ones_like(task_col)])
    seen: list[int] = []

    def check(r: np.ndarray) -> float:
        ids, counts = np.unique(r[:, 0], return_counts=True)
        for task, count in zip(ids, counts, strict=True):
            assert count % sizes[int(task)] == 0
        seen.append(r.shape[0])
        return float(r.shape[0])

    bootstrap_ci(rows, check, clusters=task_col, n_resamples=300, seed=0)
    assert len(set(seen)) > 3  # resample sizes vary with the tasks drawn


def test_clustered_generic_statistic_path() -> None:
    rng = np.random.default_rng(4)
    tasks = np.repeat(np.arange(30), 3)
    values = rng.normal(size=30)[tasks] + rng.normal(scale=0.1, size=tasks.size)
    fast = bootstrap_ci(values, clusters=tasks, n_resamples=3000, seed=2)
    slow = bootstrap_ci(values, lambda v: float(v.mean()), clusters=tasks, n_resamples=3000, seed=2)
    width = fast.high - fast.low
    assert slow.low == pytest.approx(fast.low, abs=0.1 * width)
    assert slow.high == pytest.approx(fast.high, abs=0.1 * width)


def test_pass_hat_k_per_task_with_cluster_bootstrap() -> None:
    rng = np.random.default_rng(5)
    p_task = rng.beta(2, 1, size=40)
    outcomes = (rng.random((40, 4)) < p_task[:, None]).astype(float)
    tasks = np.repeat(np.arange(40), 4)
    groups = list(group_by_cluster(outcomes.reshape(-1), tasks).values())
    assert len(groups) == 40 and all(g.size == 4 for g in groups)

    def mean_pass_hat_3(gs: list[np.ndarray]) -> float:
        return float(np.mean([pass_hat_k(g.size, int(g.sum()), 3) for g in gs]))

    ci = cluster_bootstrap_ci(groups, mean_pass_hat_3, n_resamples=1000, seed=3)
    assert ci.estimate == pytest.approx(mean_pass_hat_3(groups))
    assert ci.low < ci.estimate < ci.high
    assert ci.low >= 0.0 and ci.high <= 1.0
    again = cluster_bootstrap_ci(groups, mean_pass_hat_3, n_resamples=1000, seed=3)
    assert again == ci


def test_group_by_cluster_keeps_first_appearance_order() -> None:
    groups = group_by_cluster([1, 2, 3, 4], ["b", "a", "b", "c"])
    assert list(groups) == ["b", "a", "c"]
    assert groups["b"].tolist() == [1.0, 3.0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"values": []}, "empty"),
        ({"values": [1.0, np.nan]}, "NaN"),
        ({"values": [1.0, 2.0], "n_resamples": 0}, "at least 1"),
        ({"values": [1.0, 2.0], "confidence": 0.0}, "confidence"),
        ({"values": [1.0, 2.0], "seed": None}, "seed"),
    ],
)
def test_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bootstrap_ci(**kwargs)


def test_cluster_bootstrap_rejects_no_groups() -> None:
    with pytest.raises(ValueError, match="empty"):
        cluster_bootstrap_ci([], lambda gs: 0.0)


@pytest.mark.parametrize("groups", [None, 1, 7, 10, 333])
def test_the_first_n_replicates_of_more_resamples_are_those_of_n(groups: int | None) -> None:
    """Resamples are drawn in one order whatever their number, so a bootstrap of n is
    the first n replicates of a bootstrap of more with the same seed (a report takes its
    box scores of 1,000 resamples from a comparison's 2,000)."""
    rng = np.random.default_rng(11)
    x = rng.lognormal(0, 1, 700)
    clusters = None if groups is None else rng.integers(0, groups, 700)
    estimate, many = bootstrap_replicates(x, clusters=clusters, n_resamples=2000, seed=3)
    for n in (1, 255, 256, 257, 999, 1000, 2000):
        ci = bootstrap_ci(x, clusters=clusters, n_resamples=n, seed=3)
        assert percentile_interval(estimate, many[:n]) == ci
        assert (
            bootstrap_replicates(x, clusters=clusters, n_resamples=n, seed=3)[1].tolist() == many[:n].tolist()
        )
    median = bootstrap_replicates(x, np.median, clusters=clusters, n_resamples=300, seed=3)[1]
    assert bootstrap_replicates(x, np.median, clusters=clusters, n_resamples=120, seed=3)[1].tolist() == (
        median[:120].tolist()
    )
