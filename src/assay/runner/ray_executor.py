"""Running trials on a Ray cluster: each trial is a Ray task, results flow back to the
driver, which alone writes the store.

``RayExecutor(address=None)`` starts a private single-node Ray bound to 127.0.0.1 (no
dashboard, no usage stats); ``address="auto"`` or ``"ray://head:10001"`` (or a GCS
``host:port``) joins an existing cluster. See docs/scale.md.

Failure semantics: a worker process (or node) that dies mid-trial makes Ray run that
trial again, up to ``max_retries`` times, from the same job, so with the same seed it
gives the same result. Only a finished result reaches the driver, once per trial, so
a trial is never written twice. A trial whose worker died on every attempt is
recorded as a ``harness_error`` (excluded from rates, reported apart). A usage error
(:class:`AssayError`) raised inside a trial stops the run, as with the local executor.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from typing import Any

from ..core.results import Outcome, TrialResult
from ..core.transcript import Transcript
from ..errors import AssayError
from ..llm.cassette import current_cassette
from .executor import Executor, LocalExecutor, OnResult, deliver
from .orchestrator import TrialJob, run_trial

#: Environment variables forwarded to Ray workers (besides a local PYTHONPATH).
FORWARDED_PREFIXES = ("ASSAY_",)


def _run_job(job: TrialJob) -> TrialResult:
    """The body of the Ray task: one trial, in its own event loop."""
    return asyncio.run(run_trial(job))


def import_ray() -> Any:
    """``ray``, or an :class:`AssayError` saying how to install it."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # never phone home
    try:
        import ray
    except ImportError:
        raise AssayError("the Ray executor needs Ray: pip install 'assay[ray]'") from None
    return ray


def _loopback_only(ray: Any) -> None:
    """Make a Ray started here use 127.0.0.1 as its node address, so every Ray
    server binds the loopback interface only (Ray's single-machine mode)."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    if constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
        constants.ENABLE_RAY_CLUSTER = False


def worker_env(local: bool) -> dict[str, str]:
    """Environment variables the workers need: ``ASSAY_*`` (plugins, caches) and, for a
    Ray on this machine, the driver's import path (so ``python:module:factory`` specs
    and ``ASSAY_PLUGINS`` modules import the same code)."""
    env = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_PREFIXES)}
    if local:
        paths = [os.path.abspath(p or os.getcwd()) for p in sys.path]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in paths if os.path.isdir(p)))
    return env


def lost_trial(job: TrialJob, error: str) -> TrialResult:
    """The record of a trial that could not be run to its end on the cluster."""
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    run = job.run
    return TrialResult(
        run_id=run.run_id,
        task_id=job.task.id,
        trial_index=job.trial.index,
        seed=job.trial.seed,
        config_hash=run.config.hash,
        reward=None,
        termination="harness_error",
        model_id=run.config.model,
        prompt_version=run.config.prompt_version,
        suite_name=run.suite_name,
        suite_version=run.suite_version,
        suite_hash=run.suite_hash,
        task_hash=job.task_hash or job.task.input_hash(),
        error_category="harness_error",
        root_cause="HARNESS",
        started_at=now,
        ended_at=now,
        git_commit=run.git_commit,
        transcript=Transcript(started_at=now),
        outcome=Outcome("harness_error", error=error),
    )


class RayExecutor:
    """Trials as Ray tasks, at most ``max_in_flight`` submitted and unfinished at once
    (default: twice the trial slots of the cluster), so memory stays flat however many
    trials are planned.

    ``num_cpus`` sizes a Ray started here (default: all cores); ``num_cpus_per_trial``
    is what one trial reserves (below 1 to run several I/O-bound trials per core).
    ``runtime_env`` is merged into the job's Ray runtime environment (e.g.
    ``{"working_dir": ".", "pip": [...]}`` for a remote cluster).
    """

    def __init__(
        self,
        address: str | None = None,
        num_cpus: int | None = None,
        max_in_flight: int | None = None,
        max_retries: int = 3,
        *,
        num_cpus_per_trial: float = 1.0,
        runtime_env: dict[str, Any] | None = None,
        log_to_driver: bool = False,
        object_store_memory: int | None = 256 * 1024**2,
        poll_s: float = 0.5,
    ):
        if max_in_flight is not None and max_in_flight < 1:
            raise AssayError("max_in_flight must be at least 1")
        if num_cpus_per_trial <= 0:
            raise AssayError("num_cpus_per_trial must be positive")
        self.address, self.num_cpus, self.max_in_flight = address, num_cpus, max_in_flight
        self.max_retries, self.num_cpus_per_trial = max_retries, num_cpus_per_trial
        self.runtime_env = dict(runtime_env or {})
        self.log_to_driver, self.object_store_memory, self.poll_s = log_to_driver, object_store_memory, poll_s
        self.started = False  # whether this executor started the Ray it uses
        self._remote: Any = None

    # --- connection ---------------------------------------------------------------
    def connect(self) -> Any:
        """Start or join Ray (once) and return the ``ray`` module."""
        ray = import_ray()
        if ray.is_initialized():
            return ray
        local = self.address in (None, "local")
        env = {**worker_env(local), **self.runtime_env.get("env_vars", {})}
        runtime_env = {**self.runtime_env, "env_vars": env}
        quiet = {"logging_level": logging.ERROR, "log_to_driver": self.log_to_driver, "namespace": "assay"}
        if local:
            _loopback_only(ray)
            ray.init(
                num_cpus=self.num_cpus,
                include_dashboard=False,
                dashboard_host="127.0.0.1",
                _node_ip_address="127.0.0.1",
                object_store_memory=self.object_store_memory,
                runtime_env=runtime_env,
                **quiet,
            )
        else:
            try:
                ray.init(address=self.address, runtime_env=runtime_env, **quiet)
            except (ConnectionError, ValueError) as exc:
                raise AssayError(f"--ray-address {self.address}: cannot connect to Ray ({exc})") from None
        self.started = True
        return ray

    def close(self) -> None:
        """Shut down the Ray this executor started (a joined cluster keeps running)."""
        if self.started:
            import_ray().shutdown()
            self.started = False
            self._remote = None

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def window(self, ray: Any) -> int:
        """How many trials may be in flight at once."""
        if self.max_in_flight is not None:
            return self.max_in_flight
        cpus = float(ray.cluster_resources().get("CPU", 1))
        return max(2, int(2 * cpus / self.num_cpus_per_trial))

    # --- running ------------------------------------------------------------------
    async def execute(self, jobs: Iterable[TrialJob], on_result: OnResult) -> None:
        if current_cassette() is not None:
            raise AssayError("model cassettes (--record/--replay) work with the local executor only")
        ray = self.connect()
        if self._remote is None:
            self._remote = ray.remote(_run_job).options(
                num_cpus=self.num_cpus_per_trial, max_retries=self.max_retries, retry_exceptions=False
            )
        window = self.window(ray)
        iterator: Iterator[TrialJob] = iter(jobs)
        pending: dict[Any, TrialJob] = {}
        try:
            while True:
                while len(pending) < window and (job := next(iterator, None)) is not None:
                    pending[self._remote.remote(job)] = job
                if not pending:
                    return
                for ref, outcome in await asyncio.to_thread(self._collect, ray, list(pending)):
                    job = pending.pop(ref)
                    await deliver(
                        on_result, outcome if isinstance(outcome, TrialResult) else lost_trial(job, outcome)
                    )
        finally:
            for ref in pending:  # interrupted: stop what still runs (best effort)
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)

    def _collect(self, ray: Any, refs: list[Any]) -> list[tuple[Any, TrialResult | str]]:
        """Wait (in a thread) until some trials are done and fetch their results (or,
        for a trial that could not finish, why)."""
        ready, _ = ray.wait(refs, num_returns=1, timeout=self.poll_s)
        if ready:
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
        return [(ref, self._fetch(ray, ref)) for ref in ready]

    def _fetch(self, ray: Any, ref: Any) -> TrialResult | str:
        from ray.exceptions import RayTaskError

        try:
            return ray.get(ref)
        except RayTaskError as exc:  # the trial raised: a usage error stops the run
            cause = getattr(exc, "cause", None)
            if isinstance(cause, AssayError):
                raise cause from None
            return f"the trial failed in a Ray worker: {type(cause).__name__}: {cause}"
        except Exception as exc:  # the worker (or node) died on every attempt, ...
            first = (str(exc).strip().splitlines() or [""])[0]
            attempts = self.max_retries + 1
            return f"Ray could not finish the trial in {attempts} attempts: {type(exc).__name__}: {first}"


def make_executor(kind: str, concurrency: int = 8, ray_address: str | None = None) -> Executor:
    """The executor the CLI flags ``--executor local|ray --ray-address ADDR`` ask for.
    With Ray, parallelism is the cluster's CPUs (``--concurrency`` is for local runs)."""
    if kind == "local":
        if ray_address:
            raise AssayError("--ray-address needs --executor ray")
        return LocalExecutor(concurrency)
    if kind == "ray":
        import_ray()  # fail now, with the install hint, not after the run is created
        return RayExecutor(address=ray_address)
    raise AssayError(f"--executor {kind!r}: expected local or ray")
