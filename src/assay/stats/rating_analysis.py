"""Views on pairwise ratings: bootstrap intervals, win-rate matrices, ratings over time."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

import numpy as np
import numpy.typing as npt

from ._checks import check_confidence, rng_from
from .ranking import bradley_terry, elo_online, parse_battles, win_counts


@dataclass(frozen=True)
class RatingsBootstrap:
    """Bradley–Terry ratings with percentile bootstrap intervals per model.

    ``n_failed`` counts resamples that could not be rated (a model missing from the
    resample or an undefeated group); they are left out of the intervals. Many failures
    mean the data are too thin: collect more battles or fit with ``prior > 0``.
    """

    ratings: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    confidence: float
    n_resamples: int
    n_failed: int


def bootstrap_ratings(
    battles: Iterable[Sequence[object]],
    *,
    n_resamples: int = 200,
    confidence: float = 0.95,
    seed: int | np.random.Generator = 0,
    scale: float = 400,
    base: float = 10,
    init: float = 1000,
    prior: float = 0.0,
) -> RatingsBootstrap:
    """Bradley–Terry ratings and percentile intervals from resampling battles with replacement.

    Each replicate draws as many battles as observed, fits :func:`bradley_terry`, and the
    interval is the (α/2, 1-α/2) quantiles of each model's replicate ratings. Intervals
    of two models that overlap do not prove a tie, but non-overlapping ones are a strong
    sign the ordering is real.
    """
    check_confidence(confidence)
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    parsed = parse_battles(battles)
    point = bradley_terry(parsed, scale, base, init, prior=prior)
    models = sorted(point)
    rng = rng_from(seed)
    rows: list[list[float]] = []
    failed = 0
    for _ in range(n_resamples):
        sample = [parsed[i] for i in rng.integers(0, len(parsed), size=len(parsed))]
        try:
            fit = bradley_terry(sample, scale, base, init, prior=prior)
        except ValueError:
            failed += 1
            continue
        if len(fit) != len(models):
            failed += 1
            continue
        rows.append([fit[m] for m in models])
    if not rows:
        raise ValueError("no bootstrap resample could be rated; collect more battles or pass prior > 0")
    reps = np.asarray(rows)
    tail = (1.0 - confidence) / 2.0
    low = np.quantile(reps, tail, axis=0)
    high = np.quantile(reps, 1.0 - tail, axis=0)
    intervals = {m: (float(lo), float(hi)) for m, lo, hi in zip(models, low, high, strict=True)}
    return RatingsBootstrap(point, intervals, confidence, n_resamples, failed)


@dataclass(frozen=True)
class WinMatrix:
    """``rates[i, j]``: win rate of ``models[i]`` against ``models[j]`` (ties count half).

    ``counts[i, j]`` is the number of battles between the two (zero for expected
    matrices' diagonal); rates are NaN where no battles were observed and on the diagonal.
    """

    models: list[str]
    rates: npt.NDArray[np.float64]
    counts: npt.NDArray[np.float64]


def expected_win_matrix(ratings: Mapping[str, float], scale: float = 400, base: float = 10) -> WinMatrix:
    """Expected win rates implied by ratings (:func:`expected_win_rate` for every pair)."""
    models = sorted(ratings)
    r = np.array([ratings[m] for m in models], dtype=np.float64)
    rates = 1.0 / (1.0 + np.power(float(base), (r[None, :] - r[:, None]) / scale))
    np.fill_diagonal(rates, np.nan)
    return WinMatrix(models, rates, np.zeros_like(rates))


def observed_win_matrix(battles: Iterable[Sequence[object]]) -> WinMatrix:
    """Observed win rates between every pair of models (NaN where they never met)."""
    parsed = parse_battles(battles)
    if not parsed:
        raise ValueError("no battles given")
    models, wins = win_counts(parsed)
    counts = wins + wins.T
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(counts > 0, wins / np.where(counts > 0, counts, 1.0), np.nan)
    return WinMatrix(models, rates, counts)


@dataclass(frozen=True)
class RatingSnapshot:
    """Cumulative ratings from all battles up to the end of one period."""

    period_end: date
    n_battles: int
    ratings: dict[str, float]


def _as_date(value: object) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).date()
        except ValueError as exc:
            raise ValueError(f"timestamp {value!r} is not an ISO 8601 date or datetime") from exc
    raise ValueError(f"timestamp must be a date, datetime or ISO string, got {value!r}")


def period_end(day: date, period: Literal["week", "month"]) -> date:
    """Last day of the period holding ``day``: the Sunday of its ISO week, or month end."""
    if period == "week":
        return day + timedelta(days=6 - day.weekday())
    if period == "month":
        first_next = date(day.year + (day.month == 12), day.month % 12 + 1, 1)
        return first_next - timedelta(days=1)
    raise ValueError(f"period must be 'week' or 'month', not {period!r}")


def ratings_over_time(
    battles: Iterable[Sequence[object]],
    period: Literal["week", "month"] = "week",
    method: Literal["bradley_terry", "elo"] = "bradley_terry",
    *,
    scale: float = 400,
    base: float = 10,
    init: float = 1000,
    k: float = 4,
    prior: float = 0.0,
) -> list[RatingSnapshot]:
    """Cumulative ratings at the end of every week or month, for a ratings-over-time chart.

    ``battles`` are ``(timestamp, model_a, model_b, winner)``; timestamps are dates,
    datetimes or ISO strings (the calendar date is taken as written, in its own time zone).
    Battles are sorted by timestamp (stably). There is one snapshot per period from the
    first to the last battle, empty periods included (ratings carried over). Snapshots
    use all battles up to the period end: Bradley–Terry refits each one; Elo continues
    its online updates. Early periods may not be identifiable for Bradley–Terry (an
    undefeated model): pass ``prior > 0`` or use Elo then.
    """
    rows = []
    for i, row in enumerate(battles):
        if len(row) != 4:
            raise ValueError(f"battle {i} must be (timestamp, model_a, model_b, winner)")
        rows.append((_as_date(row[0]), i, (row[1], row[2], row[3])))
    if not rows:
        raise ValueError("no battles given")
    if method not in ("bradley_terry", "elo"):
        raise ValueError(f"method must be 'bradley_terry' or 'elo', not {method!r}")
    rows.sort(key=lambda r: (r[0], r[1]))
    ordered = parse_battles([r[2] for r in rows])
    ends = [period_end(r[0], period) for r in rows]
    snapshots: list[RatingSnapshot] = []
    current = ends[0]
    last = ends[-1]
    used = 0
    ratings: dict[str, float] = {}
    while current <= last:
        upto = used
        while upto < len(ordered) and ends[upto] <= current:
            upto += 1
        if upto > used:
            if method == "elo":
                ratings = elo_online(ordered[used:upto], k, scale, base, init, start=ratings)
            else:
                try:
                    ratings = bradley_terry(ordered[:upto], scale, base, init, prior=prior)
                except ValueError as exc:
                    raise ValueError(f"period ending {current.isoformat()}: {exc}") from exc
            used = upto
        snapshots.append(RatingSnapshot(current, used, dict(ratings)))
        current = period_end(current + timedelta(days=1), period)
    return snapshots
