"""Running a workspace's tests in the sandbox and reading back each test's outcome:
pytest node ids (one pytest run, outcomes reported by a plugin, by node id) and plain
assertion scripts (``python SCRIPT``: passes when it exits 0)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..envs.sandbox import Sandbox, SandboxLimits, SandboxResult
from ..envs.sandbox.bwrap import WORKSPACE
from ..envs.sandbox.workspace import read_regular
from ..errors import HarnessError

REPORT_FILE = ".assay-pytest-report.json"
PYTEST_PLUGIN = "_assay_pytest_report"
#: pytest's exit code when a node id given on the command line is not found.
USAGE_ERROR = 4


@dataclass(slots=True)
class TestOutcome:
    """One test's result: ``detail`` says how it ended (``passed``, ``failed``,
    ``error``, ``skipped``, ``not found``, ``timed out``, ``exit code 1: ...``)."""

    __test__ = False  # not a pytest test class

    test: str
    passed: bool
    detail: str


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _pytest_missing(result: SandboxResult) -> bool:
    return "No module named pytest" in result.stderr


def _matches(nodeid: str, wanted: str) -> bool:
    wanted = wanted.rstrip("/")
    return nodeid == wanted or nodeid.startswith(wanted + "::") or nodeid.startswith(wanted + "/")


def _aggregate(wanted: str, outcomes: dict[str, str]) -> TestOutcome:
    """The outcome of a requested id: every test it names must pass (at least one)."""
    found = {n: o for n, o in outcomes.items() if _matches(n, wanted)}
    if not found:
        return TestOutcome(wanted, False, "not found")
    bad = sorted((n, o) for n, o in found.items() if o != "passed")
    if not bad:
        return TestOutcome(wanted, True, "passed")
    if len(found) == 1:
        return TestOutcome(wanted, False, bad[0][1])
    return TestOutcome(wanted, False, f"{len(bad)}/{len(found)} not passed (first: {bad[0][0]}: {bad[0][1]})")


def run_pytest(
    sandbox: Sandbox,
    root: Path,
    ids: list[str],
    limits: SandboxLimits,
    extra_args: list[str] | None = None,
) -> list[TestOutcome]:
    """Run the pytest node ids ``ids`` in the workspace ``root``; one outcome per id."""
    if not ids:
        return []
    inside = WORKSPACE if sandbox.mode() == "bwrap" else str(root)
    report = root / REPORT_FILE
    report.unlink(missing_ok=True)
    argv = ["python", "-m", "pytest", "-q", "--color=no", "-p", "no:cacheprovider", "-p", PYTEST_PLUGIN]
    result = sandbox.run(
        [*argv, *(extra_args or []), *ids],
        root,
        limits=limits,
        env={"ASSAY_PYTEST_REPORT": f"{inside}/{REPORT_FILE}"},
        helpers_on_path=True,
    )
    if _pytest_missing(result):
        raise HarnessError("pytest is not installed in the Python that runs sandboxed tests")
    data = read_regular(report, 16 << 20)
    report.unlink(missing_ok=True)
    outcomes: dict[str, str] | None = None
    if data is not None and not result.timed_out:
        try:
            parsed = json.loads(data)
            outcomes = {str(k): str(v) for k, v in parsed["outcomes"].items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            outcomes = None
    if result.exit_code == USAGE_ERROR and len(ids) > 1:  # a missing id stops the whole run
        return [o for one in ids for o in run_pytest(sandbox, root, [one], limits, extra_args)]
    if outcomes is None:
        why = "timed out" if result.timed_out else f"pytest did not report ({result.summary()})"
        tail = _last_line(result.stderr) or _last_line(result.stdout)
        return [
            TestOutcome(i, False, f"{why}: {tail}" if tail and not result.timed_out else why) for i in ids
        ]
    if result.exit_code == USAGE_ERROR:
        output = result.stdout + result.stderr
        detail = "not found" if "not found" in output else f"pytest usage error: {_last_line(output)}"
        return [TestOutcome(i, False, detail) for i in ids]
    return [_aggregate(i, outcomes) for i in ids]


def run_script(
    sandbox: Sandbox, root: Path, script: str, args: list[str], limits: SandboxLimits, label: str
) -> TestOutcome:
    """Run ``python SCRIPT ARGS`` in the workspace: passed when it exits 0 in time."""
    if not (root / script).is_file():
        return TestOutcome(label, False, "not found")
    result = sandbox.run(["python", script, *args], root, limits=limits)
    if result.ok:
        return TestOutcome(label, True, "passed")
    if result.timed_out:
        return TestOutcome(label, False, "timed out")
    tail = _last_line(result.stderr) or _last_line(result.stdout)
    return TestOutcome(label, False, f"{result.summary()}: {tail}" if tail else result.summary())
