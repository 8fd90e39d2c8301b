"""Reading tau2 data: where the folder may be, once per process, into tables; bad
input is one sentence naming the file (and the simulation), never a traceback."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from assay.core.task import Task as AssayTask
from assay.domains.tau2 import (
    InitialState,
    Message,
    Tau2DataError,
    Tau2Domain,
    find_domain_folder,
    load_results,
    load_tasks,
    tau2_domain,
)
from assay.envs.environment import Domain, Environment


def test_folder_layouts(data_dir: Path, tmp_path: Path) -> None:
    folder = data_dir / "domains" / "mock"
    assert find_domain_folder(data_dir, "mock") == folder
    assert find_domain_folder(folder, "mock") == folder
    checkout = tmp_path / "tau2-bench" / "data" / "tau2" / "domains"
    shutil.copytree(folder, checkout / "mock")
    assert find_domain_folder(tmp_path / "tau2-bench", "mock") == checkout / "mock"
    with pytest.raises(Tau2DataError, match="no tau2 data for domain 'mock'"):
        find_domain_folder(tmp_path, "mock")
    with pytest.raises(Tau2DataError, match="is not ported"):
        tau2_domain("banking", data_dir)


def test_loaded_once_and_shared(data_dir: Path, airline: Tau2Domain) -> None:
    assert tau2_domain("airline", data_dir) is airline
    assert tau2_domain("airline", data_dir / "domains" / "airline").loaded is airline.loaded
    one, two = airline.environment_for(), airline.environment_for()
    one.reset(0)
    two.reset(0)
    one.call("cancel_reservation", {"reservation_id": "4WQ150"})
    assert two.snapshot()["reservations"]["4WQ150"]["status"] is None
    assert airline.loaded.base["reservations"]["4WQ150"]["status"] is None


def test_tables_and_records(airline: Tau2Domain, telecom: Tau2Domain) -> None:
    base = airline.loaded.base
    assert {t: len(base[t]) for t in base} == {"flights": 300, "users": 500, "reservations": 2000}
    flight = base["flights"]["HAT001"]
    assert list(flight) == [
        "flight_number",
        "origin",
        "destination",
        "scheduled_departure_time_est",
        "scheduled_arrival_time_est",
        "dates",
    ]  # tau2's field order, not the file's
    t = telecom.loaded.base
    assert set(t) == {"plans", "customers", "lines", "bills", "devices", "user_db"}
    assert set(t["user_db"]) == {"device", "surroundings"}
    assert t["customers"]["C1001"]["created_at"] == "2025-01-15 10:30:00"  # str(datetime), as tau2 renders
    assert t["user_db"]["surroundings"]["signal_strength"] == {
        "2G": "poor",
        "3G": "fair",
        "4G": "good",
        "5G": "excellent",
    }


def test_change_of_data_is_seen(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mock"
    shutil.copytree(data_dir / "domains" / "mock", folder)
    first = tau2_domain("mock", folder)
    db = json.loads((folder / "db.json").read_text())
    db["users"]["user_1"]["name"] = "Renamed"
    (folder / "db.json").write_text(json.dumps(db))
    second = tau2_domain("mock", folder)
    assert second.version != first.version
    assert second.loaded.base["users"]["user_1"]["name"] == "Renamed"


def test_bad_data_files(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mock"
    shutil.copytree(data_dir / "domains" / "mock", folder)
    (folder / "db.json").write_text("{not json")
    with pytest.raises(Tau2DataError, match=r"db\.json: cannot read"):
        tau2_domain("mock", folder)
    (folder / "db.json").write_text(json.dumps({"tasks": {}, "users": {"u": {"user_id": "u"}}}))
    with pytest.raises(Tau2DataError, match=r"db\.json: not a valid tau2 database"):
        tau2_domain("mock", folder)


def test_bad_results_files(root: Path, tmp_path: Path) -> None:
    raw = json.loads((root / "simulations" / "mock_e2e.json").read_text())
    path = tmp_path / "results.json"
    path.write_text("[]")
    with pytest.raises(Tau2DataError, match="no 'simulations' list"):
        load_results(path)
    broken = json.loads(json.dumps(raw))
    del broken["simulations"][0]["messages"]
    path.write_text(json.dumps(broken))
    sim = raw["simulations"][0]["id"]
    with pytest.raises(Tau2DataError, match=f"simulation {sim}: messages: Field required"):
        load_results(path)
    broken = json.loads(json.dumps(raw))
    broken["simulations"][0]["task_id"] = "nope"
    path.write_text(json.dumps(broken))
    with pytest.raises(Tau2DataError, match="task nope is not in the file's tasks"):
        load_results(path)
    broken = json.loads(json.dumps(raw))
    del broken["simulations"][0]["messages"][5]  # the tool message
    path.write_text(json.dumps(broken))
    from assay.domains.tau2 import replay_results

    with pytest.raises(Tau2DataError, match=f"simulation {sim}: message 5: expected the tool message"):
        replay_results(path, root / "data")


def test_protocols_and_assay_tasks(mock: Tau2Domain) -> None:
    assert isinstance(mock, Domain)
    task = AssayTask(
        id="t",
        initial_state={"actions": [{"name": "create_task", "args": {"user_id": "user_1", "title": "A"}}]},
        user_tools=["check_notifications"],
    )
    env = mock.environment(task, datetime(2025, 1, 1))
    assert isinstance(env, Environment)
    env.reset(3)
    assert env.snapshot()["tasks"]["task_2"]["title"] == "A"
    assert [t.name for t in env.tools("user")] == ["check_notifications"]
    assert env.write_tools() == {"create_task", "update_task_status", "dismiss_notification"}
    assert mock.base_state(0).count("tasks") == 1


def test_message_history_is_replayed_and_checked(mock: Tau2Domain) -> None:
    task = next(t for t in load_tasks(mock.loaded.tasks_path) if t.id == "update_task_with_message_history")
    env = mock.task_environment(task)
    assert env.snapshot()["tasks"]["task_2"]["title"] == "Project Review"
    history = [m.model_copy(deep=True) for m in task.initial_state.message_history or []]  # type: ignore[union-attr]
    history[2] = history[2].model_copy(update={"content": '{"task_id": "task_9"}'})
    bad = InitialState(message_history=history)
    with pytest.raises(Tau2DataError, match="message 2: replayed create_task returned"):
        mock.environment_for(bad).reset(0)
    assert isinstance(history[0], Message)


def test_policies_come_from_the_data_folder(data_dir: Path, telecom: Tau2Domain, airline: Tau2Domain) -> None:
    folder = data_dir / "domains" / "telecom"
    assert telecom.policy.startswith("<main_policy>\n" + (folder / "main_policy.md").read_text())
    assert (folder / "tech_support_manual.md").read_text() in telecom.policy
    workflow = tau2_domain("telecom-workflow", data_dir)
    assert (folder / "tech_support_workflow.md").read_text() in workflow.policy
    assert workflow.name == "tau2-telecom-workflow" and workflow.loaded.base is not telecom.loaded.base
    assert airline.policy == (data_dir / "domains" / "airline" / "policy.md").read_text()
    with pytest.raises(Tau2DataError, match="'airline-workflow' is not ported"):
        tau2_domain("airline-workflow", data_dir)
