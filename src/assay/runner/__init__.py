"""Running trials: the run spec's resolution, orchestrator, planning, executors, the run
API, and the :class:`Run` a stored run is read as.

The names are imported on first use: reading a stored run (``assay show``, ``compare``,
``report``, the viewer) needs :mod:`assay.runner.stored` only, not the executors,
environments and model clients a run needs."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_WHERE = {
    "Run": "stored",
    "pick_trial": "stored",
    "resume": "api",
    "resume_async": "api",
    "run": "api",
    "run_async": "api",
    "Executor": "executor",
    "LocalExecutor": "executor",
    "RunContext": "orchestrator",
    "TrialJob": "orchestrator",
    "run_trial": "orchestrator",
    "plan_trials": "plan",
    "select_tasks": "plan",
    "trial_seed": "plan",
    "Resolved": "resolve",
    "load_spec_file": "resolve",
    "make_spec": "resolve",
    "resolve": "resolve",
}

__all__ = [
    "Executor",
    "LocalExecutor",
    "Resolved",
    "Run",
    "RunContext",
    "TrialJob",
    "load_spec_file",
    "make_spec",
    "pick_trial",
    "plan_trials",
    "resolve",
    "resume",
    "resume_async",
    "run",
    "run_async",
    "run_trial",
    "select_tasks",
    "trial_seed",
]

if TYPE_CHECKING:
    from .api import resume, resume_async, run, run_async
    from .executor import Executor, LocalExecutor
    from .orchestrator import RunContext, TrialJob, run_trial
    from .plan import plan_trials, select_tasks, trial_seed
    from .resolve import Resolved, load_spec_file, make_spec, resolve
    from .stored import Run, pick_trial


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
