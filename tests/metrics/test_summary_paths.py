"""The store path of a summary (columns + SQL aggregates) equals the in-memory path."""

from pathlib import Path

import assay
from assay.metrics import summarize

SUITE = """\
name: bank
domain: toy
tasks:
  - {id: dep, template: deposit, instances: 5, tags: [money]}
  - {id: hard, template: deposit, stratum: high_risk, difficulty: 3, tags: [money, hard]}
"""


def test_store_summary_equals_in_memory_summary(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE)
    run = assay.run(
        str(tmp_path),
        agent="python:tests.toyagents:DepositAgent",
        trials=4,
        seed=2,
        params={"skip_confirm": 0.4},
    )
    from_store = run.summary().to_dict()
    in_memory = summarize(run.results, run.tasks, run.info.trials_per_task).to_dict()
    del in_memory["run"]  # the in-memory summary has no run header
    assert 0 < from_store["overall"]["success_rate"] < 1  # failures exist, so failures tables are exercised
    for key, value in in_memory.items():
        assert from_store[key] == value, key
    assert any(t["failures"] for t in from_store["tasks"])
