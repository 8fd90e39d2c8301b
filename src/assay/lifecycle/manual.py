"""A badcase reported by hand (``assay badcase add``, docs/lifecycle.md).

Somebody saw a failure — in production, a demo, a trial they read — and records it:
what happened (one line), the layer, the severity, optionally the root cause, an owner,
evidence (text or JSON) and the trial that shows it. With a trial, the evidence also
holds what ``from-run`` would record for it (transcript excerpt, grader reasons, state
diff, versions), and the badcase can be promoted into the suite like any other. All of
it (the report, the trial's evidence, the phenomenon and root cause) is redacted in one
session, so a pseudonym means the same value everywhere in the record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.hashing import stable_hash
from ..core.results import RunInfo, TrialResult
from ..core.transcript import Transcript
from ..redact import Redactor
from .badcase import LAYERS, SEVERITIES, Badcase, BadcaseError, Source, TrialRef
from .clustering import Cluster, reason_tokens, signature
from .propose import raw_evidence


def manual_badcase(
    *,
    phenomenon: str,
    layer: str,
    severity: str,
    at: str,
    root_cause: str = "",
    owner: str | None = None,
    report: Any = None,
    trial: tuple[RunInfo, TrialResult, Callable[[str, int], Transcript | None]] | None = None,
    redactor: Redactor | None = None,
) -> Badcase:
    """The badcase record of a manual report (``report``: the evidence given, text or
    JSON-like data; ``trial``: the run, the trial and how to load its transcript)."""
    text = " ".join(phenomenon.split())
    if not text:
        raise BadcaseError("--phenomenon: say what happened, in one line")
    if "\n" in phenomenon.strip():
        raise BadcaseError("--phenomenon: one line, please (put details in --evidence)")
    if layer not in LAYERS:
        raise BadcaseError(f"--layer {layer!r}: choose from {', '.join(LAYERS)}")
    if severity not in SEVERITIES:
        raise BadcaseError(f"--severity {severity!r}: choose from {', '.join(SEVERITIES)}")
    raw: dict[str, Any] = {}
    if report is not None:
        raw["report"] = report
    source = Source(kind="manual")
    suite: dict[str, Any] = {}
    config: dict[str, Any] = {}
    task_ids: list[str] = []
    sig: dict[str, Any] = {}
    if trial is not None:
        info, result, transcripts = trial
        cluster = Cluster(signature(result), [result], reason_tokens(result))
        raw.update(raw_evidence(cluster, info, transcripts))
        source = Source(
            kind="manual",
            run_id=info.run_id,
            trials=[TrialRef(run_id=info.run_id, task_id=result.task_id, trial_index=result.trial_index)],
        )
        suite = {
            "name": info.suite_name,
            "version": info.suite_version,
            "hash": info.suite_hash,
            "source": info.suite_source,
            "seed": info.seed,
        }
        config = {
            "agent": info.config.agent,
            "config_hash": info.config_hash,
            "prompt_version": result.prompt_version,
            "model": info.config.model,
        }
        task_ids = [result.task_id]
        sig = {"graders": list(cluster.signature), "tokens": sorted(cluster.tokens), "rule": "manual"}
    session = (redactor or Redactor()).session()
    evidence = session.redact(raw)
    said = session.redact({"phenomenon": text, "root_cause": root_cause})
    case_id = "bc-" + stable_hash({"manual": text, "at": at, "trials": source.model_dump(mode="json")})[:10]
    return Badcase(
        badcase_id=case_id,
        created_at=at,
        updated_at=at,
        source=source,
        suite=suite,
        config=config,
        task_ids=task_ids,
        signature=sig,
        evidence={**evidence, "redaction": session.result(None).summary()},
        phenomenon=said["phenomenon"],
        layer=layer,
        root_cause=said["root_cause"],
        severity=severity,
        owner=owner,
    )
