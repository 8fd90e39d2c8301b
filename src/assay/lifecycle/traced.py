"""Badcases from imported traces (``assay badcase from-traces``, docs/lifecycle.md).

Each recorded conversation (read as ``assay import traces`` reads it, with its verdicts:
:mod:`assay.traces.verdicts`) is **flagged** when a verdict says it failed:

- an explicit fail: an assay grader that gates the reward and did not pass, a veto, a
  reward of 0 (assay's traces), ``passed: false`` or ``reward: 0`` in JSONL metadata;
- a label that means failure (:data:`FAIL_LABELS`, plus ``fail_labels``) on an
  evaluator span, an annotation or the metadata's ``verdict``;
- without a telling label, a score in [0, 1] below 0.5;
- an error status on a span other than a tool span, or ``error`` in the metadata.

With ``everything`` every conversation is taken. Flagged conversations are clustered
by the rule of ``badcase from-run`` (:mod:`.clustering`): the failing verdicts are the
failing graders (``name:category``; the category is assay's, else the label), their
explanations the reasons; a conversation of assay's whose reward is 0 with no failing
grader has its termination. A conversation with no failing verdict (taken by
``everything``) is a badcase of its own, and so is each one with ``cluster=False``.
Evidence (the first conversation's messages, its verdicts, the reasons across the
cluster, its metadata) is redacted in one session per badcase.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ..core.hashing import stable_hash
from ..core.results import GradeResult, TrialResult
from ..redact import Redactor
from ..traces.importer import conversation_task_ids
from ..traces.readers import Conversation
from ..traces.verdicts import Verdict
from .badcase import Badcase, Source, TraceRef, TrialRef
from .clustering import DEFAULT_THRESHOLD, cluster_failures, normalize_reason, reason_tokens
from .propose import cut_messages, layer_of

FAIL_LABELS = frozenset(
    {
        "fail",
        "failed",
        "failure",
        "false",
        "incorrect",
        "wrong",
        "bad",
        "no",
        "negative",
        "error",
        "unhelpful",
        "unsafe",
        "toxic",
        "hallucinated",
        "thumbs_down",
        "thumbs-down",
    }
)
PASS_LABELS = frozenset(
    {
        "pass",
        "passed",
        "true",
        "correct",
        "right",
        "good",
        "yes",
        "positive",
        "helpful",
        "safe",
        "factual",
        "ok",
        "success",
        "thumbs_up",
        "thumbs-up",
    }
)
#: Source fields of assay's traces shown as the conversation's metadata in the evidence.
_META_SKIP = ("suite_hash",)


def verdict_failed(v: Verdict, fail_labels: frozenset[str] = frozenset()) -> bool | None:
    """Whether ``v`` says the conversation failed (None: it does not say)."""
    if v.source == "status" or v.veto:
        return True
    if v.passed is not None:
        return not v.passed and v.gating
    label = (v.label or "").strip().lower()
    if label in FAIL_LABELS or label in fail_labels:
        return True
    if label in PASS_LABELS:
        return False
    if v.score is not None and 0 <= v.score <= 1:
        return v.score < 0.5
    return None


def _category(v: Verdict) -> str:
    return v.category or ("veto" if v.veto else (v.label or "").strip().lower() or "failed")


@dataclass
class Flagged:
    """A conversation taken for a badcase."""

    conv: Conversation
    file: str
    task_id: str
    trial_index: int
    failing: list[Verdict]
    """Its failing verdicts other than an assay reward."""
    reward_failed: bool

    @property
    def recorded_by_assay(self) -> bool:
        return bool(self.conv.source.get("run_id") and self.conv.source.get("task_id"))

    @property
    def ref(self) -> TraceRef:
        s = self.conv.source
        return TraceRef(
            trace_id=str(s.get("trace_id") or self.conv.id or "") or None,
            file=self.file,
            task_id=self.task_id,
            run_id=s.get("run_id"),
            trial_index=self.trial_index if self.recorded_by_assay else None,
        )

    @property
    def label(self) -> str:
        ref = self.ref
        return ref.trace_id or f"{ref.file}:{ref.task_id}"

    def as_result(self) -> TrialResult:
        """The conversation as a failed trial, for the clustering rule."""
        s = self.conv.source
        reward = next((v for v in self.conv.verdicts if v.source == "reward"), None)
        return TrialResult(
            run_id=str(s.get("run_id") or self.file),
            task_id=self.task_id,
            trial_index=self.trial_index,
            seed=0,
            config_hash="",
            reward=0,
            termination=cast(Any, str(s.get("termination") or "user_stop")),
            grades=[
                GradeResult(
                    grader=v.name,
                    kind=v.source,
                    passed=False,
                    score=v.score,
                    reason=v.explanation or v.label or "",
                    category=_category(v),
                    veto=v.veto,
                )
                for v in self.failing
            ],
            error_category=reward.category if reward is not None else None,
        )


def flag(
    conversations: Sequence[tuple[str, Conversation]],
    *,
    everything: bool = False,
    fail_labels: Iterable[str] = (),
) -> list[Flagged]:
    """The conversations (with the file each came from) that make badcases."""
    labels = frozenset(label.strip().lower() for label in fail_labels)
    ids = conversation_task_ids([conv for _, conv in conversations])
    out = []
    for position, ((file, conv), import_id) in enumerate(zip(conversations, ids, strict=True)):
        failing = [v for v in conv.verdicts if v.source != "reward" and verdict_failed(v, labels)]
        reward_failed = any(v.source == "reward" and verdict_failed(v) for v in conv.verdicts)
        if not (failing or reward_failed or everything):
            continue
        s = conv.source
        recorded = bool(s.get("run_id") and s.get("task_id"))
        trial = s.get("trial")
        out.append(
            Flagged(
                conv,
                file,
                str(s["task_id"]) if recorded else import_id,
                int(trial) if recorded and isinstance(trial, int) else position,
                failing,
                reward_failed,
            )
        )
    return out


def _groups(
    flagged: list[Flagged], threshold: float, cluster: bool
) -> list[tuple[list[Flagged], tuple[str, ...], frozenset[str]]]:
    """Clusters of flagged conversations (see the module docstring), largest first, then
    the conversations that stand alone."""
    clusterable = [f for f in flagged if cluster and (f.failing or f.reward_failed)]
    results = [f.as_result() for f in clusterable]
    owner = {id(r): f for r, f in zip(results, clusterable, strict=True)}
    groups = [
        ([owner[id(r)] for r in c.trials], c.signature, c.tokens)
        for c in cluster_failures(results, threshold=threshold)
    ]
    for f in flagged:
        if cluster and (f.failing or f.reward_failed):
            continue
        result = f.as_result()
        signature = tuple(sorted({f"{g.grader}:{g.category}" for g in result.grades}))
        groups.append(([f], signature, reason_tokens(result) if result.grades else frozenset()))
    return groups


def _phenomenon(group: list[Flagged]) -> str:
    first = group[0]
    clauses = [f"{v.name}: {(v.explanation or v.label or 'failed').split('; ')[0]}" for v in first.failing]
    if not clauses:
        reward = next((v for v in first.conv.verdicts if v.source == "reward"), None)
        if first.reward_failed and reward is not None:
            clauses = [f"reward 0, ended with {first.conv.source.get('termination')}: {reward.category}"]
        else:
            opening = first.conv.user_turns[0] if first.conv.user_turns else "(no user message)"
            clauses = [f"taken with --all, no failing verdict: {' '.join(opening.split())[:120]}"]
    line = "; ".join(clauses)
    line = line if len(line) <= 200 else line[:197] + "..."
    unit = "conversation" if len(group) == 1 else "conversations"
    return f"{line} ({len(group)} {unit}, {len({f.task_id for f in group})} tasks)"


def _evidence(group: list[Flagged], redactor: Redactor) -> dict[str, Any]:
    first = group[0]
    reasons = Counter(
        f"{v.name}: {normalize_reason(v.explanation or v.label or '')}" for f in group for v in f.failing
    )
    raw = {
        "trace": first.ref.model_dump(mode="json", exclude_none=True),
        "grader_reasons": [
            {"grader": v.name, "category": _category(v), "reason": v.explanation or v.label or ""}
            for v in first.failing
        ],
        "verdicts": [v.as_dict() for v in first.conv.verdicts],
        "reasons_in_cluster": [{"reason": text, "trials": n} for text, n in reasons.most_common(10)],
        "state_diff": [],
        "transcript": cut_messages(first.conv.messages),
        "metadata": {k: v for k, v in first.conv.source.items() if k not in _META_SKIP},
    }
    done = redactor.redact(raw)
    return {**done.value, "redaction": done.summary()}


def _suite_and_config(group: list[Flagged]) -> tuple[dict[str, Any], dict[str, Any]]:
    s = group[0].conv.source
    suite: dict[str, Any] = {}
    if s.get("suite"):
        suite = {"name": s["suite"], "source": s["suite"], "hash": s.get("suite_hash")}
        if str(s.get("run_seed", "")).isdigit():
            suite["seed"] = int(s["run_seed"])
    config = {"agent": s["agent"]} if s.get("agent") else {}
    return {k: v for k, v in suite.items() if v is not None}, config


def badcases_from_traces(
    conversations: Sequence[tuple[str, Conversation]],
    *,
    at: str,
    threshold: float = DEFAULT_THRESHOLD,
    cluster: bool = True,
    everything: bool = False,
    fail_labels: Iterable[str] = (),
    redactor: Redactor | None = None,
) -> tuple[list[Badcase], int]:
    """One badcase per cluster of flagged conversations; also how many were flagged."""
    flagged = flag(conversations, everything=everything, fail_labels=fail_labels)
    redactor = redactor or Redactor()
    cases = []
    for group, signature, tokens in _groups(flagged, threshold, cluster):
        refs = [f.ref for f in group]
        runs = {f.conv.source.get("run_id") for f in group}
        trials = [
            TrialRef(run_id=str(f.conv.source["run_id"]), task_id=f.task_id, trial_index=f.trial_index)
            for f in group
            if f.recorded_by_assay
        ]
        suite, config = _suite_and_config(group)
        clustered = cluster and (group[0].failing or group[0].reward_failed)
        rule = (
            f"same failing verdicts, reason tokens Jaccard >= {threshold:g} (single linkage)"
            if clustered
            else "one badcase per conversation"
        )
        cases.append(
            Badcase(
                badcase_id="bc-"
                + stable_hash({"traces": sorted(f.label for f in group), "sig": signature})[:10],
                created_at=at,
                updated_at=at,
                source=Source(
                    kind="trace",
                    run_id=next(iter(runs)) if len(runs) == 1 else None,
                    trials=trials,
                    trace=group[0].label,
                    traces=refs,
                ),
                suite=suite,
                config=config,
                task_ids=sorted({f.task_id for f in group}),
                signature={"graders": list(signature), "tokens": sorted(tokens), "rule": rule},
                evidence=_evidence(group, redactor),
                phenomenon=redactor.redact(_phenomenon(group)).value,
                layer=layer_of(signature) if signature else "unknown",
                severity="critical" if any(v.veto for f in group for v in f.failing) else "medium",
            )
        )
    return cases, len(flagged)
