"""Planning a run: which concrete tasks, which trials, which seeds."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from ..core.hashing import derive_seed
from ..core.results import Trial
from ..core.task import Task
from ..errors import AssayError


def trial_seed(run_seed: int, task_id: str, index: int) -> int:
    """The seed of one trial: a function of run seed, task id and trial index only."""
    return derive_seed(run_seed, task_id, index)


def task_filter(
    split: str | None = None,
    tags: Iterable[str] = (),
    task_ids: Iterable[str] = (),
    strata: Iterable[str] = (),
) -> Callable[[Task], bool]:
    """A predicate matching every filter given (tags: any of them; ids: exact, or the
    id a template's instances share, ``refund`` for ``refund-1``, ``refund-2``...).

    Holdout tasks are kept only when asked for: ``split="holdout"``, ``split="all"`` (every
    split), or named by id."""
    tag_set, ids, strata_set = set(tags), set(task_ids), set(strata)

    def named(t: Task) -> bool:
        return named_by(ids, t.id)

    def keep(t: Task) -> bool:
        return (
            (split == "all" or (t.split == split if split else t.split != "holdout" or named(t)))
            and (not tag_set or bool(tag_set & set(t.tags)))
            and (not strata_set or t.stratum in strata_set)
            and (not ids or named(t))
        )

    return keep


def named_by(ids: set[str], task_id: str) -> bool:
    """Whether ``task_id`` is one of ``ids``, or an instance of a template named there."""
    return task_id in ids or task_id.rsplit("-", 1)[0] in ids


def require_named(task_ids: Iterable[str], chosen: Iterable[str], suite: str) -> None:
    """Every id asked for (``--task``) must name one of the chosen tasks (exactly, or as the
    template its instances share): an id that names nothing is a mistake, never dropped in
    silence while the others run."""
    asked = list(dict.fromkeys(task_ids))
    chosen_ids = list(chosen)
    missing = [i for i in asked if not any(named_by({i}, t) for t in chosen_ids)]
    if missing:
        names = ", ".join(repr(i) for i in missing)
        raise AssayError(
            f"--task {names}: no task of suite {suite} has this id (or template)"
            " among the tasks the filters select"
        )


def select_tasks(
    tasks: Iterable[Task],
    split: str | None = None,
    tags: Iterable[str] = (),
    task_ids: Iterable[str] = (),
    strata: Iterable[str] = (),
) -> list[Task]:
    """The tasks matching every filter given (see :func:`task_filter`)."""
    keep = task_filter(split, tags, task_ids, strata)
    return [t for t in tasks if keep(t)]


def plan_trials(
    tasks: Sequence[Task] | Callable[[], Iterable[Task]],
    trials: int,
    run_seed: int,
    done: set[tuple[str, int]] = frozenset(),  # type: ignore[assignment]
) -> Iterator[tuple[Task, Trial]]:
    """Every (task, trial) not yet done: trial index outer, task inner, so an
    interrupted run has spread its trials over all tasks. ``tasks`` may be a function
    giving a fresh iterable for each pass (tasks streamed from disk)."""
    for index in range(trials):
        for task in tasks() if callable(tasks) else tasks:
            if (task.id, index) not in done:
                yield task, Trial(task.id, index, trial_seed(run_seed, task.id, index))
