"""The bounded-box score: one number per configuration from cost, latency and quality.

A :class:`ScoringProfile` sets, per metric, a threshold τ, a direction, a penalty slope
k and a weight λ. Each trial's metrics become normalized badness (1 = at the threshold),
then a smooth threshold loss, summed with the weights; a configuration's score is the
RMSLoss of its trials' losses. See docs/box-score.md.
"""

from .loss import canonical_direction, normalized_badness, rms_loss, softplus, threshold_loss
from .profile import MetricSpec, ScoringProfile, load_profile, profile_from_yaml
from .score import (
    BoxScore,
    TrialBreakdown,
    rank_configs,
    score_config,
    trial_breakdown,
    trial_losses,
)
from .sensitivity import Perturbation, SensitivityReport, sensitivity

__all__ = [
    "BoxScore",
    "MetricSpec",
    "Perturbation",
    "ScoringProfile",
    "SensitivityReport",
    "TrialBreakdown",
    "canonical_direction",
    "load_profile",
    "normalized_badness",
    "profile_from_yaml",
    "rank_configs",
    "rms_loss",
    "score_config",
    "sensitivity",
    "softplus",
    "threshold_loss",
    "trial_breakdown",
    "trial_losses",
]
