"""tau2's telecom domain: the functions a task's ``env_assertions`` call, on the agent
side (``TelecomTools.assert_*``) and on the user side (``TelecomUserTools.assert_*``).
Each returns a bool computed from the state; :meth:`~.environment.Tau2Environment.run_assertion`
compares it with the assertion's ``assert_value``."""

from __future__ import annotations

from .telecom import TELECOM, get_bill_by_id, get_customer, get_target_line
from .telecom_phone import (
    TELECOM_USER,
    can_send_mms_now,
    device,
    mobile_data_working,
    speed_test,
    surroundings,
)
from .toolkit import Tau2Context

# --- agent side ------------------------------------------------------------------------


@TELECOM.function
def assert_data_refueling_amount(
    ctx: Tau2Context, customer_id: str, line_id: str, expected_amount: float
) -> bool:
    """The line's refueled data equals ``expected_amount`` (within 1e-6 GB)."""
    return abs(get_target_line(ctx, customer_id, line_id)["data_refueling_gb"] - expected_amount) < 1e-6


@TELECOM.function
def assert_line_status(ctx: Tau2Context, customer_id: str, line_id: str, expected_status: str) -> bool:
    """The line's status is ``expected_status`` (e.g. ``"Active"``)."""
    return get_target_line(ctx, customer_id, line_id)["status"] == expected_status


@TELECOM.function
def assert_overdue_bill_exists(ctx: Tau2Context, customer_id: str, overdue_bill_id: str) -> bool:
    """The customer has the bill and it is overdue (raises otherwise, as tau2 does)."""
    customer = get_customer(ctx, customer_id)
    if overdue_bill_id not in customer["bill_ids"]:
        raise ValueError(f"Overdue bill {overdue_bill_id} not found")
    if get_bill_by_id(ctx, overdue_bill_id)["status"] != "Overdue":
        raise ValueError(f"Overdue bill {overdue_bill_id} is not overdue")
    return True


@TELECOM.function
def assert_no_overdue_bill(ctx: Tau2Context, overdue_bill_id: str) -> bool:
    """The bill is gone or paid."""
    try:
        return get_bill_by_id(ctx, overdue_bill_id)["status"] == "Paid" or False
    except ValueError:
        return True


# --- user side -------------------------------------------------------------------------


@TELECOM_USER.function
def assert_airplane_mode_status(ctx: Tau2Context, expected_status: bool) -> bool:
    """Airplane mode is ``expected_status``."""
    return device(ctx)["airplane_mode"] == expected_status


@TELECOM_USER.function
def assert_service_status(ctx: Tau2Context, expected_status: str) -> bool:
    """The cellular connection status is ``expected_status`` (a NetworkStatus value)."""
    if expected_status not in ("connected", "searching", "no_service", "emergency_only"):
        raise ValueError(f"{expected_status!r} is not a valid NetworkStatus")
    return device(ctx)["network_connection_status"] == expected_status


@TELECOM_USER.function
def assert_mobile_data_status(ctx: Tau2Context, expected_status: bool) -> bool:
    """Mobile data works (``True``) or not."""
    return mobile_data_working(ctx) == expected_status


@TELECOM_USER.function
def assert_mobile_roaming_status(ctx: Tau2Context, expected_status: bool) -> bool:
    """The phone's data roaming setting is ``expected_status``."""
    return device(ctx)["roaming_enabled"] == expected_status


@TELECOM_USER.function
def assert_mobile_data_saver_mode_status(ctx: Tau2Context, expected_status: bool) -> bool:
    """Data saver mode is ``expected_status``."""
    return device(ctx)["data_saver_mode"] == expected_status


@TELECOM_USER.function
def assert_internet_speed(ctx: Tau2Context, expected_speed: float, expected_desc: str | None = None) -> bool:
    """The speed test gives at least ``expected_speed`` Mbps (and the description, if given)."""
    speed, desc = speed_test(ctx)
    speed = speed or 0.0
    if expected_desc is None:
        return speed >= expected_speed
    return speed >= expected_speed and desc.lower() == expected_desc.lower()


@TELECOM_USER.function
def assert_internet_not_excellent(ctx: Tau2Context) -> bool:
    """The speed test is not excellent."""
    return speed_test(ctx)[1].lower() != "excellent"


@TELECOM_USER.function
def assert_can_send_mms(ctx: Tau2Context, expected_status: bool) -> bool:
    """The messaging app can send MMS (``True``) or not."""
    return can_send_mms_now(ctx) == expected_status


@TELECOM_USER.function
def assert_mobile_data_usage_exceeded(ctx: Tau2Context, expected_status: bool) -> bool:
    """The user is over their data limit (``True``) or not."""
    return surroundings(ctx)["mobile_data_usage_exceeded"] == expected_status
