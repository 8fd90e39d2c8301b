"""Box scores of runs for reports: RMSLoss per run (from :mod:`assay.compare`, which
skips profile metrics a run does not measure rather than counting them as zero) and the
distribution of per-trial losses behind each score."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..box import ScoringProfile, trial_losses
from ..compare import BoxResult, RunData, resolve_profile, score_runs
from ..runner.stored import Run


def box_section(
    runs: Sequence[Run], profile: ScoringProfile | None = None, scored: BoxResult | None = None
) -> dict[str, Any] | None:
    """The box section: profile identity, ranking with intervals, skipped metrics and
    per-trial losses per run (``None`` when no profile metric could be scored).
    ``profile=None`` uses the profile ``assay compare`` uses by default. ``scored``: the
    box scores of a comparison of these runs (more resamples), whose first 1,000
    resamples give the same section without scoring the runs again."""
    prof = resolve_profile(profile)
    data = [RunData.of(r) for r in runs]
    result = score_runs(data, prof, n_resamples=1000, reuse=scored)
    doc = result.to_dict()
    if result.scored is None:
        return {**doc, "losses": {}, "scored_metrics": []}
    metrics = list(result.scored.metrics)
    losses: dict[str, list[float]] = {}
    for run in data:
        if not run.counted:
            continue
        values = {m: run.per_trial(m) for m in metrics}
        losses[run.run_id] = trial_losses(values, result.scored).tolist()
    return {**doc, "losses": losses, "scored_metrics": metrics}
