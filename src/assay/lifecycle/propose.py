"""Badcases proposed from a run: failed trials clustered (:mod:`.clustering`), one
record per cluster, with redacted evidence from its first trial.

Ids are derived from the run and the cluster's signature and shared reason tokens, so
proposing again from the same run finds the records it already made (and leaves
their triage alone) instead of adding copies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ..core.hashing import stable_hash
from ..core.results import RunInfo, TaskMeta, TrialResult
from ..core.transcript import Transcript
from ..redact import Redactor
from .badcase import Badcase, Source, TrialRef
from .clustering import DEFAULT_THRESHOLD, Cluster, cluster_failures, failing_grades, normalize_reason

#: The layer a failure category points at first (the seeds' phenomenon → layer table).
CATEGORY_LAYERS: dict[str, str] = {
    "forbidden_action": "policy",
    "no_confirmation": "policy",
    "disclosure": "policy",
    "violation_not_intercepted": "policy",
    "unauthorized_operation": "policy",
    "false_refusal": "policy",
    "veto": "policy",
    "missing_action": "planning",
    "wrong_order": "planning",
    "wrong_trajectory": "planning",
    "wrong_end_state": "planning",
    "tool_selection": "tool_use",
    "no_error_recovery": "tool_use",
    "agent_error": "tool_use",
    "missed_trigger": "understanding",
    "false_trigger": "understanding",
    "retrieval": "knowledge",
    "wrong_answer": "knowledge",
    "missing_information": "generation",
    "generation": "generation",
    "no_answer": "generation",
    "invalid_json": "generation",
    "schema_violation": "generation",
    "key_field_wrong": "generation",
    "wrong_fields": "generation",
    "judge_fail": "generation",
    "tests_failed": "generation",
    "broke_tests": "generation",
}
_LAYER_ORDER = ("harness", "policy", "understanding", "planning", "tool_use", "knowledge", "generation")
MAX_MESSAGES = 14
MAX_CHARS = 600

Transcripts = Callable[[str, int], Transcript | None]


def layer_of(signature: Sequence[str]) -> str:
    """The first layer to look at for a signature (``grader:category`` items)."""
    found = set()
    for item in signature:
        head, _, rest = item.partition(":")
        if head == "excluded":
            found.add("harness")
            continue
        category = rest.partition(":")[0] if head != "termination" else rest
        found.add(CATEGORY_LAYERS.get(category, "unknown"))
    return next((layer for layer in _LAYER_ORDER if layer in found), "unknown")


def severity_of(cluster: Cluster, tasks: dict[str, TaskMeta]) -> str:
    """critical: a veto fired; high: a high-risk task failed; medium otherwise."""
    if any(g.veto for r in cluster.trials for g in r.grades):
        return "critical"
    if any(tasks.get(t) is not None and tasks[t].stratum == "high_risk" for t in cluster.task_ids):
        return "high"
    return "medium"


def _first_clauses(result: TrialResult) -> list[str]:
    return [f"{grader}: {reason.split('; ')[0]}" for grader, _, reason in failing_grades(result)]


def phenomenon_of(cluster: Cluster) -> str:
    """One line: what the first trial's failing graders said first, and how often."""
    clauses = _first_clauses(cluster.first) or [
        f"ended with {cluster.first.termination}: {cluster.first.error_category or 'no grader failed'}"
    ]
    line = "; ".join(clauses)
    line = line if len(line) <= 200 else line[:197] + "..."
    return f"{line} ({len(cluster.trials)} trials, {len(cluster.task_ids)} tasks)"


def cut_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """An excerpt of a conversation (messages as ``role``, ``content``, ``tool_calls``,
    ``name``, ``error``): long messages cut, the middle left out of long conversations."""
    shown = (
        list(messages)
        if len(messages) <= MAX_MESSAGES
        else [*messages[:4], None, *messages[-(MAX_MESSAGES - 5) :]]
    )
    out: list[dict[str, Any]] = []
    for m in shown:
        if m is None:
            out.append({"role": "...", "content": f"({len(messages) - MAX_MESSAGES + 1} messages left out)"})
            continue
        item = {k: v for k, v in m.items() if k in ("role", "tool_calls", "name", "error") and v}
        item["role"] = m.get("role", "?")
        item["content"] = str(m.get("content") or "")[:MAX_CHARS]
        out.append(item)
    return out


def _excerpt(transcript: Transcript | None) -> list[dict[str, Any]]:
    """The trial's conversation, cut as :func:`cut_messages` does."""
    if transcript is None:
        return []
    return cut_messages(
        [
            {
                "role": m.role,
                "content": m.content,
                "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in m.tool_calls],
                "name": m.name,
                "error": m.error,
            }
            for m in transcript.messages
        ]
    )


def evidence_of(
    cluster: Cluster, info: RunInfo, transcripts: Transcripts, redactor: Redactor
) -> dict[str, Any]:
    """The cluster's evidence, redacted in one session (pseudonyms agree across parts)."""
    done = redactor.redact(raw_evidence(cluster, info, transcripts))
    return {**done.value, "redaction": done.summary()}


def raw_evidence(cluster: Cluster, info: RunInfo, transcripts: Transcripts) -> dict[str, Any]:
    """The cluster's evidence before redaction (its first trial's, and the reasons of all)."""
    first = cluster.first
    reasons = Counter(
        f"{grader}: {normalize_reason(reason)}"
        for r in cluster.trials
        for grader, _, reason in failing_grades(r)
    )
    return {
        "trial": {"run_id": first.run_id, "task_id": first.task_id, "trial_index": first.trial_index},
        "termination": first.termination,
        "grader_reasons": [
            {"grader": grader, "category": category, "reason": reason}
            for grader, category, reason in failing_grades(first)
        ],
        "reasons_in_cluster": [{"reason": text, "trials": n} for text, n in reasons.most_common(10)],
        "state_diff": (first.outcome.diff[:20] if first.outcome is not None else []),
        "transcript": _excerpt(transcripts(first.task_id, first.trial_index)),
        "error": first.outcome.error if first.outcome is not None else None,
        "versions": {
            "prompt_version": first.prompt_version,
            "model_id": first.model_id,
            "env_version": first.env_version,
            "suite_version": info.suite_version,
            "task_hash": first.task_hash,
            "as_of": first.as_of,
            "git_commit": first.git_commit,
        },
    }


def badcase_id(info: RunInfo, cluster: Cluster) -> str:
    return (
        "bc-"
        + stable_hash({"run": info.run_id, "sig": cluster.signature, "tokens": sorted(cluster.tokens)})[:10]
    )


def propose(
    info: RunInfo,
    tasks: Sequence[TaskMeta],
    results: Sequence[TrialResult],
    transcripts: Transcripts,
    *,
    at: str,
    threshold: float = DEFAULT_THRESHOLD,
    include_excluded: bool = False,
    redactor: Redactor | None = None,
) -> tuple[list[Badcase], list[Cluster]]:
    """One badcase per cluster of the run's failed trials (see :mod:`.clustering`)."""
    clusters = cluster_failures(results, threshold=threshold, include_excluded=include_excluded)
    by_id = {t.task_id: t for t in tasks}
    redactor = redactor or Redactor()
    cases = []
    for cluster in clusters:
        first = cluster.first
        cases.append(
            Badcase(
                badcase_id=badcase_id(info, cluster),
                created_at=at,
                updated_at=at,
                source=Source(
                    kind="trial",
                    run_id=info.run_id,
                    trials=[
                        TrialRef(run_id=r.run_id, task_id=r.task_id, trial_index=r.trial_index)
                        for r in cluster.trials
                    ],
                ),
                suite={
                    "name": info.suite_name,
                    "version": info.suite_version,
                    "hash": info.suite_hash,
                    "source": info.suite_source,
                    "seed": info.seed,
                },
                config={
                    "agent": info.config.agent,
                    "config_hash": info.config_hash,
                    "prompt_version": first.prompt_version,
                    "model": info.config.model,
                },
                task_ids=cluster.task_ids,
                signature={
                    "graders": list(cluster.signature),
                    "tokens": sorted(cluster.tokens),
                    "rule": f"same failing graders, reason tokens Jaccard >= {threshold:g} (single linkage)",
                },
                evidence=evidence_of(cluster, info, transcripts, redactor),
                phenomenon=redactor.redact(phenomenon_of(cluster)).value,
                layer=layer_of(cluster.signature),
                severity=severity_of(cluster, by_id),
            )
        )
    return cases, clusters
