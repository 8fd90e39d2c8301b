"""Running trials: orchestrator, planning, executors, the run API."""

from .api import Run, run, run_async
from .executor import Executor, LocalExecutor
from .orchestrator import TrialJob, run_trial
from .plan import plan_trials, select_tasks, trial_seed

__all__ = [
    "Executor",
    "LocalExecutor",
    "Run",
    "TrialJob",
    "plan_trials",
    "run",
    "run_async",
    "run_trial",
    "select_tasks",
    "trial_seed",
]
