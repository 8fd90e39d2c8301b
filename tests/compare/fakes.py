"""Synthetic runs for comparison and gate tests: no agent, just results."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from assay.core import Config
from assay.core.results import GradeResult, RunInfo, TaskMeta, TrialResult
from assay.core.spec import RunSpec
from assay.metrics import RunSummary, TrialFrame, run_header, summarize


@dataclass
class FakeRun:
    """Has what ``assay.compare``/``assay.gate`` read of a run."""

    info: RunInfo
    tasks: list[TaskMeta]
    results: list[TrialResult] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.info.run_id

    def summary(self) -> RunSummary:
        summary = summarize(self.results, self.tasks, self.info.trials_per_task)
        summary.run = run_header(self.info, len(self.results))
        return summary

    def frame(self) -> TrialFrame:
        return TrialFrame.from_results(self.results)

    def task_results(self, task_id: str) -> list[TrialResult]:
        return [r for r in self.results if r.task_id == task_id]


def make_run(
    run_id: str,
    rewards: Mapping[str, Sequence[int | None]],
    *,
    agent: str = "python:fake:agent",
    suite_hash: str = "suite-v1",
    seed: int = 0,
    strata: Mapping[str, str] | None = None,
    splits: Mapping[str, str] | None = None,
    tags: Mapping[str, Sequence[str]] | None = None,
    task_hashes: Mapping[str, str] | None = None,
    latency: Callable[[str, int], float] | None = None,
    cost: Callable[[str, int], float | None] | None = None,
    metrics: Callable[[str, int], dict[str, float]] | None = None,
) -> FakeRun:
    """A finished run with one trial per reward given (``None``: a harness error)."""
    tasks = [
        TaskMeta(
            task_id,
            stratum=(strata or {}).get(task_id, "normal"),
            split=(splits or {}).get(task_id, "regression"),
            tags=tuple((tags or {}).get(task_id, ())),
            task_hash=(task_hashes or {}).get(task_id, f"hash-{task_id}"),
        )
        for task_id in rewards
    ]
    k = max(len(v) for v in rewards.values())
    config = Config(agent=agent)
    info = RunInfo(
        run_id=run_id,
        created_at="2026-01-01T00:00:00+00:00",
        suite_name="fake",
        suite_version="1",
        suite_hash=suite_hash,
        suite_source="fake",
        spec=RunSpec(suite="fake"),
        config=config,
        config_hash=config.hash,
        seed=seed,
        trials_per_task=k,
        task_ids=list(rewards),
        status="finished",
    )
    results = []
    for task_id, values in rewards.items():
        for index, reward in enumerate(values):
            passed = reward == 1
            grades = [
                GradeResult(
                    "state",
                    "state",
                    passed,
                    score=float(passed),
                    reason="" if passed else "end state differs",
                )
            ]
            results.append(
                TrialResult(
                    run_id=run_id,
                    task_id=task_id,
                    trial_index=index,
                    seed=index,
                    config_hash=config.hash,
                    reward=reward,
                    termination="harness_error" if reward is None else "user_stop",
                    grades=[] if reward is None else grades,
                    metrics=(metrics or (lambda t, i: {}))(task_id, index),
                    cost_usd=None if cost is None else cost(task_id, index),
                    latency_s=1.0 if latency is None else latency(task_id, index),
                    suite_hash=suite_hash,
                )
            )
    return FakeRun(info, tasks, results)


def tasks_with(
    n_pass_both: int, n_only_a: int, n_only_b: int, n_neither: int, k: int = 1
) -> tuple[dict, dict]:
    """Reward tables for runs a and b with the given task-outcome table (k trials each)."""
    a: dict[str, list[int | None]] = {}
    b: dict[str, list[int | None]] = {}
    i = 0
    for count, ra, rb in ((n_pass_both, 1, 1), (n_only_a, 1, 0), (n_only_b, 0, 1), (n_neither, 0, 0)):
        for _ in range(count):
            a[f"t{i:03d}"] = [ra] * k
            b[f"t{i:03d}"] = [rb] * k
            i += 1
    return a, b
