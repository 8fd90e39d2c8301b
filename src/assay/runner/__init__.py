"""Running trials: the run spec's resolution, orchestrator, planning, executors, the run API."""

from .api import Run, resume, resume_async, run, run_async
from .executor import Executor, LocalExecutor
from .orchestrator import RunContext, TrialJob, run_trial
from .plan import plan_trials, select_tasks, trial_seed
from .resolve import Resolved, load_spec_file, make_spec, resolve

__all__ = [
    "Executor",
    "LocalExecutor",
    "Resolved",
    "Run",
    "RunContext",
    "TrialJob",
    "load_spec_file",
    "make_spec",
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
