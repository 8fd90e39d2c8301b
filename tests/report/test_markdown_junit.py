"""Markdown PR comments and JUnit XML of gate verdicts and comparisons."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from assay.compare import compare_runs
from assay.compare.planning import plan
from assay.gate import evaluate, policy_from_yaml
from assay.report.junit import junit_xml, write_junit
from assay.report.markdown import compare_markdown, gate_markdown, plan_markdown
from tests.compare.fakes import make_run, tasks_with

POLICY = """\
name: demo
absolute:
  - {metric: overall.success_rate, min: 0.9, name: "overall | success"}
relative:
  - {metric: quality, margin: 0.05}
high_risk: {stratum: high_risk}
max_harness_error_share: 0.5
"""


def _run():  # type: ignore[no-untyped-def]
    rewards = {"ok": [1, 1], "flaky": [1, 0], "risky": [0, 0], "broken": [None, None]}
    return make_run("R", rewards, strata={"risky": "high_risk"}, agent="python:demo:agent")


def test_junit_one_testcase_per_task_with_grader_reasons(tmp_path: Path) -> None:
    run = _run()
    verdict = evaluate(run, policy_from_yaml(POLICY, file="gate.yaml"))
    path = write_junit(tmp_path / "out" / "junit.xml", run, verdict)  # type: ignore[arg-type]
    root = ET.parse(path).getroot()
    tasks, gate = root.findall("testsuite")
    assert (tasks.get("tests"), tasks.get("failures"), tasks.get("skipped"), tasks.get("errors")) == (
        "4",
        "2",
        "1",
        "0",
    )
    cases = {c.get("name"): c for c in tasks.findall("testcase")}
    assert set(cases) == {"ok", "flaky", "risky", "broken"}
    assert cases["ok"].find("failure") is None and cases["ok"].get("classname") == "fake.normal"
    failure = cases["flaky"].find("failure")
    assert failure is not None and failure.get("message") == "1 of 2 trials failed"
    assert failure.text == "trial 1: state: end state differs"
    assert cases["risky"].get("classname") == "fake.high_risk"
    skipped = cases["broken"].find("skipped")
    assert skipped is not None and "harness_error 2" in (skipped.get("message") or "")
    assert {p.get("name"): p.get("value") for p in tasks.iter("property")}["agent"] == "python:demo:agent"
    checks = {c.get("name"): c for c in gate.findall("testcase")}
    assert gate.get("tests") == "4" and gate.get("failures") == "2" and gate.get("skipped") == "1"
    assert checks["high-risk tasks"].find("failure") is not None
    assert "risky: trial 0: state" in (checks["high-risk tasks"].find("failure").text or "")  # type: ignore[union-attr]
    assert checks["quality vs baseline"].find("skipped") is not None
    assert root.get("tests") == "8" and root.get("failures") == "4" and root.get("skipped") == "2"


def test_junit_escapes_and_works_without_a_verdict() -> None:
    run = make_run("R<&>", {"a<b>&c": [0]})
    text = junit_xml(run)  # type: ignore[arg-type]
    root = ET.fromstring(text.encode())
    assert [s.get("name") for s in root] == ["fake · python:fake:agent · R<&>"]
    assert root.find("testsuite/testcase").get("name") == "a<b>&c"  # type: ignore[union-attr]


def test_gate_markdown() -> None:
    verdict = evaluate(_run(), policy_from_yaml(POLICY, file="ci/gate.yaml"))  # type: ignore[arg-type]
    text = gate_markdown(verdict)
    assert text.startswith("## ❌ assay gate failed: demo v1\n")
    assert "| ❌ | overall \\| success |" in text  # pipes in cells are escaped
    assert "| ⏭️ | quality vs baseline | skipped: no baseline run given" in text
    assert "gate.yaml:6" in text and "ci/gate.yaml" in text
    assert "### ❌ high-risk tasks: 1 task(s) failing" in text
    assert "- `risky` (0/2 trials passed): state: end state differs (×2)" in text
    assert "2 passed · 2 failed · 1 skipped" not in text and "1 passed · 2 failed · 1 skipped" in text


def test_compare_markdown() -> None:
    a, b = tasks_with(30, 1, 14, 15)
    cmp = compare_runs([make_run("A", a, agent="python:x:a"), make_run("B", b, agent="python:x:b")])
    text = compare_markdown(cmp)
    assert text.startswith("## assay compare: baseline `A` (python:x:a)\n")
    assert "- **python:x:b:** python:x:b is better on quality (+21.7 pts, p=0.002)" in text
    assert "Holm-adjusted" in text and "McNemar exact" in text
    assert "| tasks solved (every trial: pass^k) | 51.7% | 73.3% | +21.7 pts [" in text
    assert "| cost per trial ($) | – | – | skipped: neither run measured it |" in text
    assert (
        "**14 fixed (B solves, A did not):**" in text
        and "**1 broken (A solved, B does not):** `t030`" in text
    )
    assert "### Box score: profile assay-default v1" in text and "`cost_usd`" in text


def test_plan_markdown() -> None:
    text = plan_markdown(plan(0.7, 0.03, k=4, suite_tasks=57))
    assert "**3554 independent trials per arm** = **2222 tasks × 4 trials**" in text
    assert "can detect a change of ≥ **" in text
