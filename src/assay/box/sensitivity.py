"""Sensitivity of a box ranking to its weights and thresholds.

The box is a policy decision; if a ±20% change of one weight or threshold flips which
configuration wins (or whether one passes), that choice deserves a conversation with
the people who set the box, not a silent default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .loss import rms_loss
from .profile import ScoringProfile
from .score import MetricValues, trial_breakdown

PARAMETERS = ("weight", "tau", "k")


@dataclass(frozen=True)
class Perturbation:
    """One perturbed profile and what it did to the ranking and verdicts."""

    metric: str
    parameter: str
    factor: float
    value: float
    ranking: list[str]
    rms_loss: dict[str, float]
    winner_changed: bool
    ranking_changed: bool
    verdict_flips: list[str]


@dataclass(frozen=True)
class SensitivityReport:
    """Baseline ranking and every perturbation tried; ``stable`` if nothing flipped."""

    ranking: list[str]
    rms_loss: dict[str, float]
    verdicts: dict[str, bool] | None
    perturbations: list[Perturbation]

    @property
    def flips(self) -> list[Perturbation]:
        """Perturbations that changed the winner, the order or a verdict."""
        return [p for p in self.perturbations if p.winner_changed or p.ranking_changed or p.verdict_flips]

    @property
    def stable(self) -> bool:
        """True when no perturbation changed the ranking or a verdict."""
        return not self.flips


def _perturbed_value(profile: ScoringProfile, metric: str, parameter: str, factor: float) -> float:
    spec = profile.metrics[metric]
    if parameter == "tau" and spec.direction == "higher":
        # scale the allowance 1 - τ, so τ stays below 1 (0.80 → 0.76 / 0.84 at ±20%)
        return 1.0 - (1.0 - spec.tau) * factor
    return float(getattr(spec, parameter)) * factor


class _Scores:
    """RMSLoss of each configuration under a profile, with each metric's per-trial
    loss kept by (configuration, metric, tau, direction, k): a perturbed profile
    changes one metric, so the other metrics' losses are reused (on a million trials
    this is most of the work)."""

    def __init__(self, configs: Mapping[str, MetricValues]):
        self.configs = configs
        self._parts: dict[tuple[str, str, float, str, float], npt.NDArray[np.float64]] = {}

    def _part(self, name: str, metric: str, profile: ScoringProfile) -> npt.NDArray[np.float64]:
        spec = profile.metrics[metric]
        key = (name, metric, spec.tau, spec.direction, spec.k)
        if key not in self._parts:
            one = ScoringProfile(
                name="one", version="1", metrics={metric: spec.model_copy(update={"weight": 1.0})}
            )
            self._parts[key] = trial_breakdown(self.configs[name], one).total
        return self._parts[key]

    def __call__(self, profile: ScoringProfile) -> dict[str, float]:
        out = {}
        for name in self.configs:
            total = sum(spec.weight * self._part(name, m, profile) for m, spec in profile.metrics.items())
            out[name] = rms_loss(np.asarray(total, dtype=np.float64))
        return out


def _order(scores: Mapping[str, float]) -> list[str]:
    return sorted(scores, key=lambda name: (scores[name], name))


def sensitivity(
    configs: Mapping[str, MetricValues],
    profile: ScoringProfile,
    *,
    relative: float = 0.2,
    parameters: Sequence[str] = ("weight", "tau"),
    max_rms_loss: float | None = None,
) -> SensitivityReport:
    """Re-rank ``configs`` with each weight/threshold (and optionally k) moved by ±``relative``.

    One parameter of one metric changes at a time, by factors ``1 - relative`` and
    ``1 + relative``. Thresholds of lower-is-better metrics scale τ; those of
    higher-is-better metrics scale the allowance ``1 - τ``. With ``max_rms_loss`` each
    configuration also gets a pass/fail verdict (``RMSLoss <= max_rms_loss``) and flips
    of that verdict are reported. Uses point estimates only (no bootstrap).
    """
    if not 0.0 < relative < 1.0:
        raise ValueError(f"relative must be in (0, 1), got {relative}")
    unknown = [p for p in parameters if p not in PARAMETERS]
    if unknown:
        raise ValueError(f"unknown parameters {unknown}; choose from {list(PARAMETERS)}")
    if not configs:
        raise ValueError("no configurations to compare")
    _scores = _Scores(configs)
    base = _scores(profile)
    base_order = _order(base)

    def verdicts(scores: Mapping[str, float]) -> dict[str, bool] | None:
        if max_rms_loss is None:
            return None
        return {name: bool(value <= max_rms_loss) for name, value in scores.items()}

    base_verdicts = verdicts(base)
    results: list[Perturbation] = []
    for metric in profile.metrics:
        for parameter in parameters:
            for factor in (1.0 - relative, 1.0 + relative):
                value = _perturbed_value(profile, metric, parameter, factor)
                changed = profile.with_metric(metric, **{parameter: value})
                scores = _scores(changed)
                order = _order(scores)
                new_verdicts = verdicts(scores)
                flips = (
                    []
                    if base_verdicts is None or new_verdicts is None
                    else sorted(n for n in scores if new_verdicts[n] != base_verdicts[n])
                )
                results.append(
                    Perturbation(
                        metric=metric,
                        parameter=parameter,
                        factor=float(np.round(factor, 12)),
                        value=value,
                        ranking=order,
                        rms_loss=scores,
                        winner_changed=order[0] != base_order[0],
                        ranking_changed=order != base_order,
                        verdict_flips=flips,
                    )
                )
    return SensitivityReport(base_order, base, base_verdicts, results)
