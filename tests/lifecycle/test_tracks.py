"""Snapshot vs probe tracks on the time-sensitive example suite: the probe track reports
stale evidence and probe errors apart, never as agent failures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import assay
from assay.core.task import Evidence, Task
from assay.errors import SpecError
from assay.runner.variants import check_evidence, load_probe, refreshed, same_value
from assay.store import Store
from assay.store.evidence import load_checks
from tests.support.cli import assay_main

EXAMPLE = Path(__file__).parents[2] / "examples" / "time-sensitive"
PROBE = f"{EXAMPLE}/probe.py:carrier_status"


def cli(db: Path, *args: str, code: int = 0) -> str:
    result = assay_main(*args, "--store", str(db))
    assert result.code == code, f"exit {result.code}\n{result.stdout}\n{result.stderr}"
    return result.stdout if code == 0 else result.err


def test_snapshot_track_runs_every_task_against_frozen_evidence(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    run = json.loads(cli(db, "run", str(EXAMPLE), "--run-id", "snap", "--json"))
    assert run["overall"]["tasks"] == 4 and run["overall"]["success_rate"] == 1.0
    doc = json.loads(cli(db, "evidence", "snap", "--json"))
    assert doc["track"] == "snapshot" and doc["evidence"]["checked"] == 0 and len(doc["frozen"]) == 4
    assert [f["out_of_date"] for f in doc["frozen"]] == [
        True,
        False,
        False,
        False,
    ]  # max age 2 days, long past


def test_probe_track_reports_staleness_apart_from_agent_failures(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    for agent in ("careful", "hasty"):
        run = json.loads(
            cli(
                db,
                "run",
                str(EXAMPLE),
                "-a",
                f"builtin:retail-{agent}",
                "--probe",
                PROBE,
                "--run-id",
                agent,
                "--json",
            )
        )
        assert run["overall"]["tasks"] == 2 and run["excluded"]["trials"] == 0  # stale and broken: not run
        doc = json.loads(cli(db, "evidence", agent, "--json"))
        assert doc["track"] == "probe"
        assert doc["evidence"] == {"checked": 4, "current": 1, "stale": 2, "probe_errors": 1}
        assert [(s["task_id"], s["frozen"], s["current"], s["action"]) for s in doc["stale"]] == [
            ("status-shipped-since", "processing", "shipped", "refreshed"),
            ("status-stale-unbound", "pending", "cancelled", "skipped"),
        ]
        assert (
            doc["probe_errors"][0]["task_id"] == "status-feed-gone"
            and "LookupError" in doc["probe_errors"][0]["error"]
        )
        assert doc["tasks_not_run"] == ["status-feed-gone", "status-stale-unbound"]
        agent_side = doc["agent"]
        assert agent_side["refreshed"]["trials"] == 2 and agent_side["as_written"]["trials"] == 2
        if agent == "careful":  # refreshed with today's status, the careful agent reports it
            assert agent_side["all"]["agent_failures"] == 0 and agent_side["all"]["success_rate"] == 1.0
        else:  # the hasty agent's failures are its own (no identity check), counted on the tasks that ran
            assert agent_side["all"]["agent_failures"] == 4
    summary = json.loads(cli(db, "show", "careful", "--json"))
    assert sorted(t["task_id"] for t in summary["tasks"]) == ["status-shipped-since", "status-unchanged"]


def test_resume_refreshes_from_the_stored_checks_without_probing_again(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    shutil.copy(EXAMPLE / "probe.py", probe)
    shutil.copy(EXAMPLE / "live.json", tmp_path / "live.json")
    db = Store(tmp_path / "r.db")
    run = assay.run(str(EXAMPLE), probe=f"{probe}:carrier_status", trials=1, store=db, run_id="p")
    checks = load_checks(db, "p")
    assert len(checks) == 4 and {c["status"] for c in checks} == {"current", "stale", "probe_error"}
    assert len(run.results) == 2
    with db.engine.begin() as conn:  # as if the run had been interrupted before its refreshed task
        conn.exec_driver_sql("DELETE FROM trials WHERE run_id = 'p' AND task_id = 'status-shipped-since'")
    db.set_status("p", "interrupted")
    marker = tmp_path / "called"
    probe.write_text(
        f"def carrier_status(e, t):\n    open({str(marker)!r}, 'w').close()\n    return 'gone'\n"
    )
    resumed = assay.resume("p", store=db)
    assert not marker.exists()  # the stored checks were used
    shipped = resumed.task_results("status-shipped-since")
    assert len(shipped) == 1 and shipped[0].reward == 1  # refreshed again: "shipped" expected and said


def test_probe_helpers() -> None:
    assert same_value(" Shipped ", "shipped") and same_value(1, 1.0) and not same_value(1, 2)
    with pytest.raises(SpecError, match="write module:function"):
        load_probe("nothing")
    with pytest.raises(SpecError, match="no file"):
        load_probe("missing.py:f")
    evidence = Evidence(
        id="e", source="s", retrieved_at="2025-01-01T00:00:00", value="a", binds=["user.goal"]
    )
    task = Task(id="t", user={"goal": "status is a now"}, evidence=[evidence])
    checks = check_evidence([task], lambda e, t: "b")
    assert checks[0]["status"] == "stale" and checks[0]["action"] == "refreshed"
    fresh = refreshed(task, checks)
    assert fresh is not None and fresh.user.goal == "status is b now" and fresh.evidence[0].value == "b"
    assert fresh.input_hash() != task.input_hash()
    broken = Task(id="t", evidence=[evidence.model_copy(update={"binds": ["user.nope"]})])
    with pytest.raises(SpecError, match=r"binds 'user\.nope', which is not a field"):
        refreshed(broken, check_evidence([broken], lambda e, t: "b"))
