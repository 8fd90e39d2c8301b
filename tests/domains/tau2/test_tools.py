"""Tool-level behaviour of the port, per domain: outputs, tau2's error texts and the
state changes (including tau2's half-done changes and its quirks)."""

from __future__ import annotations

import json
import re

import pytest

from assay.domains.tau2 import (
    EnvAssertion,
    EnvFunctionCall,
    Tau2Domain,
    Tau2Environment,
    ToolCall,
    load_tasks,
)
from assay.envs.tools import InvalidToolCall, ToolError


def env_of(domain: Tau2Domain) -> Tau2Environment:
    env = domain.environment_for()
    env.reset(0)
    return env


def error_of(env: Tau2Environment, name: str, args: dict, requestor: str = "assistant") -> str:
    content, error = env.response(ToolCall(name=name, arguments=args, requestor=requestor))  # type: ignore[arg-type]
    assert error, content
    return content


# --- airline ---------------------------------------------------------------------------


def test_airline_errors(airline: Tau2Domain) -> None:
    env = env_of(airline)
    assert error_of(env, "get_user_details", {"user_id": "nobody"}) == "Error: User nobody not found"
    assert error_of(env, "get_reservation_details", {"reservation_id": "ZZZZZZ"}) == (
        "Error: Reservation ZZZZZZ not found"
    )
    assert error_of(env, "get_flight_status", {"flight_number": "HAT001", "date": "2030-01-01"}) == (
        "Error: Flight HAT001 not found on date 2030-01-01"
    )
    assert error_of(env, "calculate", {"expression": "2 + x"}) == "Error: Invalid characters in expression"
    assert error_of(env, "calculate", {"expression": "1 / 0"}) == "Error: division by zero"
    assert error_of(env, "no_such_tool", {}) == "Error: Tool 'no_such_tool' not found."
    assert error_of(env, "get_user_details", {}, "user") == "Error: User tools not available"
    assert error_of(env, "get_user_details", {"user_id": ["a"]}) == "Error: unhashable type: 'list'"


def test_airline_outputs(airline: Tau2Domain) -> None:
    env = env_of(airline)
    assert env.call("calculate", {"expression": "(2 + 3) * 1.5"}) == "7.5"
    assert env.call("get_flight_status", {"flight_number": "HAT001", "date": "2024-05-03"}) == "cancelled"
    reservation = json.loads(env.call("get_reservation_details", {"reservation_id": "4WQ150"}))
    assert list(reservation)[-2:] == ["insurance", "status"] and reservation["status"] is None
    assert json.loads(env.call("list_all_airports", {}))[0] == {"iata": "SFO", "city": "San Francisco"}


def test_airline_failed_booking_changes_nothing_and_a_good_one_does(airline: Tau2Domain) -> None:
    env = env_of(airline)
    before = env.snapshot()
    flights = json.loads(
        env.call("search_direct_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"})
    )
    flight = flights[0]
    price = flight["prices"]["economy"]
    user = json.loads(env.call("get_user_details", {"user_id": "mia_li_3668"}))
    card = next(k for k, v in user["payment_methods"].items() if v["source"] == "credit_card")
    args = {
        "user_id": "mia_li_3668",
        "origin": "JFK",
        "destination": "SEA",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": flight["flight_number"], "date": "2024-05-20"}],
        "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
        "payment_methods": [{"payment_id": card, "amount": price - 1}],
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    assert error_of(env, "book_reservation", args) == (
        f"Error: Payment amount does not add up, total price is {price}, but paid {price - 1}"
    )
    assert env.snapshot().hash() == before.hash()
    args["payment_methods"] = [
        {"payment_id": card, "amount": float(price)}
    ]  # coerced to int, as pydantic does
    booked = json.loads(env.call("book_reservation", args))
    assert booked["reservation_id"] == "HATHAT" and booked["payment_history"] == [
        {"payment_id": card, "amount": price}
    ]
    after = env.snapshot()
    seats = after["flights"][flight["flight_number"]]["dates"]["2024-05-20"]["available_seats"]["economy"]
    assert seats == flight["available_seats"]["economy"] - 1
    assert after["users"]["mia_li_3668"]["reservations"][-1] == "HATHAT"


# --- retail ----------------------------------------------------------------------------


def test_retail_errors_and_partial_changes(retail: Tau2Domain) -> None:
    env = env_of(retail)
    assert error_of(env, "find_user_id_by_email", {"email": "nobody@example.com"}) == "Error: User not found"
    assert error_of(env, "get_order_details", {"order_id": "W0000000"}) == "Error: Order not found"
    assert (
        error_of(env, "find_user_id_by_email", {"email": 5}) == "Error: 'int' object has no attribute 'lower'"
    )
    order = next(o for o in env.snapshot()["orders"].values() if o["status"] == "delivered")
    assert error_of(
        env, "cancel_pending_order", {"order_id": order["order_id"], "reason": "no longer needed"}
    ) == ("Error: Non-pending order cannot be cancelled")
    assert (
        error_of(
            env,
            "modify_pending_order_items",
            {"order_id": order["order_id"], "item_ids": [], "new_item_ids": [], "payment_method_id": "x"},
        )
        == "Error: Non-pending order cannot be modified"
    )


def test_retail_modify_items_copies_the_last_new_item_into_every_item(retail: Tau2Domain) -> None:
    """tau2's quirk: the modified items all get the price and options of the last new item."""
    env = env_of(retail)
    state = env.snapshot()
    order, swaps = None, []
    for candidate in state["orders"].values():
        if candidate["status"] != "pending" or len(candidate["items"]) < 2:
            continue
        swaps = []
        for item in candidate["items"][:2]:
            variants = state["products"][item["product_id"]]["variants"]
            other = next((v for k, v in variants.items() if k != item["item_id"] and v["available"]), None)
            if other is not None:
                swaps.append((item, other))
        if len(swaps) == 2 and swaps[0][1]["price"] != swaps[1][1]["price"]:
            order = candidate
            break
    assert order is not None
    user = state["users"][order["user_id"]]
    method = order["payment_history"][0]["payment_method_id"]
    out = json.loads(
        env.call(
            "modify_pending_order_items",
            {
                "order_id": order["order_id"],
                "item_ids": [s[0]["item_id"] for s in swaps],
                "new_item_ids": [s[1]["item_id"] for s in swaps],
                "payment_method_id": method,
            },
        )
    )
    assert out["status"] == "pending (item modified)"
    changed = [i for i in out["items"] if i["item_id"] in {s[1]["item_id"] for s in swaps}]
    assert [i["price"] for i in changed] == [swaps[1][1]["price"]] * 2
    assert user["user_id"] == order["user_id"]


# --- telecom (dual control) ------------------------------------------------------------


def _telecom_task_env(telecom: Tau2Domain, task_id: str) -> Tau2Environment:
    task = next(t for t in load_tasks(telecom.loaded.tasks_path) if t.id == task_id)
    return telecom.task_environment(task)


def test_telecom_user_tools_and_sync(telecom: Tau2Domain) -> None:
    env = env_of(telecom)
    assert (
        env.call("check_status_bar", {}, for_="user")
        == "Status Bar: 📶³ Good | 5G | 📱 Data Enabled | 🔋 80%"
    )
    assert (
        env.call("toggle_airplane_mode", {}, for_="user")
        == "Airplane Mode is now ON.\nStatus Bar: ✈️ Airplane Mode | 🔋 80%"
    )
    assert env.call("run_speed_test", {}, for_="user") == "Speed test failed: No Connection."
    assert error_of(env, "check_status_bar", {}) == "Error: Tool 'check_status_bar' not found."
    assert error_of(env, "get_customer_by_id", {"customer_id": "C1001"}, "user") == (
        "Error: Tool 'get_customer_by_id' not found."
    )
    assert error_of(env, "get_details_by_id", {"id": "X1"}) == "Error: Unknown ID format or type: X1"
    usage = json.loads(env.call("get_data_usage", {"customer_id": "C1001", "line_id": "L1001"}))
    assert usage == {
        "line_id": "L1001",
        "data_used_gb": "3.2",
        "data_limit_gb": "5.0",
        "data_refueling_gb": "0.0",
        "cycle_end_date": "2025-02-28",
    }


def test_telecom_payment_request_flows_through_sync(telecom: Tau2Domain) -> None:
    env = env_of(telecom)
    env.run_function(_fn("user", "set_user_info", name="John Smith", phone_number="555-123-2002"))
    customer = env.snapshot()["customers"]["C1001"]
    bill = customer["bill_ids"][1]
    assert env.call("check_payment_request", {}, for_="user") == "No payment request has been made."
    assert env.call("send_payment_request", {"customer_id": "C1001", "bill_id": bill}) == (
        f"Payment request sent to the customer for bill {bill}"
    )
    due = env.snapshot()["bills"][bill]["total_due"]
    assert (
        env.call("check_payment_request", {}, for_="user")
        == f"You have a payment request for bill {bill} of {due} USD."
    )
    assert env.call("make_payment", {}, for_="user") == f"Payment of {due} USD has been made for bill {bill}."
    state = env.snapshot()
    assert state["bills"][bill]["status"] == "Paid"
    assert state["user_db"]["surroundings"]["payment_request"] is None


def test_telecom_refuel_creates_a_seeded_draft_bill(telecom: Tau2Domain) -> None:
    env = env_of(telecom)
    out = json.loads(env.call("refuel_data", {"customer_id": "C1002", "line_id": "L1004", "gb_amount": 2}))
    assert out["message"].startswith("Successfully added 2 GB of data for line L1004 for $")
    assert isinstance(out["charge"], str) and isinstance(out["new_data_refueling_gb"], str)
    again = env_of(telecom)
    again.call("refuel_data", {"customer_id": "C1002", "line_id": "L1004", "gb_amount": 2})
    assert env.snapshot().hash() == again.snapshot().hash()  # same seed, same new bill id
    state = env.snapshot()
    new = [b for b in state["bills"] if b not in telecom.loaded.base["bills"]]
    assert len(new) == 1 and re.fullmatch(r"B[0-9a-f]{8}", new[0])
    bill = state["bills"][new[0]]
    assert (bill["status"], bill["period_start"], bill["period_end"], bill["due_date"]) == (
        "Draft",
        "2025-03-01",
        "2025-03-31",
        "2025-03-15",
    )
    assert state["customers"]["C1002"]["bill_ids"][-1] == new[0]
    assert list(state["bills"])[-1] == new[0]  # appended, as tau2 appends to its list
    other = telecom.environment_for()
    other.reset(1)
    other.call("refuel_data", {"customer_id": "C1002", "line_id": "L1004", "gb_amount": 2})
    assert other.snapshot().hash() != state.hash()  # another seed, another id (tau2: a uuid)


def test_telecom_initial_state_and_assertions(telecom: Tau2Domain) -> None:
    env = _telecom_task_env(telecom, next(iter(_telecom_ids(telecom))))
    assertion = _assert("user", "assert_mobile_data_status", expected_status=True)
    assert env.run_assertion(assertion) is False
    with pytest.raises(AttributeError, match="'TelecomUserTools' object has no attribute 'nope'"):
        env.run_function(_fn("user", "nope"))


def _telecom_ids(telecom: Tau2Domain) -> list[str]:
    return [t.id for t in load_tasks(telecom.loaded.tasks_path) if "airplane" in t.id]


def _fn(env_type: str, func: str, **arguments: object) -> EnvFunctionCall:
    return EnvFunctionCall(env_type=env_type, func_name=func, arguments=arguments)  # type: ignore[arg-type]


def _assert(env_type: str, func: str, **arguments: object) -> EnvAssertion:
    return EnvAssertion(env_type=env_type, func_name=func, arguments=arguments)  # type: ignore[arg-type]


# --- mock --------------------------------------------------------------------------------


def test_mock_tools_and_user_inbox(mock: Tau2Domain) -> None:
    env = env_of(mock)
    assert error_of(env, "create_task", {"user_id": "user_9", "title": "x"}) == "Error: User user_9 not found"
    assert env.call("create_task", {"user_id": "user_1", "title": "T"}) == (
        '{"task_id": "task_2", "title": "T", "description": null, "status": "pending"}'
    )
    assert error_of(env, "update_task_status", {"task_id": "task_9", "status": "completed"}) == (
        "Error: Task task_9 not found"
    )
    assert (
        env.call("dismiss_notification", {"notification_id": "notif_1"}, for_="user")
        == "Notification notif_1 dismissed"
    )
    assert env.run_assertion(
        _assert("user", "assert_notification_status", notification_id="notif_1", expected_status="read")
    )
    assert [t.name for t in env.tools("user")] == ["check_notifications", "dismiss_notification"]
    with pytest.raises(InvalidToolCall):
        env.call("dismiss_notification", {}, for_="user")
    with pytest.raises(ToolError):
        env.call("dismiss_notification", {"notification_id": "nope"}, for_="user")


def test_telecom_phone_texts(telecom: Tau2Domain) -> None:
    env = env_of(telecom)
    env.run_function(_fn("user", "break_vpn"))
    assert env.call("check_vpn_status", {}, for_="user") == (
        "VPN is ON and connected. Details: {'server_address': '192.168.1.1', 'protocol': 'OpenVPN', "
        "'server_performance': <PerformanceLevel.POOR: 'poor'>}"
    )
    assert env.call("run_speed_test", {}, for_="user") == (
        "Speed Test Result: 22.00 Mbps (Fair). "
        "Connection is okay for web browsing and some standard definition streaming."
    )
    bad = env.call("set_network_mode_preference", {"mode": "6g"}, for_="user")
    assert bad.startswith(
        "Failed to set network mode: '6g' is not a valid option. "
        "Please use one of: 4g_5g_preferred, 4g_only, 3g_only, 2g_only\nStatus Bar: "
    )
    assert env.call("set_network_mode_preference", {"mode": "3g_only"}, for_="user") == (
        "Preferred Network Mode set to: 3g_only\n"
        "Status Bar: 📶² Fair | 3G | 📱 Data Enabled | 🔒 VPN Connected | 🔋 80%"
    )
    assert env.call(
        "grant_app_permission", {"app_name": "browser", "permission": "Camera"}, for_="user"
    ).startswith(
        "Error. Permission 'camera' not tracked for app 'browser', available permissions: "
        "['sms', 'storage', 'phone', 'network']\n"
    )
