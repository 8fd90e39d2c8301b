"""Every recorded tool output of tau2's recorded simulations is reproduced by the port,
and every recorded verdict (DB, ENV_ASSERTION, COMMUNICATE, ACTION, reward) is
re-derived by assay's implementation of tau2's evaluator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.domains.tau2 import ResultsReport, replay_results

DOMAINS = ("airline", "retail", "telecom", "mock")
_REPORTS: dict[str, list[ResultsReport]] = {}


def _domain_of(path: Path) -> str:
    info = json.loads(path.read_text(encoding="utf-8"))["info"]
    return str(info["environment_info"]["domain_name"]).removesuffix("-workflow")


def reports(root: Path, domain: str) -> list[ResultsReport]:
    if domain not in _REPORTS:
        files = sorted(p for p in (root / "simulations").glob("*.json") if _domain_of(p) == domain)
        _REPORTS[domain] = [replay_results(p, root / "data") for p in files]
    return _REPORTS[domain]


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_recorded_tool_output_is_reproduced(root: Path, domain: str) -> None:
    found = reports(root, domain)
    assert found, f"no recorded simulations of {domain} in {root / 'simulations'}"
    for report in found:
        assert report.calls > 0, f"{report.path.name}: no tool calls replayed"
        lines = [
            f"{m.simulation_id} message {m.message_index} {m.tool}: "
            f"expected {m.expected[:200]!r}, got {m.got[:200]!r}"
            for m in report.mismatches
        ]
        assert not lines, f"{report.path.name}:\n" + "\n".join(lines)
    sims, calls = sum(len(r.simulations) for r in found), sum(r.calls for r in found)
    print(f"tau2 {domain}: {len(found)} files, {sims} simulations, {calls} tool outputs reproduced")


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_recorded_verdict_is_reproduced(root: Path, domain: str) -> None:
    for report in reports(root, domain):
        wrong = [
            f"{s.simulation_id} (task {s.task_id}) {name}: "
            f"recorded {s.recorded[name]!r}, got {s.reproduced[name]!r}"
            for s in report.simulations
            for name in s.disagreements
        ]
        assert not wrong, f"{report.path.name}:\n" + "\n".join(wrong)
        for s in report.simulations:  # the comparison saw real values
            assert s.recorded["reward"] is not None
            if s.verdict.reward is not None:
                assert s.verdict.reward == pytest.approx(s.recorded["reward"])


def test_the_recorded_verdicts_are_not_trivial(root: Path) -> None:
    """The checks above compare both outcomes of every component, not only passes."""
    sims = [s for d in DOMAINS for r in reports(root, d) for s in r.simulations]
    assert {s.recorded["db_match"] for s in sims} == {True, False}
    assert {s.recorded["reward"] for s in sims} == {0.0, 1.0}
    flags = {
        name: {v for s in sims for v in s.recorded[name]}
        for name in ("env_assertions", "communicate", "actions")
    }
    assert flags == {"env_assertions": {True, False}, "communicate": {True, False}, "actions": {True, False}}
