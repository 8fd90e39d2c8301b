"""tau2's telecom domain, user side (``TelecomUserTools``): the simulated phone the
user operates (dual control) and how it behaves (network search, speed test, MMS). The
non-tool functions a task's initialization calls are in :mod:`.telecom_phone_setup`,
the user's tools in :mod:`.telecom_user`, the assertions in :mod:`.telecom_assertions`.

The phone is the record ``user_db["device"]`` and the user's situation
``user_db["surroundings"]`` (see :mod:`.store`). One difference from tau2, which it
cannot have deterministically: tau2's ``break_vpn`` degrades a VPN profile object that
is shared by every environment of the Python process, so after the first such task in a
process every later ``connect_vpn`` connects to a poorly performing server; here
``connect_vpn`` always connects to tau2's pristine default (excellent performance).
"""

from __future__ import annotations

from typing import Any

from .store import DbSpec
from .telecom_models import (
    MockPhoneAttributes,
    NetworkModePreference,
    TelecomUserDB,
    UserSurroundings,
)
from .toolkit import Tau2Context, Tau2Toolkit

TELECOM_USER = Tau2Toolkit("TelecomUserTools", caller="user")

USER_DB_SPEC = DbSpec(
    TelecomUserDB,
    singletons={"device": MockPhoneAttributes, "surroundings": UserSurroundings},
    singleton_table="user_db",
)

PREFERENCES = [m.value for m in NetworkModePreference]
DEFAULT_VPN = {"server_address": "192.168.1.1", "protocol": "OpenVPN", "server_performance": "excellent"}
_SIGNAL_ICONS = {
    "none": "\U0001f4f5 No Signal",
    "poor": "\U0001f4f6\xb9 Poor",
    "fair": "\U0001f4f6\xb2 Fair",
    "good": "\U0001f4f6\xb3 Good",
    "excellent": "\U0001f4f6\u2074 Excellent",
}
_TECH_SPEEDS = {
    "2G": (0.1, 0.4),
    "3G": (1.0, 5.0),
    "4G": (10.0, 100.0),
    "5G": (50.0, 500.0),
    "none": (0.0, 0.0),
}
_SIGNAL_FACTORS = {"poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0, "none": 0.0}
SIM_TEXTS = {
    "active": "Your SIM card is active and working.",
    "missing": "No SIM card detected in the phone.",
    "locked_pin": "The SIM card is locked with a PIN code.",
    "locked_puk": "The SIM card is locked with a PUK code.",
}
ADVICE = {
    "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
    "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
    "Fair": "Connection is okay for web browsing and some standard definition streaming.",
    "Good": "Connection is good for most activities, including HD streaming.",
    "Excellent": "Connection is very fast.",
}


def device(ctx: Tau2Context) -> dict[str, Any]:
    return ctx.get("user_db", "device")  # type: ignore[return-value]


def surroundings(ctx: Tau2Context) -> dict[str, Any]:
    return ctx.get("user_db", "surroundings")  # type: ignore[return-value]


def on_off(flag: Any) -> str:
    return "ON" if flag else "OFF"


def with_status_bar(ctx: Tau2Context, text: str) -> str:
    return f"{text}\nStatus Bar: {status_bar(ctx)}"


def _no_service(device: dict[str, Any]) -> None:
    device["network_connection_status"] = "no_service"
    device["network_technology_connected"] = "none"
    device["network_signal_strength"] = "none"


# --- core simulation -------------------------------------------------------------------


def status_bar(ctx: Tau2Context) -> str:
    """The phone's status bar line (``_check_status_bar``)."""
    d = device(ctx)
    indicators = []
    if d["airplane_mode"]:
        indicators.append("\u2708\ufe0f Airplane Mode")
    else:
        indicators.append(_SIGNAL_ICONS.get(d["network_signal_strength"], "\U0001f4f5 No Signal"))
        if d["network_technology_connected"] != "none":
            indicators.append(d["network_technology_connected"])
        if d["data_enabled"] and d["network_technology_connected"] != "none":
            indicators.append("\U0001f4f1 Data Enabled")
            if d["data_saver_mode"]:
                indicators.append("\U0001f53d Data Saver")
        else:
            indicators.append("\U0001f4f5 Data Disabled")
    if d["wifi_enabled"] and d["wifi_connected"]:
        indicators.append(
            f"\U0001f4e1 Connected to {d['wifi_ssid']}" if d["wifi_ssid"] else "\U0001f4e1 Enabled"
        )
    if d["vpn_connected"]:
        indicators.append("\U0001f512 VPN Connected")
    indicators.append(f"\U0001f50b {d['battery_level']}%")
    return " | ".join(indicators)


def sim_status(ctx: Tau2Context) -> str:
    d = device(ctx)
    return "missing" if d["sim_card_missing"] else d["sim_card_status"]


def mobile_data_working(ctx: Tau2Context) -> bool:
    """Mobile data works: no airplane mode, signal and service, roaming allowed when
    abroad, data enabled, data limit not exceeded."""
    d, s = device(ctx), surroundings(ctx)
    if d["airplane_mode"] or d["network_signal_strength"] == "none":
        return False
    if d["network_connection_status"] == "no_service":
        return False
    if s["is_abroad"] and (not d["roaming_enabled"] or not s["roaming_allowed"]):
        return False
    if not d["data_enabled"]:
        return False
    return not s["mobile_data_usage_exceeded"]


def speed_test(ctx: Tau2Context) -> tuple[float | None, str]:
    """The simulated download speed and its description (``_run_speed_test``)."""
    if not mobile_data_working(ctx):
        return None, "No Connection"
    d = device(ctx)
    vpn = d["vpn_details"]
    factor = 0.1 if d["vpn_connected"] and vpn and vpn["server_performance"] == "poor" else 1.0
    if d["data_saver_mode"]:
        factor *= 0.2
    low, high = _TECH_SPEEDS.get(d["network_technology_connected"], (0.0, 0.0))
    signal = _SIGNAL_FACTORS.get(d["network_signal_strength"], 0.0)
    speed = round((low + high) / 2.0 * signal * factor, 2)
    if speed < 1:
        return speed, "Very Poor"
    if speed < 5:
        return speed, "Poor"
    if speed < 25:
        return speed, "Fair"
    if speed < 100:
        return speed, "Good"
    return speed, "Excellent"


def can_send_mms_now(ctx: Tau2Context) -> bool:
    d = device(ctx)
    if not mobile_data_working(ctx):
        return False
    if d["network_technology_connected"] == "2G":
        return False
    if d["wifi_calling_enabled"] and d["wifi_calling_mms_over_wifi"]:
        return False
    if d["active_apn_settings"]["mmsc_url"] is None:
        return False
    app = d["app_statuses"].get("messaging")
    if app is None:
        return False
    return app["permissions"]["storage"] and app["permissions"]["sms"]


@TELECOM_USER.function
def simulate_network_search(ctx: Tau2Context) -> None:
    """Re-evaluate the cellular connection from the SIM, the mode preference, the
    signal around the user, airplane mode, the APN and whether the line is active."""
    d, s = device(ctx), surroundings(ctx)
    status = sim_status(ctx)
    signals = s["signal_strength"]
    if status == "active":
        d["network_connection_status"] = "connected"
        pref = d["network_mode_preference"]
        tech = (
            {"4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}.get(pref, "4G")
            if isinstance(pref, str)
            else "4G"
        )
        if pref == "4g_5g_preferred":
            five_g = signals.get("5G", "none")
            tech = "4G" if five_g == "none" else "5G"
        d["network_technology_connected"] = tech
        d["network_signal_strength"] = signals.get(tech, "none")
    else:
        _no_service(d)
    if d["airplane_mode"]:
        _no_service(d)
    if d["active_apn_settings"]["apn_name"] == "broken":
        _no_service(d)
    if not s["line_active"]:
        _no_service(d)


def toggle(ctx: Tau2Context, field: str, search: bool) -> bool:
    d = device(ctx)
    d[field] = not d[field]
    if search:
        simulate_network_search(ctx)
    return d[field]


def toggle_airplane(ctx: Tau2Context) -> bool:
    d = device(ctx)
    was_on = d["airplane_mode"]
    d["airplane_mode"] = not was_on
    if was_on:
        d["network_connection_status"] = "searching"
        if d["wifi_enabled"]:
            d["wifi_connected"], d["wifi_ssid"], d["wifi_signal_strength"] = False, None, "none"
    else:
        d["wifi_connected"], d["wifi_ssid"], d["wifi_signal_strength"] = False, None, "none"
        if d["vpn_connected"]:
            disconnect(ctx)
    simulate_network_search(ctx)
    return d["airplane_mode"]


def disconnect(ctx: Tau2Context) -> bool:
    d = device(ctx)
    if not d["vpn_connected"]:
        return False
    d["vpn_connected"], d["vpn_details"] = False, None
    return True


def connect(ctx: Tau2Context) -> bool | None:
    d = device(ctx)
    if d["vpn_connected"]:
        return None
    d["vpn_connected"], d["vpn_details"] = True, dict(DEFAULT_VPN)
    return True


def granted(app: dict[str, Any]) -> list[str]:
    return [name.replace("_", " ").lower() for name, allowed in app["permissions"].items() if allowed]


__all__ = ["TELECOM_USER", "USER_DB_SPEC", "status_bar"]
