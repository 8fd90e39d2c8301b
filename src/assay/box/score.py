"""Scoring configurations against a profile: per-trial loss, RMSLoss with CI, ranking."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from assay.errors import AssayError
from assay.stats import bootstrap_replicates, percentile_interval

from .loss import normalized_badness, threshold_loss
from .profile import ScoringProfile

FloatArray = npt.NDArray[np.float64]
MetricValues = Mapping[str, npt.ArrayLike]


@dataclass(frozen=True)
class TrialBreakdown:
    """Per-trial arrays: normalized badness and weighted loss per metric, and the total."""

    badness: dict[str, FloatArray]
    weighted: dict[str, FloatArray]
    total: FloatArray

    @property
    def outside(self) -> npt.NDArray[np.bool_]:
        """True for trials outside the box (some metric's badness > 1)."""
        return np.any(np.vstack(list(self.badness.values())) > 1.0, axis=0)


def _metric_arrays(values: MetricValues, profile: ScoringProfile) -> dict[str, FloatArray]:
    missing = [m for m in profile.metrics if m not in values]
    if missing:
        raise AssayError(
            f"scoring profile {profile.name!r} v{profile.version} needs metrics {missing} "
            f"but the configuration only has {sorted(values)}"
        )
    arrays: dict[str, FloatArray] = {}
    for name in profile.metrics:
        arr = np.asarray(values[name], dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"metric {name!r} has NaN or infinite values; every trial needs one")
        arrays[name] = arr
    sizes = {name: arr.size for name, arr in arrays.items()}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"every metric needs one value per trial; got sizes {sizes}")
    if next(iter(sizes.values())) == 0:
        raise ValueError("no trials to score")
    return arrays


def trial_breakdown(values: MetricValues, profile: ScoringProfile) -> TrialBreakdown:
    """Badness and loss of every trial: ``loss = Σ_m λ_m·softplus(k_m·(b_m - 1))²``.

    ``values`` maps metric name to one value per trial (same order for every metric);
    metrics not in the profile are ignored.
    """
    arrays = _metric_arrays(values, profile)
    badness: dict[str, FloatArray] = {}
    weighted: dict[str, FloatArray] = {}
    for name, spec in profile.metrics.items():
        b = np.asarray(normalized_badness(arrays[name], spec.tau, spec.direction))
        badness[name] = b
        weighted[name] = spec.weight * np.asarray(threshold_loss(b, spec.k))
    total = np.sum(np.vstack(list(weighted.values())), axis=0)
    return TrialBreakdown(badness, weighted, total)


def trial_losses(values: MetricValues, profile: ScoringProfile) -> FloatArray:
    """Weighted loss of every trial (see :func:`trial_breakdown`)."""
    return trial_breakdown(values, profile).total


@dataclass(frozen=True)
class BoxScore:
    """The box score of one configuration, with the profile identity it was scored against.

    ``rms_loss`` (lower is better) with its bootstrap interval ``[low, high]``;
    ``median_loss`` and ``mean_loss`` of the per-trial losses; ``tail_share``: share of
    trials outside the box; ``metric_tail_share``: share outside per metric;
    ``metric_loss``: mean weighted loss per metric (what drives the score).
    """

    config: str
    rms_loss: float
    low: float
    high: float
    confidence: float
    median_loss: float
    mean_loss: float
    tail_share: float
    n_trials: int
    n_tasks: int | None
    profile_name: str
    profile_version: str
    profile_hash: str
    metric_tail_share: dict[str, float] = field(default_factory=dict)
    metric_loss: dict[str, float] = field(default_factory=dict)
    replicates: FloatArray | None = field(default=None, repr=False, compare=False)
    """The bootstrap replicates of ``mean(log(1 + loss)²)`` behind the interval."""

    def with_resamples(self, n_resamples: int) -> BoxScore | None:
        """This score as :func:`score_config` with the same seed and ``n_resamples``
        (no more than it drew) gives it: the interval of its first ``n_resamples``
        replicates, which are the ones a bootstrap of that many draws (resamples are
        drawn in one order whatever their number). None without replicates."""
        if self.replicates is None or not 0 < n_resamples <= self.replicates.size:
            return None
        kept = self.replicates[:n_resamples]
        ci = percentile_interval(self.rms_loss**2, kept, self.confidence)
        return replace(self, low=float(np.sqrt(ci.low)), high=float(np.sqrt(ci.high)), replicates=kept)


def score_config(
    values: MetricValues,
    profile: ScoringProfile,
    *,
    config: str = "config",
    task_ids: Sequence[Hashable] | npt.ArrayLike | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> BoxScore:
    """Score one configuration from per-trial metric values.

    RMSLoss is ``sqrt(mean(log(1 + loss)²))``. Its interval is a percentile bootstrap of
    ``mean(log(1 + loss)²)`` (square-rooted; the percentile interval commutes with the
    monotone root), resampling whole tasks when ``task_ids`` (one per trial) are given,
    trials otherwise.
    """
    breakdown = trial_breakdown(values, profile)
    losses = breakdown.total
    y2 = np.log1p(losses) ** 2
    n_tasks = None
    if task_ids is not None:
        labels = np.asarray(task_ids)
        if labels.size != losses.size:
            raise ValueError(f"task_ids has {labels.size} entries but there are {losses.size} trials")
        integers = labels.dtype.kind in "iu"
        n_tasks = int(np.unique(labels).size) if integers else len(set(labels.reshape(-1).tolist()))
    estimate, replicates = bootstrap_replicates(
        y2, np.mean, clusters=task_ids, n_resamples=n_resamples, seed=seed
    )
    ci = percentile_interval(estimate, replicates, confidence)
    return BoxScore(
        config=config,
        rms_loss=float(np.sqrt(ci.estimate)),
        low=float(np.sqrt(ci.low)),
        high=float(np.sqrt(ci.high)),
        confidence=confidence,
        median_loss=float(np.median(losses)),
        mean_loss=float(np.mean(losses)),
        tail_share=float(np.mean(breakdown.outside)),
        n_trials=int(losses.size),
        n_tasks=n_tasks,
        profile_name=profile.name,
        profile_version=profile.version,
        profile_hash=profile.hash,
        metric_tail_share={m: float(np.mean(b > 1.0)) for m, b in breakdown.badness.items()},
        metric_loss={m: float(np.mean(w)) for m, w in breakdown.weighted.items()},
        replicates=replicates,
    )


def rank_configs(
    configs: Mapping[str, MetricValues],
    profile: ScoringProfile,
    *,
    task_ids: Mapping[str, Sequence[Hashable] | npt.ArrayLike] | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[BoxScore]:
    """Score several configurations and sort them best first (lowest RMSLoss; ties by name).

    ``task_ids`` optionally maps a configuration name to its per-trial task ids. Every
    configuration is bootstrapped with the same ``seed``. Overlapping intervals mean
    the order of those configurations is not settled by this data.
    """
    if not configs:
        raise ValueError("no configurations to rank")
    scores = [
        score_config(
            values,
            profile,
            config=name,
            task_ids=None if task_ids is None else task_ids.get(name),
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        )
        for name, values in configs.items()
    ]
    return sorted(scores, key=lambda s: (s.rms_loss, s.config))
