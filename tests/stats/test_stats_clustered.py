"""Task-clustered SE against statsmodels OLS with cov_type="cluster"."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from assay.stats import clustered_mean, clustered_se


def _statsmodels_cluster(y: np.ndarray, groups: np.ndarray) -> tuple[float, float, float]:
    res = sm.OLS(y, np.ones((y.size, 1))).fit(cov_type="cluster", cov_kwds={"groups": groups})
    low, high = res.conf_int(alpha=0.05)[0]
    return float(res.bse[0]), float(low), float(high)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_statsmodels_on_unbalanced_clusters(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, size=25)
    groups = np.repeat(np.arange(25), sizes)
    task_effect = rng.normal(0, 1, 25)[groups]
    y = (rng.random(groups.size) < 1 / (1 + np.exp(-task_effect))).astype(float)
    se_ref, low_ref, high_ref = _statsmodels_cluster(y, groups)
    result = clustered_mean(y, groups)
    assert result.se == pytest.approx(se_ref, rel=1e-10)
    assert clustered_se(y, groups) == pytest.approx(se_ref, rel=1e-10)
    assert result.low == pytest.approx(low_ref, rel=1e-9)
    assert result.high == pytest.approx(high_ref, rel=1e-9)
    assert result.n_clusters == 25
    assert result.n == y.size


def test_string_task_ids_and_hand_value() -> None:
    # tasks A: [1, 1], B: [0, 0]; mean .5, residual sums +1 and -1;
    # SE² = G/(G-1)·Σ S² / N² = 2·2/16 = 0.25 → SE 0.5
    assert clustered_se([1, 1, 0, 0], ["A", "A", "B", "B"]) == pytest.approx(0.5)


def test_singleton_clusters_reduce_to_iid_se() -> None:
    y = np.array([0.1, 0.4, 0.35, 0.8, 0.9, 0.2])
    assert clustered_se(y, np.arange(y.size)) == pytest.approx(y.std(ddof=1) / np.sqrt(y.size), rel=1e-12)


def test_clustering_widens_the_se_when_tasks_are_correlated() -> None:
    y = np.repeat([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0], 5)
    groups = np.repeat(np.arange(8), 5)
    naive = y.std(ddof=1) / np.sqrt(y.size)
    assert clustered_se(y, groups) > 2 * naive


def test_errors() -> None:
    with pytest.raises(ValueError, match="two clusters"):
        clustered_se([1.0, 0.0], ["t", "t"])
    with pytest.raises(ValueError, match="labels"):
        clustered_se([1.0, 0.0, 1.0], ["a", "b"])
    with pytest.raises(ValueError, match="empty"):
        clustered_se([], [])


def test_integer_codes_of_sorted_and_unsorted_labels_are_those_of_np_unique() -> None:
    from assay.stats.clustered import cluster_codes

    rng = np.random.default_rng(3)
    for _ in range(200):
        labels = rng.integers(-5, 40, size=int(rng.integers(1, 300)))
        for array in (np.sort(labels), labels):  # sorted: the fast path; else np.unique
            codes = cluster_codes(array, array.size)
            assert codes.dtype == np.intp
            assert np.array_equal(codes, np.unique(array, return_inverse=True)[1])
