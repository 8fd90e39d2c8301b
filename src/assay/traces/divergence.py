"""Where each trial of a replay run diverged from its recorded conversation, and whether
its reward is the recorded one (what ``assay replay`` prints)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..core.task import Task
from ..envs.replay import divergence
from ..graders.replay import calls_made
from ..store.store import Store


@dataclass
class ReplayRow:
    task_id: str
    trial_index: int
    recorded_reward: int | None
    reward: int | None
    recorded_calls: int
    calls: int
    diverged_at: int | None
    """1-based position of the first call that differs from the recording (None: none)."""
    divergence: str | None
    unrecorded_calls: int
    unused_recorded_calls: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def replay_rows(store: Store, run_id: str, tasks: dict[str, Task]) -> list[ReplayRow]:
    """One row per trial of ``run_id`` whose task has a recording."""
    rows = []
    for task_id in store.task_ids(run_id):
        task = tasks.get(task_id)
        if task is None or task.replay is None:
            continue
        transcripts = store.load_transcripts(run_id, task_id)
        for result in store.load_results(run_id, task_id):
            transcript = transcripts.get(result.trial_index)
            made = calls_made(transcript) if transcript is not None else []
            report = divergence(task.replay, made)
            recorded = task.replay.source.get("reward")
            rows.append(
                ReplayRow(
                    task_id,
                    result.trial_index,
                    recorded if isinstance(recorded, int) and recorded >= 0 else None,
                    result.reward,
                    report.recorded,
                    report.made,
                    None if report.first is None else report.first.index + 1,
                    None if report.first is None else report.first.describe(),
                    report.unrecorded,
                    report.unused,
                )
            )
    return rows
