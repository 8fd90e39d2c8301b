"""The retail suite through the public run API (orchestrator, scheduler, store)."""

from __future__ import annotations

import assay


def test_careful_and_hasty_through_the_runner():
    careful = assay.run("retail", agent="builtin:retail-careful", trials=1, seed=7).summary().to_dict()
    assert careful["overall"]["trials"] >= 40
    assert careful["overall"]["excluded"] == 0
    assert careful["overall"]["success_rate"] >= 0.95
    assert set(careful["by_stratum"]) == {"normal", "edge", "adversarial", "high_risk"}

    hasty = (
        assay.run("retail", agent="builtin:retail-hasty", trials=1, seed=7, tags=["injection", "privacy"])
        .summary()
        .to_dict()
    )
    assert hasty["overall"]["trials"] >= 6
    assert hasty["overall"]["success_rate"] == 0.0


def test_flaky_options_reach_the_agent_and_the_same_seed_reproduces():
    def rewards(slip: float) -> list[tuple[str, int, int | None]]:
        run = assay.run(
            "retail", agent="builtin:retail-flaky", trials=2, seed=3, split="holdout", params={"slip": slip}
        )
        return sorted((r.task_id, r.trial_index, r.reward) for r in run.results)

    assert rewards(0.5) == rewards(0.5)
    assert all(reward == 1 for _, _, reward in rewards(0.0))
    assert any(reward == 0 for _, _, reward in rewards(1.0))
