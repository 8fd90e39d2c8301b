"""Box scores of runs: per-trial values through a scoring profile, skipped metrics named.

A profile metric is scored only when *every* counted trial of *every* compared run has
it; otherwise it is reported as skipped (never as zero), so the runs are always scored
on the same box. ``success`` (reward) and ``failure`` (1 − reward) are always there;
``cost_usd`` only when the agent reports usage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..box import BoxScore, ScoringProfile, load_profile, profile_from_yaml, rank_configs, sensitivity
from .outcomes import QUALITY_VALUES
from .pairing import RunData

DEFAULT_PROFILE_FILE = "default_box.yaml"


def default_profile() -> ScoringProfile:
    """The profile ``assay compare`` uses without ``--profile`` (shipped as YAML)."""
    text = resources.files("assay.compare").joinpath(DEFAULT_PROFILE_FILE).read_text(encoding="utf-8")
    return profile_from_yaml(text, file=f"assay/compare/{DEFAULT_PROFILE_FILE}")


def resolve_profile(profile: ScoringProfile | str | Path | None) -> ScoringProfile:
    """A profile object, a YAML path, or ``None`` for the default profile."""
    if profile is None:
        return default_profile()
    if isinstance(profile, ScoringProfile):
        return profile
    return load_profile(profile)


@dataclass
class BoxResult:
    """Box scores of the compared runs, best first, and what could not be scored."""

    profile: ScoringProfile
    scored: ScoringProfile | None
    scores: list[BoxScore]
    skipped: dict[str, str]
    means: dict[str, dict[str, float]] = field(default_factory=dict)
    stable: bool | None = None
    flips: list[dict[str, Any]] = field(default_factory=list)
    basis: tuple[list[RunData], int, float] | None = field(default=None, repr=False, compare=False)
    """The runs (the very objects), seed and ``relative`` it was scored with."""

    def with_resamples(
        self, runs: Sequence[RunData], profile: ScoringProfile, n_resamples: int, seed: int, relative: float
    ) -> BoxResult | None:
        """This result as :func:`score_runs` would give it for these arguments with
        ``n_resamples`` (no more than it drew), if it was scored from the same runs,
        profile, seed and ``relative``: the same skipped metrics, means and sensitivity
        (which no resample enters) and each score's interval from its first
        ``n_resamples`` replicates; else None."""
        if self.basis is None or self.profile.hash != profile.hash:
            return None
        scored_runs, scored_seed, scored_relative = self.basis
        same_runs = len(scored_runs) == len(runs) and all(
            a is b for a, b in zip(scored_runs, runs, strict=False)
        )
        if not same_runs or (scored_seed, scored_relative) != (seed, relative):
            return None
        scores = [s.with_resamples(n_resamples) for s in self.scores]
        if any(s is None for s in scores):
            return None
        return BoxResult(
            profile,
            self.scored,
            [s for s in scores if s is not None],
            dict(self.skipped),
            {run: dict(means) for run, means in self.means.items()},
            self.stable,
            [dict(flip) for flip in self.flips],
            (list(runs), seed, relative),
        )

    def score_of(self, run_id: str) -> BoxScore | None:
        return next((s for s in self.scores if s.config == run_id), None)

    def outside(self, run_id: str, profile: ScoringProfile | None = None) -> list[str]:
        """Non-quality box metrics whose mean for this run lies beyond τ."""
        prof = profile or self.scored
        if prof is None:
            return []
        means = self.means.get(run_id, {})
        out = []
        for name, spec in prof.metrics.items():
            if name in QUALITY_VALUES or name not in means:
                continue
            value = means[name]
            beyond = value > spec.tau if spec.direction == "lower" else value < spec.tau
            if beyond:
                out.append(name)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": {
                "name": self.profile.name,
                "version": self.profile.version,
                "hash": self.profile.hash,
                "scored_hash": None if self.scored is None else self.scored.hash,
                "metrics": self.profile.content()["metrics"],
            },
            "skipped": self.skipped,
            "ranking": [
                {
                    "run_id": s.config,
                    "rms_loss": s.rms_loss,
                    "ci": [s.low, s.high],
                    "median_loss": s.median_loss,
                    "tail_share": s.tail_share,
                    "metric_tail_share": s.metric_tail_share,
                    "metric_loss": s.metric_loss,
                    "n_trials": s.n_trials,
                    "n_tasks": s.n_tasks,
                }
                for s in self.scores
            ],
            "means": self.means,
            "sensitivity": {"stable": self.stable, "flips": self.flips},
        }


def _values(run: RunData, metrics: Sequence[str]) -> dict[str, np.ndarray]:
    return {m: run.per_trial(m) for m in metrics}


def score_runs(
    runs: Sequence[RunData],
    profile: ScoringProfile,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    relative: float = 0.2,
    reuse: BoxResult | None = None,
) -> BoxResult:
    """Box scores of ``runs`` (bootstrap CIs by task), ranking, and its ±``relative``
    sensitivity to each weight and threshold. ``reuse``: a result of the same runs,
    profile, seed and ``relative`` with at least ``n_resamples`` resamples, from which
    the same result is taken without scoring again (:meth:`BoxResult.with_resamples`;
    a report shows the box section of 1,000 resamples after a comparison of 2,000)."""
    if reuse is not None:
        taken = reuse.with_resamples(runs, profile, n_resamples, seed, relative)
        if taken is not None:
            return taken
    skipped: dict[str, str] = {}
    for name in profile.metrics:
        missing = [r.run_id for r in runs if not r.counted or r.measured(name) < r.counted]
        if missing:
            having = sum(r.measured(name) for r in runs)
            total = sum(r.counted for r in runs)
            skipped[name] = (
                f"measured on {having} of {total} counted trials (missing in {', '.join(missing)})"
            )
    kept = {n: m for n, m in profile.metrics.items() if n not in skipped}
    result = BoxResult(profile, None, [], skipped, basis=(list(runs), seed, relative))
    if not any(m.weight > 0 for m in kept.values()):
        return result
    scored = ScoringProfile(**{**profile.model_dump(exclude={"metrics"}), "metrics": kept})
    configs, task_ids = {}, {}
    for run in runs:
        configs[run.run_id], task_ids[run.run_id] = _values(run, list(kept)), run.task
        result.means[run.run_id] = {m: float(v.mean()) for m, v in configs[run.run_id].items()}
    result.scored = scored
    result.scores = rank_configs(configs, scored, task_ids=task_ids, n_resamples=n_resamples, seed=seed)
    report = sensitivity(configs, scored, relative=relative, parameters=("weight", "tau"))
    result.stable = report.stable
    result.flips = [
        {
            "metric": p.metric,
            "parameter": p.parameter,
            "factor": p.factor,
            "value": p.value,
            "ranking": p.ranking,
        }
        for p in report.flips
    ]
    return result
