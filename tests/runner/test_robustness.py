"""Robustness reports: the careful retail agent with and without injected tool faults."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.core.results import TrialResult
from assay.core.transcript import Span, Transcript
from assay.envs.faults import FAULT_ATTRIBUTE
from assay.runner.robustness import agent_tool_calls, classify_recovery, robustness_report

PLAN = (
    "get_order_details:timeout@0.3,get_user_details:rate_limit@0.3,"
    "refund_delivered_order:partial@0.5,find_user_id_by_email:timeout#1"
)

FAMILIES = [
    "refund-in-window-email",
    "refund-in-window-name-zip",
    "cancel-pending",
    "order-status",
    "human-request",
]


@pytest.fixture
def report(tmp_path: Any) -> dict[str, Any]:
    result = CliRunner().invoke(
        app,
        ["robustness", "retail", "--agent", "builtin:retail-careful", "--faults", PLAN, "-k", "3", "--json"]
        + [arg for family in FAMILIES for arg in ("--task", family)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_careful_agent_with_and_without_faults(report: dict[str, Any]) -> None:
    base, faulted = report["baseline"], report["faulted"]
    assert base["success_rate"] == 1.0 and base["trials"] == faulted["trials"] == 13 * 3
    assert faulted["excluded"] == 0  # faults are the agent's to handle, never harness errors
    drop = report["success_rate_drop"]
    assert 0 < drop["estimate"] < 1 and drop["ci"][0] <= drop["estimate"] <= drop["ci"][1]
    assert drop["estimate"] == pytest.approx(base["success_rate"] - faulted["success_rate"], abs=1e-3)
    curve = report["pass_hat_k_drop"]
    assert set(curve) == {"1", "2", "3"}
    assert curve["1"]["estimate"] == pytest.approx(drop["estimate"], abs=1e-3)
    assert curve["3"]["estimate"] >= curve["1"]["estimate"]  # consistency suffers most
    faults = report["faults"]
    assert set(faults["by_tool"]) <= {
        "get_order_details",
        "get_user_details",
        "refund_delivered_order",
        "find_user_id_by_email",
    }
    assert faults["by_tool"]["find_user_id_by_email"] == {
        "timeout": faults["by_tool"]["find_user_id_by_email"]["timeout"]
    }
    assert faults["injected"] == sum(n for kinds in faults["by_tool"].values() for n in kinds.values())
    rec = report["recovery"]
    classes = rec["recovered_by_retry"] + rec["recovered_other_way"] + rec["stopped_safely"] + rec["failed"]
    assert rec["trials"] == classes > 0
    assert 0 < rec["recovery_rate"] < 1
    assert rec["recovered_by_retry"] > 0  # e.g. a timed-out email lookup, looked up again
    assert report["retries"]["retried"] <= report["retries"]["faults"]
    assert report["plan"] == PLAN and report["runs"]["baseline"] != report["runs"]["faulted"]


def test_console_output() -> None:
    result = CliRunner().invoke(
        app,
        [
            "robustness",
            "retail",
            "--faults",
            "get_order_details:timeout@0.5",
            "-k",
            "2",
            "--task",
            "cancel-pending",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    for words in ("success rate", "pass^2", "faults injected", "error recovery", "retries"):
        assert words in result.stdout


def test_bad_fault_spec_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assay", "robustness", "retail", "--faults", "get_order_details:explode@0.1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().startswith(
        "error: --faults 'get_order_details:explode@0.1' (kind): Input should"
    )
    assert "Traceback" not in done.stderr


def _result(key: tuple[str, int], reward: int | None, termination: str = "user_stop") -> TrialResult:
    return TrialResult("r", key[0], key[1], 7, "c", reward, termination)  # type: ignore[arg-type]


def _transcript(*calls: tuple[str, str | None, str | None]) -> Transcript:
    spans = [Span(0, "trial", "t", 0.0)]
    for name, error, fault in calls:
        attrs: dict[str, Any] = {"caller": "agent"}
        if error:
            attrs["error"] = error
        if fault:
            attrs[FAULT_ATTRIBUTE] = fault
        spans.append(Span(len(spans), "tool", name, 0.0, 0.0, attributes=attrs))
    return Transcript(spans=spans)


def test_recovery_classes() -> None:
    writes = {"refund"}
    retry = agent_tool_calls(
        _transcript(("lookup", "refused", "timeout"), ("lookup", None, None), ("refund", None, None))
    )
    assert classify_recovery(_result(("a", 0), 1), retry, writes) == "recovered_by_retry"
    other = agent_tool_calls(_transcript(("lookup", "refused", "timeout"), ("search", None, None)))
    assert classify_recovery(_result(("a", 0), 1), other, writes) == "recovered_other_way"
    handed = agent_tool_calls(_transcript(("lookup", "refused", "rate_limit"), ("transfer", None, None)))
    assert classify_recovery(_result(("a", 0), 0, "transfer"), handed, writes) == "stopped_safely"
    blundered = agent_tool_calls(_transcript(("lookup", None, "drop_fields"), ("refund", None, None)))
    assert classify_recovery(_result(("a", 0), 0), blundered, writes) == "failed"
    looped = agent_tool_calls(_transcript(("lookup", "refused", "timeout")))
    assert classify_recovery(_result(("a", 0), 0, "max_turns"), looped, writes) == "failed"


def test_report_on_hand_made_runs() -> None:
    keys = [(t, i) for t in ("a", "b", "c") for i in range(2)]
    baseline = [_result(k, 1) for k in keys]
    faulted = [_result(k, 0 if k == ("a", 0) else 1) for k in keys]
    transcripts = {
        ("a", 0): _transcript(("lookup", "refused", "timeout")),
        ("b", 1): _transcript(("lookup", None, "empty")),
    }
    report = robustness_report(baseline, faulted, transcripts, write_tools={"refund"})
    assert report["k"] == 2 and report["pairs"] == 6
    assert report["success_rate_drop"]["estimate"] == pytest.approx(1 / 6, abs=1e-4)
    assert report["pass_hat_k_drop"]["2"]["estimate"] == pytest.approx(1 / 3, abs=1e-4)
    assert report["faults"] == {
        "injected": 2,
        "trials_with_faults": 2,
        "by_tool": {"lookup": {"empty": 1, "timeout": 1}},
    }
    rec = report["recovery"]
    assert (rec["trials"], rec["recovered_other_way"], rec["stopped_safely"]) == (2, 1, 1)
    assert rec["recovery_rate"] == 0.5 and rec["safe_rate"] == 1.0
    with pytest.raises(ValueError, match="do not pair up"):
        robustness_report(baseline, [TrialResult("r", "a", 0, 8, "c", 1, "user_stop")], {}, write_tools=())
