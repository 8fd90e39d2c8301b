"""What ``assay_run`` returns: a stored run with figures fit for ``assert``.

Every figure is read from the run's :class:`~assay.metrics.RunSummary` (the same numbers
``assay show`` prints and gates check); nothing is computed a second way. Rates are
floats that carry their 95% interval and say what they are in an assertion message::

    assert run.pass_hat_k(4) >= 0.9
    # AssertionError: assert pass^4 0.833 [0.552, 0.953] over 12 tasks >= 0.9
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ..errors import AssayError
from ..gate import GatePolicy, Verdict, evaluate, load_policy
from ..metrics.summary_model import GroupStats, RunSummary
from ..runner.api import Run, run, run_async
from . import suite_matches


class Rate(float):
    """A rate (a float) with its 95% interval and what it measures."""

    low: float | None
    high: float | None
    label: str
    n: int
    unit: str

    def __new__(
        cls, value: float | None, low: float | None, high: float | None, label: str, n: int, unit: str
    ) -> Rate:
        obj = super().__new__(cls, math.nan if value is None else value)
        obj.low, obj.high, obj.label, obj.n, obj.unit = low, high, label, n, unit
        return obj

    @property
    def ci(self) -> tuple[float | None, float | None]:
        return (self.low, self.high)

    def __repr__(self) -> str:
        if math.isnan(self):
            return f"{self.label} undefined (no counted {self.unit})"
        interval = "" if self.low is None or self.high is None else f" [{self.low:.3f}, {self.high:.3f}]"
        return f"{self.label} {float(self):.3f}{interval} over {self.n} {self.unit}"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        return (Rate, (float(self), self.low, self.high, self.label, self.n, self.unit))


class Group:
    """The figures of one group of a run's tasks: the whole run, a stratum, split or tag."""

    def __init__(self, run: EvalRun, stats: GroupStats, name: str):
        self._run, self.stats, self.name = run, stats, name

    def _prefix(self, label: str) -> str:
        return label if self.name == "overall" else f"{self.name} {label}"

    @property
    def success_rate(self) -> Rate:
        """Share of counted trials that succeeded, with its interval (clustered by task)."""
        s = self.stats
        low, high = s.success_rate_ci
        return Rate(s.success_rate, low, high, self._prefix("success rate"), s.trials - s.excluded, "trials")

    def pass_hat_k(self, k: int) -> Rate:
        """pass^k: the chance that k trials of a task all succeed, averaged over tasks."""
        return self._curve("pass_hat_k", "pass^", k)

    def pass_at_k(self, k: int) -> Rate:
        """pass@k: the chance that at least one of k trials of a task succeeds."""
        return self._curve("pass_at_k", "pass@", k)

    def _curve(self, field: str, symbol: str, k: int) -> Rate:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise AssayError(f"{symbol}k needs a whole number k >= 1, not {k!r}")
        values: dict[str, float | None] = getattr(self.stats, field)
        value = values.get(str(k))
        if value is None:
            have = self._run.summary().trials_k()
            raise AssayError(
                f"run {self._run.run_id}: {symbol}{k} needs tasks with {k} counted trials, and "
                f"{self.name} has none (the run has {have} trial(s) per task); run it with trials={k} or more"
            )
        low, high = getattr(self.stats, f"{field}_ci").get(str(k), (None, None))
        tasks = sum(1 for t in self._run.summary().tasks if self._holds(t) and t.trials - t.excluded >= k)
        return Rate(value, low, high, self._prefix(f"{symbol}{k}"), tasks, "tasks")

    def _holds(self, task: Any) -> bool:
        kind, _, value = self.name.partition(" ")
        if kind == "stratum":
            return bool(task.stratum == value)
        if kind == "split":
            return bool(task.split == value)
        if kind == "tag":
            return value in task.tags
        return True


class EvalRun(Group):
    """A finished, stored run (``.run`` is the :class:`assay.Run`), with the run-wide
    figures of :class:`Group` and :meth:`group` for a stratum, split or tag."""

    def __init__(
        self, run: Run, look_in: list[Path] | None = None, on_gate: Callable[[str], None] | None = None
    ):
        self.run = run
        self._look_in = look_in or []
        self._on_gate = on_gate
        super().__init__(self, run.summary().overall, "overall")

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def store(self) -> str:
        """Where the run is stored: the SQLite file's absolute path, else the store's URL."""
        url = str(self.run.store.url)
        if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
            return str(Path(url.removeprefix("sqlite:///")).resolve())
        return url

    def summary(self) -> RunSummary:
        return self.run.summary()

    @property
    def excluded(self) -> int:
        """Trials left out of every rate (harness, environment, grader or user errors)."""
        return self.summary().excluded.trials

    def group(self, *, stratum: str | None = None, split: str | None = None, tag: str | None = None) -> Group:
        """The figures of one stratum, split or tag (exactly one)."""
        given = [(k, v) for k, v in (("stratum", stratum), ("split", split), ("tag", tag)) if v is not None]
        if len(given) != 1:
            raise AssayError("group() takes exactly one of stratum=, split= or tag=")
        kind, value = given[0]
        groups: dict[str, GroupStats] = getattr(self.summary(), f"by_{kind}")
        if value not in groups:
            known = ", ".join(sorted(groups)) or "none"
            raise AssayError(f"run {self.run_id} has no {kind} {value!r} (it has: {known})")
        return Group(self, groups[value], f"{kind} {value}")

    def gate(
        self, policy: str | Path | GatePolicy, baseline: str | Run | EvalRun | None = None
    ) -> GateOutcome:
        """The run checked against a gate policy (``gate.yaml``); true when no check
        failed. A relative path is looked up next to the test file, then in the rootdir,
        then in the working directory."""
        rules = policy if isinstance(policy, GatePolicy) else load_policy(self._find(Path(policy)))
        base = baseline.run if isinstance(baseline, EvalRun) else baseline
        if isinstance(base, str):
            base = Run.load(base, self.run.store)
        outcome = GateOutcome(evaluate(self.run, rules, base))
        if self._on_gate is not None:
            self._on_gate(outcome.explain())
        return outcome

    def _find(self, path: Path) -> Path:
        if path.is_absolute():
            return path
        for folder in self._look_in:
            if (folder / path).is_file():
                return folder / path
        return path

    def describe(self) -> str:
        """A few lines on the run: what ran, the headline figures, where it is stored."""
        s, info = self.summary(), self.run.info
        k = s.trials_k()
        lines = [
            f"run {self.run_id} in {self.store}",
            f"suite {info.suite_name} v{info.suite_version} · agent {info.config.agent} · "
            f"{s.overall.tasks} task(s) x {k} trial(s)",
            f"{self.success_rate!r}",
        ]
        if s.overall.pass_hat_k.get(str(k)) is not None:
            lines.append(f"{self.pass_hat_k(k)!r} · {self.pass_at_k(k)!r}")
        if s.excluded.trials:
            lines.append(f"excluded {s.excluded.trials} trial(s): {s.excluded.by_termination}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<EvalRun {self.run_id}: {self.success_rate!r}>"


class GateOutcome:
    """A gate's verdict on a run; true when no check failed, and says which did not."""

    def __init__(self, verdict: Verdict):
        self.verdict = verdict

    def __bool__(self) -> bool:
        return self.verdict.passed

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    @property
    def failures(self) -> list[str]:
        return [f"{c.name}: {c.reason}" for c in self.verdict.failures]

    def explain(self) -> str:
        v = self.verdict
        counts = v.counts()
        head = (
            f"gate {v.policy_name!r} on run {v.run_id}: {'PASSED' if v.passed else 'FAILED'} "
            f"({counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped)"
        )
        lines = [head]
        for c in v.checks:
            where = f"  ({c.where})" if c.where else ""
            lines.append(f"  {c.status.upper():4}  {c.name}: {c.reason}{where}")
        return "\n".join([*lines, *(f"  note: {n}" for n in v.notes)])

    def __repr__(self) -> str:
        # pytest shows at most about 240 characters of it in an assertion message (the
        # whole verdict is in the report's "assay gate" section): keep each reason short
        v = self.verdict
        if v.passed:
            return f"<gate {v.policy_name!r} passed on run {v.run_id}>"
        room = max(40, 150 // len(self.failures))
        failed = "; ".join(f if len(f) <= room else f[: room - 1] + "…" for f in self.failures)
        return f"<gate {v.policy_name!r} FAILED {len(self.failures)} of {len(v.checks)} checks: {failed}>"


class EvalRunner:
    """The ``assay_run`` fixture's value: ``assay_run(suite=None, **spec fields)``."""

    def __init__(self, request: pytest.FixtureRequest, store: str | None, selected: list[str]):
        self.request = request
        self.store = store
        self.selected = selected
        self.runs: list[EvalRun] = []

    def _args(self, suite: str | Path | None, fields: dict[str, Any]) -> tuple[str | Path, dict[str, Any]]:
        marker = self.request.node.get_closest_marker("assay")
        defaults: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
        marked = defaults.pop("suite", marker.args[0] if marker is not None and marker.args else None)
        chosen = suite if suite is not None else marked
        if chosen is None:
            raise AssayError(
                f"{self.request.node.nodeid}: assay_run needs a suite: assay_run('retail', ...) "
                "or @pytest.mark.assay(suite='retail')"
            )
        if self.selected and not suite_matches(str(chosen), self.selected):
            pytest.skip(f"suite {chosen} is not selected (--assay-suite {' '.join(self.selected)})")
        merged = {**defaults, **fields}
        if merged.get("store") is None and self.store is not None:
            merged["store"] = self.store
        return chosen, merged

    def _wrap(self, result: Run) -> EvalRun:
        node = self.request.node
        folders = [Path(str(node.path)).parent, Path(str(self.request.config.rootpath))]
        done = EvalRun(result, folders, lambda text: node.add_report_section("call", "assay gate", text))
        self.runs.append(done)
        node.user_properties.append(("assay_run_id", done.run_id))
        node.user_properties.append(("assay_store", done.store))
        node.add_report_section("call", "assay run", done.describe())
        return done

    def __call__(self, suite: str | Path | None = None, **fields: Any) -> EvalRun:
        """Run ``suite`` (see :func:`assay.run`) and return the stored run."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise AssayError("assay_run(...) cannot run inside an event loop: await assay_run.run_async(...)")
        chosen, merged = self._args(suite, fields)
        return self._wrap(run(chosen, **merged))

    async def run_async(self, suite: str | Path | None = None, **fields: Any) -> EvalRun:
        """The same, from an async test."""
        chosen, merged = self._args(suite, fields)
        return self._wrap(await run_async(chosen, **merged))


def summary_lines(runs: list[tuple[str, EvalRun]]) -> list[str]:
    """The terminal report: one block per eval run, then where they are stored."""
    lines: list[str] = []
    stores: list[str] = []
    for nodeid, r in runs:
        s = r.summary()
        k = s.trials_k()
        figures = [repr(r.success_rate)]
        if s.overall.pass_hat_k.get(str(k)) is not None:
            figures.append(repr(r.pass_hat_k(k)))
        if s.excluded.trials:
            figures.append(f"excluded {s.excluded.trials}")
        lines.append(f"{nodeid}: {r.run.info.suite_name} · {r.run.info.config.agent} · run {r.run_id}")
        lines.append("    " + " · ".join(figures))
        if r.store not in stores:
            stores.append(r.store)
    lines.append(f"{len(runs)} run(s) stored in {', '.join(stores)} (assay show RUN_ID, assay gate RUN_ID)")
    return lines
