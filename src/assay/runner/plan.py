"""Planning a run: which concrete tasks, which trials, which seeds."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ..core.hashing import derive_seed
from ..core.results import Trial
from ..core.task import Task


def trial_seed(run_seed: int, task_id: str, index: int) -> int:
    """The seed of one trial: a function of run seed, task id and trial index only."""
    return derive_seed(run_seed, task_id, index)


def select_tasks(
    tasks: Sequence[Task],
    split: str | None = None,
    tags: Iterable[str] = (),
    task_ids: Iterable[str] = (),
    strata: Iterable[str] = (),
) -> list[Task]:
    """Tasks matching every filter given (tags: any of them; ids: exact or prefix
    before the instance number)."""
    tags, ids, strata = set(tags), set(task_ids), set(strata)
    chosen = []
    for t in tasks:
        if split and t.split != split:
            continue
        if tags and not tags & set(t.tags):
            continue
        if strata and t.stratum not in strata:
            continue
        if ids and t.id not in ids and t.id.rsplit("-", 1)[0] not in ids:
            continue
        chosen.append(t)
    return chosen


def plan_trials(
    tasks: Sequence[Task],
    trials: int,
    run_seed: int,
    done: set[tuple[str, int]] = frozenset(),  # type: ignore[assignment]
) -> Iterator[tuple[Task, Trial]]:
    """Every (task, trial) not yet done: trial index outer, task inner, so an
    interrupted run has spread its trials over all tasks."""
    for index in range(trials):
        for task in tasks:
            if (task.id, index) not in done:
                yield task, Trial(task.id, index, trial_seed(run_seed, task.id, index))
