"""Bootstrap intervals of ratings, win matrices and ratings over time."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import numpy as np
import pytest

from assay.stats import (
    bootstrap_ratings,
    bradley_terry,
    elo_online,
    expected_win_matrix,
    expected_win_rate,
    observed_win_matrix,
    period_end,
    ratings_over_time,
)


def _battles(n: int, seed: int) -> list[tuple[str, str, str]]:
    rng = np.random.default_rng(seed)
    strength = {"alpha": 0.8, "beta": 0.0, "gamma": -0.5}
    names = list(strength)
    out = []
    for _ in range(n):
        a, b = rng.choice(names, 2, replace=False)
        p = 1 / (1 + np.exp(strength[b] - strength[a]))
        out.append((str(a), str(b), "a" if rng.random() < p else "b"))
    return out


def test_bootstrap_ratings_contain_point_estimate_and_are_seeded() -> None:
    battles = _battles(300, 0)
    result = bootstrap_ratings(battles, n_resamples=100, seed=1)
    assert result.ratings == bradley_terry(battles)
    assert result.n_failed == 0
    for model, (low, high) in result.intervals.items():
        assert low < result.ratings[model] < high
    assert bootstrap_ratings(battles, n_resamples=100, seed=1) == result
    wide = bootstrap_ratings(battles[:60], n_resamples=100, seed=1)
    width = {m: hi - lo for m, (lo, hi) in result.intervals.items()}
    assert all(wide.intervals[m][1] - wide.intervals[m][0] > width[m] for m in width)


def test_bootstrap_ratings_counts_failed_resamples() -> None:
    battles = [("A", "B", "a"), ("B", "A", "a"), ("A", "B", "a")]
    result = bootstrap_ratings(battles, n_resamples=50, seed=0)
    assert 0 < result.n_failed < 50  # resamples where one model never lost


def test_expected_win_matrix() -> None:
    m = expected_win_matrix({"x": 1200.0, "y": 1000.0, "z": 1000.0})
    assert m.models == ["x", "y", "z"]
    assert m.rates[0, 1] == pytest.approx(expected_win_rate(1200, 1000))
    assert m.rates[1, 0] == pytest.approx(1 - m.rates[0, 1])
    assert m.rates[1, 2] == pytest.approx(0.5)
    assert np.isnan(m.rates[0, 0])


def test_observed_win_matrix_counts_ties_as_half() -> None:
    battles = [("a", "b", "a"), ("b", "a", "tie"), ("a", "b", "b"), ("a", "b", "a")]
    m = observed_win_matrix(battles)
    # a vs b: 2 wins + 1 tie in 4 games → 2.5/4
    assert m.rates[0, 1] == pytest.approx(0.625)
    assert m.rates[1, 0] == pytest.approx(0.375)
    assert m.counts[0, 1] == 4
    m3 = observed_win_matrix([*battles, ("c", "a", "a")])
    assert np.isnan(m3.rates[1, 2])  # b and c never met


def test_period_end() -> None:
    assert period_end(date(2024, 5, 15), "week") == date(2024, 5, 19)  # Wed → Sunday
    assert period_end(date(2024, 5, 19), "week") == date(2024, 5, 19)
    assert period_end(date(2024, 2, 10), "month") == date(2024, 2, 29)
    assert period_end(date(2024, 12, 3), "month") == date(2024, 12, 31)
    with pytest.raises(ValueError, match="period"):
        period_end(date(2024, 1, 1), "year")  # type: ignore[arg-type]


def test_ratings_over_time_weekly_cumulative() -> None:
    battles = _battles(90, 1)
    start = datetime(2024, 1, 1, 9, 0)  # a Monday
    timed = [(start + timedelta(days=i // 3), a, b, w) for i, (a, b, w) in enumerate(battles)]
    # drop week 3 entirely to check empty periods are carried over
    timed = [t for t in timed if not (date(2024, 1, 15) <= t[0].date() <= date(2024, 1, 21))]
    snaps = ratings_over_time(timed, "week", prior=0.1)
    assert [s.period_end for s in snaps][:3] == [
        date(2024, 1, 7),
        date(2024, 1, 14),
        date(2024, 1, 21),
    ]
    assert snaps[2].ratings == snaps[1].ratings and snaps[2].n_battles == snaps[1].n_battles
    assert snaps[-1].n_battles == len(timed)
    assert snaps[-1].ratings == pytest.approx(bradley_terry([t[1:] for t in timed], prior=0.1))
    assert [s.n_battles for s in snaps] == sorted(s.n_battles for s in snaps)


def test_ratings_over_time_elo_matches_online_and_sorts_by_time() -> None:
    rows = [
        ("2024-02-03T10:00:00Z", "a", "b", "a"),
        ("2024-01-05", "b", "a", "a"),
        (date(2024, 1, 20), "a", "c", "tie"),
    ]
    snaps = ratings_over_time(rows, "month", "elo")
    assert [s.period_end for s in snaps] == [date(2024, 1, 31), date(2024, 2, 29)]
    assert snaps[0].ratings == elo_online([("b", "a", "a"), ("a", "c", "tie")])
    assert snaps[1].ratings == elo_online([("b", "a", "a"), ("a", "c", "tie"), ("a", "b", "a")])


def test_ratings_over_time_errors() -> None:
    with pytest.raises(ValueError, match="no battles"):
        ratings_over_time([])
    with pytest.raises(ValueError, match="ISO"):
        ratings_over_time([("yesterday", "a", "b", "a")])
    with pytest.raises(ValueError, match="period ending 2024-01-07"):
        ratings_over_time([("2024-01-01", "a", "b", "a")])
    with pytest.raises(ValueError, match="method"):
        ratings_over_time([("2024-01-01", "a", "b", "a")], method="glicko")  # type: ignore[arg-type]
