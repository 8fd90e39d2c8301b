"""tau2's telecom domain, user side: the functions of ``TelecomUserTools`` that are not
offered as tools, which a task's initialization calls to set up the user's phone and
situation (the user's name and location, airplane mode, a missing or locked SIM, data,
roaming, a broken APN or VPN, an app's permissions). The phone they change is in
:mod:`.telecom_phone`."""

from __future__ import annotations

from typing import Literal

from .common import as_record
from .telecom_phone import (
    TELECOM_USER,
    can_send_mms_now,
    connect,
    device,
    on_off,
    simulate_network_search,
    surroundings,
    toggle,
    toggle_airplane,
)
from .toolkit import Tau2Context

# --- tools, in TelecomUserTools' order -----------------------------------------------


@TELECOM_USER.function
def set_user_info(ctx: Tau2Context, name: str, phone_number: str) -> None:
    """Sets the user's name and phone number."""
    s = surroundings(ctx)
    s["name"], s["phone_number"] = as_record(name), as_record(phone_number)


@TELECOM_USER.function
def set_user_location(ctx: Tau2Context, abroad: bool) -> None:
    """Sets the user's location to abroad or not."""
    surroundings(ctx)["is_abroad"] = as_record(abroad)


@TELECOM_USER.function
def turn_airplane_mode_on(ctx: Tau2Context) -> str:
    """Turns Airplane Mode ON."""
    if not toggle_airplane(ctx):
        toggle_airplane(ctx)
    return "Airplane Mode is now ON."


@TELECOM_USER.function
def turn_airplane_mode_off(ctx: Tau2Context) -> str:
    """Turns Airplane Mode OFF."""
    if toggle_airplane(ctx):
        toggle_airplane(ctx)
    return "Airplane Mode is now OFF."


@TELECOM_USER.function
def unseat_sim_card(ctx: Tau2Context) -> str:
    """Un-seats the SIM card by removing it. This is fixed by calling reseat_sim_card()."""
    device(ctx)["sim_card_missing"] = True
    simulate_network_search(ctx)
    return "SIM card un-seated successfully."


@TELECOM_USER.function
def lock_sim_card(ctx: Tau2Context, mode: Literal["pin", "puk"]) -> str:
    """Locks the SIM card by setting the PIN. This cannot be fixed by calling a tool."""
    if mode == "pin":
        device(ctx)["sim_card_status"] = "locked_pin"
    elif mode == "puk":
        device(ctx)["sim_card_status"] = "locked_puk"
    simulate_network_search(ctx)
    return f"SIM card locked successfully in {mode} mode."


@TELECOM_USER.function
def turn_data_on(ctx: Tau2Context) -> str:
    """Turns Data ON."""
    device(ctx)["data_enabled"] = True
    return "Data connection restored."


@TELECOM_USER.function
def turn_data_off(ctx: Tau2Context) -> str:
    """Turns Data OFF."""
    if toggle(ctx, "data_enabled", True):
        toggle(ctx, "data_enabled", True)
    return "Data connection broken."


@TELECOM_USER.function
def turn_roaming_on(ctx: Tau2Context) -> str:
    """Turns Data Roaming ON."""
    if not toggle(ctx, "roaming_enabled", True):
        toggle(ctx, "roaming_enabled", True)
    return "Data Roaming is now ON."


@TELECOM_USER.function
def turn_roaming_off(ctx: Tau2Context) -> str:
    """Turns Data Roaming OFF."""
    if toggle(ctx, "roaming_enabled", True):
        toggle(ctx, "roaming_enabled", True)
    return "Data Roaming is now OFF."


@TELECOM_USER.function
def turn_data_saver_mode_on(ctx: Tau2Context) -> str:
    """Turns Data Saver mode ON."""
    if not toggle(ctx, "data_saver_mode", False):
        toggle(ctx, "data_saver_mode", False)
    return "Data Saver Mode is now ON."


@TELECOM_USER.function
def turn_data_saver_mode_off(ctx: Tau2Context) -> str:
    """Turns Data Saver mode OFF."""
    if toggle(ctx, "data_saver_mode", False):
        toggle(ctx, "data_saver_mode", False)
    return "Data Saver Mode is now OFF."


@TELECOM_USER.function
def break_apn_settings(ctx: Tau2Context) -> str:
    """Breaks the APN settings. This is fixed by calling reset_apn_settings()."""
    device(ctx)["active_apn_settings"]["apn_name"] = "broken"
    simulate_network_search(ctx)
    if device(ctx)["network_connection_status"] != "no_service":
        raise AssertionError()
    return "APN settings broken. Please call reset_apn_settings() to fix."


@TELECOM_USER.function
def break_apn_mms_setting(ctx: Tau2Context) -> str:
    """Breaks the APN MMS setting. This is fixed by calling reset_apn_settings()."""
    device(ctx)["active_apn_settings"]["mmsc_url"] = None
    if can_send_mms_now(ctx):
        raise AssertionError()
    return "APN MMS setting broken. Please call reset_apn_settings() to fix."


@TELECOM_USER.function
def set_wifi_calling(ctx: Tau2Context, enabled: bool, mms_over_wifi: bool | None = None) -> str:
    """Set the Wi-Fi Calling setting. Set MMS over WIFI accordingly if provided."""
    d = device(ctx)
    if d["wifi_calling_enabled"] != enabled:
        toggle(ctx, "wifi_calling_enabled", False)
    message = f"Wi-Fi Calling is now {on_off(enabled)}."
    if mms_over_wifi is not None:
        d["wifi_calling_mms_over_wifi"] = as_record(mms_over_wifi)
        message += f"\nMMS over Wi-Fi is now {on_off(mms_over_wifi)}."
    return message


@TELECOM_USER.function
def break_vpn(ctx: Tau2Context) -> str:
    """Breaks the VPN connection. Results in a slow mobile data."""
    connect(ctx)
    details = device(ctx)["vpn_details"]
    if details is None:
        raise AttributeError("'NoneType' object has no attribute 'server_performance'")
    details["server_performance"] = "poor"
    return "VPN connection broken."


@TELECOM_USER.function
def remove_app_permission(ctx: Tau2Context, app_name: str, permission: str) -> tuple[bool, str]:
    """Removes a specific permission from an app."""
    app = device(ctx)["app_statuses"].get(app_name)
    permission = permission.lower()
    if not app:
        return False, f"App '{app_name}' not found. Cannot remove permission."
    if permission not in app["permissions"]:
        return False, f"Permission '{permission}' not tracked for app '{app_name}'."
    app["permissions"][permission] = False
    return True, f"Permission '{permission}' removed from app '{app_name}'."


__all__: list[str] = []
