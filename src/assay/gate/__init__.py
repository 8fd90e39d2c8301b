"""CI gates: a ``gate.yaml`` policy evaluated on a run (and a baseline) into a verdict.

>>> policy = load_policy("examples/gate.yaml")            # doctest: +SKIP
>>> verdict = evaluate(Run.load(run_id), policy)            # doctest: +SKIP
>>> verdict.passed, verdict.exit_code                       # doctest: +SKIP

See docs/ci.md.
"""

from __future__ import annotations

from ..compare.pairing import RunLike, pair_runs
from ..errors import AssayError
from .checks import absolute_check, failure_reasons, harness_error_check, high_risk_check
from .guardrails import rollout_checks
from .policy import (
    AbsoluteCheck,
    GatePolicy,
    HighRiskGate,
    PolicyError,
    RelativeCheck,
    load_policy,
    policy_from_yaml,
    summary_path_problem,
)
from .relative import relative_checks
from .verdict import CheckResult, Kind, Verdict


def evaluate(run: RunLike, policy: GatePolicy, baseline: RunLike | None = None) -> Verdict:
    """Every check of ``policy`` on ``run``; relative checks against ``baseline``.

    Without a baseline, relative checks are listed as skipped (or, with
    ``require_baseline: true``, an :class:`~assay.errors.AssayError` is raised).
    """
    info = run.info
    summary = run.summary()
    k = summary.trials_k()  # ``k`` in metric paths: the trials per task the run actually has
    checks: list[CheckResult] = []
    notes: list[str] = []
    for i, check in enumerate(policy.absolute):
        checks.append(absolute_check(check, summary, policy.where(f"absolute[{i}]")))
    pairing = None
    if baseline is not None and (policy.relative or policy.primary or policy.guardrails):
        pairing = pair_runs(
            baseline,
            run,
            match=policy.match,
            task_outcome=policy.task_outcome,
            common_only=policy.common_only,
        )
        notes.extend(pairing.notes)
    if policy.relative:
        if pairing is not None and baseline is not None:
            checks.extend(relative_checks(policy, run, baseline, pairing))
        elif policy.require_baseline:
            raise AssayError(
                f"{policy.where('relative[0]')}: policy {policy.name!r} has relative checks and "
                "require_baseline: true; pass --baseline RUN_ID"
            )
        else:
            for i, rel in enumerate(policy.relative):
                checks.append(
                    CheckResult(
                        "relative",
                        rel.name or f"{rel.metric} vs baseline",
                        "skip",
                        "skipped: no baseline run given (--baseline RUN_ID)",
                        None,
                        "",
                        policy.where(f"relative[{i}]"),
                    )
                )
            notes.append(f"{len(policy.relative)} relative check(s) skipped: no baseline run given")
    if policy.primary is not None or policy.guardrails:
        if pairing is not None and baseline is not None:
            checks.extend(rollout_checks(policy, run, baseline, pairing))
        elif policy.require_baseline:
            raise AssayError(
                f"{policy.where('primary')}: policy {policy.name!r} has rollout checks and "
                "require_baseline: true; pass --baseline RUN_ID"
            )
        else:
            skipped = ([policy.primary] if policy.primary else []) + list(policy.guardrails)
            for rollout in skipped:
                kind: Kind = "primary" if rollout is policy.primary else "guardrail"
                checks.append(
                    CheckResult(
                        kind,
                        f"{kind}: {rollout.metric}",
                        "skip",
                        "skipped: no baseline run given (--baseline RUN_ID)",
                    )
                )
            notes.append(f"{len(skipped)} rollout check(s) skipped: no baseline run given")
    if policy.high_risk is not None:
        checks.append(
            high_risk_check(
                policy.high_risk,
                summary,
                lambda task_id: failure_reasons(run.task_results(task_id)),
                policy.where("high_risk"),
            )
        )
    if policy.max_harness_error_share is not None:
        checks.append(harness_error_check(policy, summary, policy.where("max_harness_error_share")))
    completed = len(run.frame())
    if info.status != "finished" or completed < info.planned_trials:
        notes.append(
            f"run {info.run_id} is {info.status} with {completed} of {info.planned_trials} planned "
            f"trials; pass^k paths use k = {k}"
        )
    return Verdict(
        run_id=info.run_id,
        agent=info.config.agent,
        baseline=None if baseline is None else baseline.info.run_id,
        policy_name=policy.name,
        policy_version=policy.version,
        policy_hash=policy.hash,
        policy_file=policy.file,
        checks=checks,
        notes=notes,
    )


__all__ = [
    "AbsoluteCheck",
    "CheckResult",
    "GatePolicy",
    "HighRiskGate",
    "PolicyError",
    "RelativeCheck",
    "Verdict",
    "absolute_check",
    "evaluate",
    "failure_reasons",
    "harness_error_check",
    "high_risk_check",
    "load_policy",
    "policy_from_yaml",
    "relative_checks",
    "summary_path_problem",
]
