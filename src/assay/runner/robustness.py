"""Robustness reports: the same suite, configuration and seed with and without
injected tool faults (:mod:`assay.envs.faults`).

:func:`robustness_report` is a pure function of the two runs' trial results and the
faulted run's transcripts. With the same seed both runs have the same tasks and trial
seeds, so trials pair up by (task, trial index) and the differences are paired:

- success-rate drop (baseline - faulted) with a task-clustered paired bootstrap interval;
- pass^k drop for each k (per-task pass^k estimates, paired over tasks);
- injected faults per tool and kind (read from the ``fault`` attribute of tool spans);
- error recovery: of the faulted trials whose fault-free twin passed, how many the agent
  still passed (by retrying the failed tool, or another way), how many it stopped
  safely (no state change after the first fault, conversation ended normally, e.g. a
  hand-over to a human), and how many it failed;
- retries: how often a faulted call was followed by another call of the same tool, and
  how often that call went through.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.results import TrialResult
from ..core.transcript import Span, Transcript
from ..envs.faults import ERROR_KINDS, FAULT_ATTRIBUTE
from ..stats.bootstrap import bootstrap_ci
from ..stats.clustered import clustered_rate_interval
from ..stats.passk import pass_hat_k

Key = tuple[str, int]
SAFE_ENDINGS = frozenset({"user_stop", "transfer"})
RECOVERY_CLASSES = ("recovered_by_retry", "recovered_other_way", "stopped_safely", "failed")


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One agent tool call of a trial, as the transcript's tool span records it."""

    position: int
    name: str
    error: str | None
    fault: str | None

    @property
    def ran(self) -> bool:
        """The real tool ran to its end (its writes, if any, were applied)."""
        return self.error is None and self.fault not in ERROR_KINDS

    @property
    def clean(self) -> bool:
        """The call went through and its answer was not tampered with."""
        return self.error is None and self.fault is None


def agent_tool_calls(transcript: Transcript) -> list[ToolCallRecord]:
    """The agent's tool calls in order, with their error and injected fault."""
    spans: list[Span] = [s for s in transcript.spans if s.kind == "tool"]
    calls: list[ToolCallRecord] = []
    for span in spans:
        attrs = span.attributes
        if attrs.get("caller", "agent") != "agent":
            continue
        calls.append(ToolCallRecord(len(calls), span.name, attrs.get("error"), attrs.get(FAULT_ATTRIBUTE)))
    return calls


def classify_recovery(
    result: TrialResult, calls: Sequence[ToolCallRecord], write_tools: Collection[str]
) -> str:
    """How a trial that received faults ended: one of :data:`RECOVERY_CLASSES`."""
    faults = [c for c in calls if c.fault is not None]
    if result.reward == 1:
        retried = any((retry := _retry_of(call, calls)) is not None and retry.clean for call in faults)
        return "recovered_by_retry" if retried else "recovered_other_way"
    first = faults[0].position if faults else len(calls)
    wrote_after = any(c.ran and c.name in write_tools for c in calls[first + 1 :])
    if result.termination in SAFE_ENDINGS and not wrote_after:
        return "stopped_safely"
    return "failed"


def _retry_of(call: ToolCallRecord, calls: Sequence[ToolCallRecord]) -> ToolCallRecord | None:
    return next((c for c in calls[call.position + 1 :] if c.name == call.name), None)


def _interval(values: Sequence[float], clusters: Sequence[str]) -> list[float] | None:
    if not values:
        return None
    r = clustered_rate_interval(values, clusters)
    return [round(r.low, 4), round(r.high, 4)]


def _paired_drop(
    base: Sequence[float], faulted: Sequence[float], clusters: Sequence[str] | None
) -> dict[str, Any]:
    """Mean of base - faulted with a paired (task-clustered) bootstrap interval."""
    if not base:
        return {"estimate": None, "ci": None, "pairs": 0}
    diffs = [b - f for b, f in zip(base, faulted, strict=True)]
    ci = bootstrap_ci(diffs, clusters=clusters, seed=0) if len(diffs) > 1 else None
    return {
        "estimate": round(sum(diffs) / len(diffs), 4),
        "ci": [round(ci.low, 4), round(ci.high, 4)] if ci else None,
        "pairs": len(diffs),
    }


def _rate(values: Sequence[int]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _counts(results: Sequence[TrialResult]) -> dict[str, tuple[int, int]]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in results:
        if r.reward is not None:
            counts[r.task_id][0] += 1
            counts[r.task_id][1] += r.reward
    return {t: (n, c) for t, (n, c) in counts.items()}


def _side(results: Sequence[TrialResult], k_max: int) -> dict[str, Any]:
    valid = [r for r in results if r.reward is not None]
    counts = _counts(results)
    curve = {}
    for k in range(1, k_max + 1):
        values = [pass_hat_k(n, c, k) for n, c in counts.values() if n >= k]
        curve[str(k)] = round(sum(values) / len(values), 4) if values else None
    return {
        "trials": len(results),
        "excluded": len(results) - len(valid),
        "success_rate": _rate([r.reward for r in valid if r.reward is not None]),
        "success_rate_ci": _interval([float(r.reward or 0) for r in valid], [r.task_id for r in valid]),
        "pass_hat_k": curve,
        "terminations": dict(sorted(Counter(r.termination for r in results).items())),
    }


def robustness_report(
    baseline: Sequence[TrialResult],
    faulted: Sequence[TrialResult],
    transcripts: Mapping[Key, Transcript],
    *,
    k_max: int | None = None,
    write_tools: Collection[str] = (),
) -> dict[str, Any]:
    """Compare a run without faults (``baseline``) and the same run with faults.

    ``transcripts`` are the faulted run's, by (task id, trial index); ``write_tools``
    names the tools that change state (to tell a safe stop from a harmful one).
    """
    base_by_key = {r.key: r for r in baseline}
    pairs = [(base_by_key[r.key], r) for r in faulted if r.key in base_by_key]
    valid = [(b, f) for b, f in pairs if b.reward is not None and f.reward is not None]
    if any(b.seed != f.seed for b, f in pairs):
        raise ValueError("the runs do not pair up: trial seeds differ (different run seeds?)")
    k = k_max or max((r.trial_index + 1 for r in faulted), default=1)

    success = _paired_drop(
        [float(b.reward or 0) for b, _ in valid],
        [float(f.reward or 0) for _, f in valid],
        [b.task_id for b, _ in valid],
    )
    tally = _Tally()
    for b, f in pairs:
        tally.add(b, f, transcripts.get(f.key), write_tools)
    return {
        "schema": "assay.robustness/1",
        "k": k,
        "baseline": _side(baseline, k),
        "faulted": _side(faulted, k),
        "pairs": len(valid),
        "success_rate_drop": success,
        "pass_hat_k_drop": _pass_hat_k_drops(baseline, faulted, k),
        "faults": {
            "injected": tally.retries["faults"],
            "trials_with_faults": sum(1 for _, f in pairs if _has_fault(transcripts.get(f.key))),
            "by_tool": {tool: dict(sorted(kinds.items())) for tool, kinds in sorted(tally.by_tool.items())},
        },
        "recovery": tally.recovery_section(),
        "retries": tally.retry_section(),
    }


def _pass_hat_k_drops(
    baseline: Sequence[TrialResult], faulted: Sequence[TrialResult], k: int
) -> dict[str, dict[str, Any]]:
    """The paired drop of pass^j for j = 1..k, over the tasks with at least j trials on both sides."""
    base_counts, fault_counts = _counts(baseline), _counts(faulted)
    drops = {}
    for j in range(1, k + 1):
        tasks = [
            t for t in base_counts if t in fault_counts and min(base_counts[t][0], fault_counts[t][0]) >= j
        ]
        drops[str(j)] = _paired_drop(
            [pass_hat_k(*base_counts[t], j) for t in tasks],
            [pass_hat_k(*fault_counts[t], j) for t in tasks],
            None,
        )
    return drops


@dataclass
class _Tally:
    """Faults, retries and recoveries counted over the faulted run's trials."""

    by_tool: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    by_kind: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    retries: Counter[str] = field(default_factory=Counter)
    recovery: Counter[str] = field(default_factory=Counter)
    recovery_keys: list[tuple[str, int]] = field(default_factory=list)
    baseline_failed: int = 0

    def add(
        self, b: TrialResult, f: TrialResult, transcript: Transcript | None, write_tools: Collection[str]
    ) -> None:
        calls = agent_tool_calls(transcript) if transcript is not None else []
        faults = [c for c in calls if c.fault is not None]
        if not faults:
            return
        for call in faults:
            self.by_tool[call.name][call.fault or ""] += 1
            retry = _retry_of(call, calls)
            self.retries["faults"] += 1
            self.retries["retried"] += retry is not None
            self.retries["retry_succeeded"] += retry is not None and retry.clean
        if f.reward is None or b.reward is None:
            self.recovery["excluded"] += 1
            return
        if b.reward != 1:
            self.baseline_failed += 1
            return
        outcome = classify_recovery(f, calls, write_tools)
        self.recovery[outcome] += 1
        self.recovery_keys.append((f.task_id, int(outcome.startswith("recovered"))))
        for kind in {c.fault for c in faults}:
            self.by_kind[kind or ""]["trials"] += 1
            self.by_kind[kind or ""]["recovered"] += outcome.startswith("recovered")

    def retry_section(self) -> dict[str, Any]:
        faults = self.retries["faults"]
        return {
            **{name: self.retries[name] for name in ("faults", "retried", "retry_succeeded")},
            "retry_rate": round(self.retries["retried"] / faults, 4) if faults else None,
        }

    def recovery_section(self) -> dict[str, Any]:
        n = len(self.recovery_keys)
        recovered = self.recovery["recovered_by_retry"] + self.recovery["recovered_other_way"]
        return {
            "trials": n,
            **{name: self.recovery[name] for name in RECOVERY_CLASSES},
            "baseline_failed": self.baseline_failed,
            "excluded": self.recovery["excluded"],
            "recovery_rate": _rate([ok for _, ok in self.recovery_keys]),
            "recovery_rate_ci": _interval(
                [float(ok) for _, ok in self.recovery_keys], [t for t, _ in self.recovery_keys]
            ),
            "safe_rate": round((recovered + self.recovery["stopped_safely"]) / n, 4) if n else None,
            "by_kind": {
                kind: {**dict(c), "recovery_rate": round(c["recovered"] / c["trials"], 4)}
                for kind, c in sorted(self.by_kind.items())
            },
        }


def _has_fault(transcript: Transcript | None) -> bool:
    return transcript is not None and any(
        s.kind == "tool" and s.attributes.get(FAULT_ATTRIBUTE) for s in transcript.spans
    )
