"""A pytest plugin loaded inside the sandbox by the ``tests`` grader
(``-p _assay_pytest_report``): it writes each test's outcome, by node id, as JSON to the
file named by ``ASSAY_PYTEST_REPORT``. Standard library and pytest only; never imported
by assay itself."""

from __future__ import annotations

import json
import os
from typing import Any

_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
_outcomes: dict[str, str] = {}


def _merge(nodeid: str, outcome: str) -> None:
    old = _outcomes.get(nodeid)
    if old is None or _RANK[outcome] > _RANK[old]:
        _outcomes[nodeid] = outcome


def pytest_runtest_logreport(report: Any) -> None:
    if report.when == "call":
        outcome = "skipped" if report.skipped else ("failed" if report.failed else "passed")
        if hasattr(report, "wasxfail"):
            outcome = "failed" if report.passed else "skipped"  # xpass breaks a fix; xfail is no pass
    elif report.failed:
        outcome = "error"  # setup or teardown failed
    elif report.skipped:
        outcome = "skipped"
    else:
        outcome = "passed"
    _merge(report.nodeid, outcome)


def pytest_collectreport(report: Any) -> None:
    if report.failed:
        _merge(report.nodeid or "<collection>", "error")


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    path = os.environ.get("ASSAY_PYTEST_REPORT")
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"outcomes": _outcomes, "exitstatus": int(exitstatus)}, fh)
