"""A bare run record for store tests that write trials by hand."""

from __future__ import annotations

from assay.core.results import Config, RunInfo
from assay.core.spec import RunSpec


def bare_run(run_id: str, task_ids: list[str], trials_per_task: int = 1) -> RunInfo:
    """A run of suite ``s`` and agent ``a`` over ``task_ids``, made by no suite."""
    return RunInfo(
        run_id=run_id,
        created_at="2026-12-02T00:00:00.000+00:00",
        suite_name="s",
        suite_version="1",
        suite_hash="h",
        suite_source="s",
        spec=RunSpec(suite="s"),
        config=Config(agent="a"),
        config_hash="c",
        seed=0,
        trials_per_task=trials_per_task,
        task_ids=task_ids,
    )
