"""cluster_bootstrap_means: several columns in one pass, equal to bootstrap_ci column by
column (same draws), missing values left out of their column."""

from __future__ import annotations

import numpy as np
import pytest

from assay.stats import bootstrap_ci, cluster_bootstrap_means


def test_each_column_equals_bootstrap_ci_with_the_same_seed():
    rng = np.random.default_rng(3)
    tasks = [f"t{i % 37}" for i in range(150)]  # several trials per task, string labels
    values = np.column_stack([rng.random(150), rng.integers(0, 2, 150), rng.normal(5, 2, 150)])
    together = cluster_bootstrap_means(values, tasks, n_resamples=1000, seed=11)
    for j in range(values.shape[1]):
        alone = bootstrap_ci(values[:, j], clusters=tasks, n_resamples=1000, seed=11)
        got = together[j]
        assert got is not None
        assert got.estimate == pytest.approx(alone.estimate, abs=1e-12)
        assert (got.low, got.high) == pytest.approx((alone.low, alone.high), abs=1e-12)


def test_missing_values_and_empty_columns():
    values = np.array([[1.0, np.nan, np.nan], [0.0, 2.0, np.nan], [1.0, 4.0, np.nan], [1.0, np.nan, np.nan]])
    a, b, c = cluster_bootstrap_means(values, ["x", "y", "z", "w"], n_resamples=500, seed=0)
    assert a is not None and a.estimate == 0.75 and 0 <= a.low <= a.high <= 1
    assert b is not None and b.estimate == 3.0 and 2.0 <= b.low <= b.high <= 4.0
    assert c is None
    again = cluster_bootstrap_means(values, ["x", "y", "z", "w"], n_resamples=500, seed=0)
    assert again[1] == b  # deterministic for a seed
    with pytest.raises(ValueError, match="2-D"):
        cluster_bootstrap_means([1.0, 2.0], ["x", "y"])
