"""JUnit XML for CI systems: one testcase per task, and one per gate check.

A task's testcase fails when any of its counted trials failed (the pass^k view: a
customer gets one try); the failure text lists, per failed trial, the failing gating
graders and their reasons. A task whose trials all ended in harness or environment
errors is reported as skipped (it says nothing about the agent). With a gate verdict a
second test suite holds one testcase per check.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from ..core.results import TaskMeta, TrialResult
from ..gate import Verdict, failure_reasons
from ..runner.stored import Run


def _suite(parent: ET.Element, name: str, timestamp: str | None = None) -> ET.Element:
    suite = ET.SubElement(parent, "testsuite", name=name)
    if timestamp:
        suite.set("timestamp", timestamp)
    return suite


def _finish(suite: ET.Element, tests: int, failures: int, skipped: int, time: float) -> None:
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    suite.set("time", f"{time:.3f}")


def _task_cases(
    suite: ET.Element, classname: str, tasks: Sequence[TaskMeta], results: Sequence[TrialResult]
) -> tuple[int, int, int, float]:
    by_task: dict[str, list[TrialResult]] = defaultdict(list)
    for r in results:
        by_task[r.task_id].append(r)
    failures = skipped = 0
    total_time = 0.0
    metas = {t.task_id: t for t in tasks}
    ids = sorted(set(metas) | set(by_task))
    for task_id in ids:
        meta = metas.get(task_id, TaskMeta(task_id))
        trials = sorted(by_task.get(task_id, []), key=lambda r: r.trial_index)
        time = sum(r.latency_s for r in trials)
        total_time += time
        case = ET.SubElement(
            suite, "testcase", classname=f"{classname}.{meta.stratum}", name=task_id, time=f"{time:.3f}"
        )
        counted = [r for r in trials if r.reward is not None]
        failed = [r for r in counted if r.reward == 0]
        excluded = Counter(r.termination for r in trials if r.reward is None)
        if not counted:
            skipped += 1
            why = ", ".join(f"{k} {v}" for k, v in excluded.items()) or "no trial ran"
            ET.SubElement(case, "skipped", message=f"no counted trial ({why})")
            continue
        if failed:
            failures += 1
            reasons = failure_reasons(failed)
            categories = Counter(
                g.category or g.grader for r in failed for g in r.grades if g.gating and g.passed is False
            )
            kind = categories.most_common(1)[0][0] if categories else failed[0].termination
            node = ET.SubElement(
                case, "failure", message=f"{len(failed)} of {len(counted)} trials failed", type=kind
            )
            node.text = "\n".join(reasons)
        if excluded:
            out = ET.SubElement(case, "system-out")
            out.text = "excluded trials (not the agent's doing): " + ", ".join(
                f"{k} {v}" for k, v in excluded.items()
            )
    return len(ids), failures, skipped, total_time


def junit_xml(run: Run, verdict: Verdict | None = None) -> str:
    """JUnit XML text for ``run`` (and ``verdict``'s checks, if given)."""
    info = run.info
    root = ET.Element("testsuites", name=f"assay {info.suite_name}")
    suite = _suite(root, f"{info.suite_name} · {info.config.agent} · {info.run_id}", info.created_at)
    props = ET.SubElement(suite, "properties")
    for key, value in (
        ("run_id", info.run_id),
        ("agent", info.config.agent),
        ("suite", info.suite_name),
        ("suite_version", info.suite_version),
        ("suite_hash", info.suite_hash),
        ("seed", str(info.seed)),
        ("trials_per_task", str(info.trials_per_task)),
    ):
        ET.SubElement(props, "property", name=key, value=value)
    tests, failures, skipped, time = _task_cases(suite, info.suite_name, run.tasks, run.results)
    _finish(suite, tests, failures, skipped, time)
    totals = [tests, failures, skipped]
    if verdict is not None:
        gate = _suite(root, f"gate · {verdict.policy_name} v{verdict.policy_version}")
        for check in verdict.checks:
            case = ET.SubElement(gate, "testcase", classname=f"gate.{check.kind}", name=check.name, time="0")
            if check.status == "fail":
                node = ET.SubElement(case, "failure", message=check.reason, type=check.kind)
                lines = [check.reason, f"threshold: {check.threshold}", f"policy: {check.where}"]
                for task in check.details.get("failing_tasks", []):
                    lines.append(f"{task['task_id']}: " + "; ".join(task["reasons"]))
                node.text = "\n".join(lines)
            elif check.status == "skip":
                ET.SubElement(case, "skipped", message=check.reason)
        counts = verdict.counts()
        _finish(gate, len(verdict.checks), counts["fail"], counts["skip"], 0.0)
        totals = [totals[0] + len(verdict.checks), totals[1] + counts["fail"], totals[2] + counts["skip"]]
    root.set("tests", str(totals[0]))
    root.set("failures", str(totals[1]))
    root.set("errors", "0")
    root.set("skipped", str(totals[2]))
    root.set("time", f"{time:.3f}")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path: str | Path, run: Run, verdict: Verdict | None = None) -> Path:
    """Write :func:`junit_xml` to ``path`` (parent folders created)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(junit_xml(run, verdict), encoding="utf-8")
    return target
