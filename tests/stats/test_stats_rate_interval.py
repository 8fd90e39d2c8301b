"""The task-aware rate interval used by run summaries."""

import pytest
from statsmodels.stats.proportion import proportion_confint

from assay.stats import clustered_rate_interval, wilson_bounds, wilson_interval


def test_one_trial_per_task_is_plain_wilson() -> None:
    values = [1] * 7 + [0] * 3
    r = clustered_rate_interval(values, list(range(10)))
    low, high = proportion_confint(7, 10, method="wilson")
    assert (r.low, r.high) == pytest.approx((low, high), abs=1e-12)
    assert r.n_effective == 10


def test_perfectly_correlated_trials_count_as_one_per_task() -> None:
    # each task either always passes or always fails: 4 trials add no information
    tasks = [t for t in range(10) for _ in range(4)]
    values = [1 if t < 7 else 0 for t in tasks]
    r = clustered_rate_interval(values, tasks)
    assert r.n_effective == pytest.approx(10)
    assert (r.low, r.high) == pytest.approx(wilson_interval(7, 10), abs=1e-9)


def test_independent_looking_trials_use_more_information() -> None:
    tasks = [t for t in range(10) for _ in range(4)]
    values = [(t + i) % 2 for t in range(10) for i in range(4)]  # every task 50%
    r = clustered_rate_interval(values, tasks)
    assert r.n_effective == pytest.approx(40)  # clipped at n
    assert r.high - r.low < wilson_interval(5, 10)[1] - wilson_interval(5, 10)[0]


def test_all_pass_is_conservative_not_zero_width() -> None:
    tasks = [t for t in range(44) for _ in range(4)]
    r = clustered_rate_interval([1] * len(tasks), tasks)
    assert r.high == 1.0 and r.low == pytest.approx(wilson_interval(44, 44)[0])


def test_fractional_n_and_bad_input() -> None:
    assert wilson_bounds(0.5, 12.5)[0] < 0.5
    with pytest.raises(ValueError):
        clustered_rate_interval([], [])
    with pytest.raises(ValueError):
        clustered_rate_interval([2.0], [0])
