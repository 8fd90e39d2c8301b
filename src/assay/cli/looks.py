"""Logging looks at holdout tasks: every command that shows a run's results (show,
report, compare, gate) records it when the run holds holdout tasks, and says so."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.markup import escape

from ..store.holdout import Action, holdout_tasks, log_holdout
from ..store.store import Store
from .app import err


def looked_at(store: Store, runs: Iterable[Any], action: Action) -> None:
    """Log ``action`` on each run (a :class:`assay.runner.api.Run`) that holds holdout tasks."""
    for run in runs:
        count = holdout_tasks(run.tasks)
        if count:
            log_holdout(store, run.info, action, count)
            err.print(
                f"[yellow]holdout:[/] run {escape(run.run_id)} holds {count} holdout task(s); this look is "
                "logged (assay suite status)"
            )
