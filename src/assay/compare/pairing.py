"""Pairing two runs of one suite version: per-trial values, task outcomes, matched units.

A *unit* is what the paired tests treat as one independent observation:

- ``match="task"`` (default): one unit per task both runs have counted trials of. Its
  binary outcome is the task's outcome (see :data:`TaskOutcome`; by default "solved in
  every trial", so the quality figure of a run is its pass^k); its continuous values
  are the means over the task's counted trials. Tasks are the independent draws of a
  suite, so tests over task units are valid however correlated a task's trials are.
- ``match="trial"``: one unit per (task id, trial index) both runs counted. Trials of a
  task share its difficulty, so continuous tests cluster on the task; McNemar on trial
  pairs treats them as independent and is optimistic when k > 1.

Trials whose reward is ``None`` (harness, environment or grader errors) are not the
agent's doing and are left out of every unit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from ..core.results import RunInfo, TaskMeta, TrialResult
from ..errors import AssayError
from ..metrics.frame import TrialFrame
from ..metrics.summary_model import RunSummary

MatchBy = Literal["task", "trial"]
#: How a task's k trials become one pass/fail: ``all`` (every counted trial passed: the
#: task's pass^k, the default: the reliability a customer with one try sees),
#: ``majority`` (more than half passed; a tie fails) or ``any`` (pass@k).
TaskOutcome = Literal["majority", "all", "any"]

#: Per-trial values that mean "quality" in a box profile; not part of "within the box".
QUALITY_VALUES = frozenset({"success", "failure"})
#: Which way is better for the metrics assay knows; others are reported without a side.
DIRECTIONS: dict[str, str] = {
    "success": "higher",
    "success_rate": "higher",
    "quality": "higher",
    "failure": "lower",
    "cost_usd": "lower",
    "latency_s": "lower",
    "input_tokens": "lower",
    "output_tokens": "lower",
    "tool_precision": "higher",
    "tool_recall": "higher",
    "tool_errors": "lower",
    "invalid_calls": "lower",
    "redundant_calls": "lower",
}


def direction_of(metric: str) -> str | None:
    """``"higher"``/``"lower"`` when assay knows which way is better, else ``None``."""
    if metric.startswith("score."):
        return "higher"
    return DIRECTIONS.get(metric)


class RunLike(Protocol):
    """What pairing needs of a run (``assay.runner.api.Run`` has it)."""

    @property
    def info(self) -> RunInfo: ...

    @property
    def tasks(self) -> list[TaskMeta]: ...

    @property
    def results(self) -> list[TrialResult]: ...

    def summary(self) -> RunSummary: ...

    def frame(self) -> TrialFrame: ...

    def task_results(self, task_id: str) -> list[TrialResult]: ...


def trial_values(result: TrialResult) -> dict[str, float]:
    """Every number a counted trial carries: success/failure, cost, latency, tokens,
    process metrics and grader scores (``score.<grader>``)."""
    if result.reward is None:
        return {}
    values: dict[str, float] = {
        "success": float(result.reward),
        "failure": 1.0 - float(result.reward),
        "latency_s": float(result.latency_s),
    }
    if result.cost_usd is not None:
        values["cost_usd"] = float(result.cost_usd)
    if result.input_tokens is not None:
        values["input_tokens"] = float(result.input_tokens)
    if result.output_tokens is not None:
        values["output_tokens"] = float(result.output_tokens)
    for key, value in result.metrics.items():
        values.setdefault(key, float(value))
    for grade in result.grades:
        if grade.score is not None and not grade.skipped:
            values[f"score.{grade.grader}"] = float(grade.score)
    return values


@dataclass
class RunData:
    """One run reduced to what comparisons need: counted trials' values by key."""

    run_id: str
    label: str
    info: RunInfo
    tasks: dict[str, TaskMeta]
    trials: dict[tuple[str, int], dict[str, float]]
    excluded: int
    results: list[TrialResult] = field(repr=False, default_factory=list)

    @classmethod
    def of(cls, run: RunLike) -> RunData:
        trials = {r.key: trial_values(r) for r in run.results if r.reward is not None}
        return cls(
            run_id=run.info.run_id,
            label=run.info.config.agent,
            info=run.info,
            tasks={t.task_id: t for t in run.tasks},
            trials=trials,
            excluded=sum(r.reward is None for r in run.results),
            results=list(run.results),
        )

    def task_trials(self) -> dict[str, list[dict[str, float]]]:
        """Counted trials grouped by task, in trial order."""
        grouped: dict[str, list[dict[str, float]]] = defaultdict(list)
        for (task_id, _), values in sorted(self.trials.items()):
            grouped[task_id].append(values)
        return grouped

    def metric_names(self) -> set[str]:
        return {name for values in self.trials.values() for name in values}


def task_passed(rewards: Sequence[float], rule: TaskOutcome = "all") -> bool:
    """A task's binary outcome from its counted trials' rewards (see :data:`TaskOutcome`)."""
    if not rewards:
        raise ValueError("a task outcome needs at least one counted trial")
    share = sum(rewards) / len(rewards)
    if rule == "majority":
        return share > 0.5
    if rule == "all":
        return share == 1.0
    if rule == "any":
        return share > 0.0
    raise ValueError(f"task outcome must be 'majority', 'all' or 'any', not {rule!r}")


@dataclass(frozen=True)
class Unit:
    """One paired observation: baseline (a) and candidate (b) outcome and values."""

    task_id: str
    trial_index: int | None
    a_pass: bool
    b_pass: bool
    a: Mapping[str, float]
    b: Mapping[str, float]
    a_trials: tuple[int, int]
    b_trials: tuple[int, int]


@dataclass
class Pairing:
    """Two runs matched task by task (or trial by trial), ready for paired tests."""

    a: RunData
    b: RunData
    match: MatchBy
    task_outcome: TaskOutcome
    units: list[Unit]
    task_units: list[Unit]
    only_a: list[str]
    only_b: list[str]
    notes: list[str]

    @property
    def tasks(self) -> dict[str, TaskMeta]:
        return {u.task_id: self.a.tasks.get(u.task_id, TaskMeta(u.task_id)) for u in self.task_units}


def _means(trials: Iterable[Mapping[str, float]]) -> dict[str, float]:
    sums: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for values in trials:
        for name, value in values.items():
            sums[name] += value
            counts[name] += 1
    return {name: sums[name] / counts[name] for name in sums}


def _counts(trials: Sequence[Mapping[str, float]]) -> tuple[int, int]:
    return int(sum(t["success"] for t in trials)), len(trials)


def _common_tasks(
    a: RunData, b: RunData, common_only: bool
) -> tuple[list[str], list[str], list[str], list[str]]:
    notes: list[str] = []
    same_suite = a.info.suite_hash == b.info.suite_hash
    if not same_suite and not common_only:
        raise AssayError(
            f"runs {a.run_id} (suite {a.info.suite_name} v{a.info.suite_version}, hash "
            f"{a.info.suite_hash}) and {b.run_id} (suite {b.info.suite_name} v{b.info.suite_version}, "
            f"hash {b.info.suite_hash}) were made on different suite versions; pass --common-only "
            "(common_only=True) to compare them on the tasks they share"
        )
    ids_a, ids_b = set(a.tasks), set(b.tasks)
    common = ids_a & ids_b
    if not same_suite:
        changed = {t for t in common if a.tasks[t].task_hash != b.tasks[t].task_hash}
        common -= changed
        notes.append(
            f"different suite versions ({a.run_id}: {a.info.suite_name} v{a.info.suite_version} hash "
            f"{a.info.suite_hash}; {b.run_id}: {b.info.suite_name} v{b.info.suite_version} hash "
            f"{b.info.suite_hash}): compared only on the {len(common)} task(s) both versions share with the "
            f"same content; left out: {len(changed)} changed, {len(ids_a - ids_b)} only in {a.run_id}, "
            f"{len(ids_b - ids_a)} only in {b.run_id}"
        )
        if changed:
            notes.append(
                f"{len(changed)} task(s) with the same id differ in content between the suite versions "
                "and were left out"
            )
    elif a.info.seed != b.info.seed:
        notes.append(
            f"the runs used different seeds ({a.info.seed} and {b.info.seed}): templated tasks are "
            "paired by id but are different instances"
        )
    pa, pb = a.info.config.prompt_version, b.info.config.prompt_version
    if pa != pb:
        notes.append(
            f"the runs differ in prompt ({pa or 'none'} vs {pb or 'none'}): "
            f"assay prompt diff {a.run_id} {b.run_id} shows what changed"
        )
    if not common:
        raise AssayError(f"runs {a.run_id} and {b.run_id} share no task, so there is nothing to pair")
    only_a, only_b = sorted(ids_a - ids_b), sorted(ids_b - ids_a)
    if (only_a or only_b) and same_suite:
        notes.append(
            f"compared on {len(common)} common task(s); {len(only_a)} only in {a.run_id}, "
            f"{len(only_b)} only in {b.run_id}"
        )
    return sorted(common), only_a, only_b, notes


def aligned_k(a: RunData, b: RunData) -> tuple[RunData, RunData, str | None]:
    """Runs of different trials per task compared on the same k: the smaller one, using
    each task's first k trials of both (pass^4 is never put against pass^8)."""
    ka, kb = a.info.trials_per_task, b.info.trials_per_task
    if ka == kb:
        return a, b, None
    k = min(ka, kb)

    def first(run: RunData) -> RunData:
        return replace(run, trials={key: v for key, v in run.trials.items() if key[1] < k})

    note = (
        f"{a.run_id} has {ka} trials per task and {b.run_id} has {kb}: both are compared on "
        f"the first {k} trials of each task"
    )
    return first(a), first(b), note


def pair_runs(
    a: RunLike | RunData,
    b: RunLike | RunData,
    *,
    match: MatchBy = "task",
    task_outcome: TaskOutcome = "all",
    common_only: bool = False,
) -> Pairing:
    """Match run ``b`` (candidate) against run ``a`` (baseline).

    Runs of different suite versions (content hashes) are refused with an
    :class:`~assay.errors.AssayError` unless ``common_only``; then only tasks with the
    same id *and* content are compared.
    """
    if match not in ("task", "trial"):
        raise AssayError(f"match must be 'task' or 'trial', not {match!r}")
    if task_outcome not in ("majority", "all", "any"):
        raise AssayError(f"task outcome must be 'majority', 'all' or 'any', not {task_outcome!r}")
    ra = a if isinstance(a, RunData) else RunData.of(a)
    rb = b if isinstance(b, RunData) else RunData.of(b)
    ra, rb, k_note = aligned_k(ra, rb)
    common, only_a, only_b, notes = _common_tasks(ra, rb, common_only)
    notes = [*([k_note] if k_note else []), *notes]
    by_a, by_b = ra.task_trials(), rb.task_trials()
    task_units: list[Unit] = []
    for task_id in common:
        ta, tb = by_a.get(task_id, []), by_b.get(task_id, [])
        if not ta or not tb:
            continue
        task_units.append(
            Unit(
                task_id,
                None,
                task_passed([t["success"] for t in ta], task_outcome),
                task_passed([t["success"] for t in tb], task_outcome),
                _means(ta),
                _means(tb),
                _counts(ta),
                _counts(tb),
            )
        )
    dropped = len(common) - len(task_units)
    if dropped:
        notes.append(f"{dropped} common task(s) had no counted trial in one of the runs and were left out")
    if not task_units:
        raise AssayError(f"runs {ra.run_id} and {rb.run_id} have no task with counted trials in both")
    units = task_units
    if match == "trial":
        keep = {u.task_id for u in task_units}
        units = []
        for key in sorted(set(ra.trials) & set(rb.trials)):
            if key[0] not in keep:
                continue
            va, vb = ra.trials[key], rb.trials[key]
            sa, sb = int(va["success"]), int(vb["success"])
            units.append(Unit(key[0], key[1], bool(sa), bool(sb), va, vb, (sa, 1), (sb, 1)))
    return Pairing(ra, rb, match, task_outcome, units, task_units, only_a, only_b, notes)
