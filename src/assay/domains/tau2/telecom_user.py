"""tau2's telecom domain, user side: the tools the user calls on their phone
(``TelecomUserTools``' tools, dual control). The phone's state and behaviour live in
:mod:`.telecom_phone`."""

from __future__ import annotations

from typing import Any

from .common import as_record
from .store import dump
from .telecom_models import APNSettings, NetworkModePreference
from .telecom_phone import (
    ADVICE,
    PREFERENCES,
    SIM_TEXTS,
    TELECOM_USER,
    can_send_mms_now,
    connect,
    device,
    disconnect,
    granted,
    on_off,
    sim_status,
    simulate_network_search,
    speed_test,
    status_bar,
    surroundings,
    toggle,
    toggle_airplane,
    with_status_bar,
)
from .toolkit import Tau2Context

_PERFORMANCE_NAMES = {
    "unknown": "UNKNOWN",
    "poor": "POOR",
    "fair": "FAIR",
    "good": "GOOD",
    "excellent": "EXCELLENT",
}


def _details_repr(details: dict[str, Any]) -> str:
    """``repr(VpnDetails.model_dump())`` as tau2 prints it (the enum member's repr)."""
    parts = []
    for key, value in details.items():
        if key == "server_performance" and value in _PERFORMANCE_NAMES:
            parts.append(f"{key!r}: <PerformanceLevel.{_PERFORMANCE_NAMES[value]}: {value!r}>")
        else:
            parts.append(f"{key!r}: {value!r}")
    return "{" + ", ".join(parts) + "}"


@TELECOM_USER.tool()
def check_status_bar(ctx: Tau2Context) -> str:
    """Shows what icons are currently visible in your phone's status bar (the area at the top of the screen). Displays network signal strength, mobile data status (enabled, disabled, data saver), Wi-Fi status, and battery level."""
    return f"Status Bar: {status_bar(ctx)}"


@TELECOM_USER.tool()
def check_network_status(ctx: Tau2Context) -> str:
    """Checks your phone's connection status to cellular networks and Wi-Fi. Shows airplane mode status, signal strength, network type, whether mobile data is enabled, and whether data roaming is enabled."""
    d = device(ctx)
    lines = [
        f"Airplane Mode: {on_off(d['airplane_mode'])}",
        f"SIM Card Status: {sim_status(ctx)}",
        f"Cellular Connection: {d['network_connection_status']}",
        f"Cellular Signal: {d['network_signal_strength']}",
        f"Cellular Network Type: {d['network_technology_connected']}",
        f"Mobile Data Enabled: {'Yes' if d['data_enabled'] else 'No'}",
        f"Data Roaming Enabled: {'Yes' if d['roaming_enabled'] else 'No'}",
        f"Wi-Fi Radio: {on_off(d['wifi_enabled'])}",
        f"Wi-Fi Connected: {'Yes' if d['wifi_connected'] else 'No'}",
    ]
    if d["wifi_connected"]:
        lines.append(f"Connected Wi-Fi Network: {d['wifi_ssid']}")
    return "\n".join(lines)


@TELECOM_USER.tool()
def check_network_mode_preference(ctx: Tau2Context) -> str:
    """Shows the current network mode preference."""
    return f"Network Mode Preference: {device(ctx)['network_mode_preference']}"


@TELECOM_USER.tool(write=True)
def set_network_mode_preference(ctx: Tau2Context, mode: NetworkModePreference | str) -> str:
    """Changes the type of cellular network your phone prefers to connect to (e.g., 5G, LTE/4G, 3G). Higher-speed networks (LTE/5G) provide faster data but may use more battery."""
    if isinstance(mode, str) and mode not in PREFERENCES:
        return with_status_bar(
            ctx,
            f"Failed to set network mode: '{mode}' is not a valid option. Please use one of: {', '.join(PREFERENCES)}",
        )
    device(ctx)["network_mode_preference"] = as_record(mode)
    simulate_network_search(ctx)
    if mode is None:
        return with_status_bar(
            ctx,
            f"Failed to set network mode: 'None' is not a valid option. Please use one of: {', '.join(PREFERENCES)}",
        )
    if not isinstance(mode, str):
        raise AttributeError(f"'{type(mode).__name__}' object has no attribute 'value'")
    return with_status_bar(ctx, f"Preferred Network Mode set to: {mode}")


@TELECOM_USER.tool()
def run_speed_test(ctx: Tau2Context) -> str:
    """Measures your current internet connection speed (download speed). Provides information about connection quality and what activities it can support."""
    speed, description = speed_test(ctx)
    if speed is None:
        return f"Speed test failed: {description or 'Could not determine speed'}."
    return f"Speed Test Result: {speed:.2f} Mbps ({description}). {ADVICE.get(description, '')}"


@TELECOM_USER.tool(write=True)
def toggle_airplane_mode(ctx: Tau2Context) -> str:
    """Toggles Airplane Mode ON or OFF. When ON, it disconnects all wireless communications including cellular, Wi-Fi, and Bluetooth.
    Returns the new state of airplane_mode.
    """
    return with_status_bar(ctx, f"Airplane Mode is now {on_off(toggle_airplane(ctx))}.")


@TELECOM_USER.tool()
def check_sim_status(ctx: Tau2Context) -> str:
    """Checks if your SIM card is working correctly and displays its current status. Shows if the SIM is active, missing, or locked with a PIN or PUK code."""
    status = sim_status(ctx)
    return SIM_TEXTS.get(status, f"Unknown SIM status: {status}")


@TELECOM_USER.tool(write=True)
def reseat_sim_card(ctx: Tau2Context) -> str:
    """Simulates removing and reinserting your SIM card. This can help resolve recognition issues."""
    device(ctx)["sim_card_missing"] = False
    simulate_network_search(ctx)
    return with_status_bar(ctx, "SIM card re-seated successfully.")


@TELECOM_USER.tool(write=True)
def toggle_data(ctx: Tau2Context) -> str:
    """Toggles your phone's mobile data connection ON or OFF. Controls whether your phone can use cellular data for internet access when Wi-Fi is unavailable.
    Returns the new data connection status.
    """
    return with_status_bar(ctx, f"Mobile Data is now {on_off(toggle(ctx, 'data_enabled', True))}.")


@TELECOM_USER.tool(write=True)
def toggle_roaming(ctx: Tau2Context) -> str:
    """Toggles Data Roaming ON or OFF. When ON, your phone can use data networks in areas outside your carrier's coverage.
    Returns the new data roaming status.
    """
    return with_status_bar(ctx, f"Data Roaming is now {on_off(toggle(ctx, 'roaming_enabled', True))}.")


@TELECOM_USER.tool()
def check_data_restriction_status(ctx: Tau2Context) -> str:
    """Checks if your phone has any data-limiting features active. Shows if Data Saver mode is on."""
    if device(ctx)["data_saver_mode"]:
        return "Data Saver mode is ON (limits data usage)."
    return "Data Saver mode is OFF."


@TELECOM_USER.tool(write=True)
def toggle_data_saver_mode(ctx: Tau2Context) -> str:
    """Toggles Data Saver mode ON or OFF. When ON, it reduces data usage, which may affect data speed.
    Returns the new data saver mode status.
    """
    return with_status_bar(ctx, f"Data Saver Mode is now {on_off(toggle(ctx, 'data_saver_mode', False))}.")


@TELECOM_USER.tool()
def check_apn_settings(ctx: Tau2Context) -> str:
    """Checks the technical APN settings your phone uses to connect to your carrier's mobile data network. Shows current APN name and MMSC URL for picture messaging."""
    apn = device(ctx)["active_apn_settings"]
    name = apn["apn_name"] or "Not Set"
    url = apn["mmsc_url"] or "Not Set"
    return (
        f"Current APN Name: {name}\nMMSC URL (for picture messages): {url}\n"
        "(These are technical settings, usually best left unchanged.)"
    )


@TELECOM_USER.tool(write=True)
def set_apn_settings(ctx: Tau2Context, apn_settings: APNSettings | dict) -> str:
    """Sets the APN settings for the phone."""
    if isinstance(apn_settings, dict):
        apn_settings = APNSettings(**apn_settings)
    device(ctx)["active_apn_settings"] = as_record(apn_settings)
    if not isinstance(apn_settings, APNSettings):
        raise AttributeError(f"'{type(apn_settings).__name__}' object has no attribute 'apn_name'")
    update = f"APN settings set to: {apn_settings.apn_name.value}"
    simulate_network_search(ctx)
    return with_status_bar(ctx, update)


@TELECOM_USER.tool(write=True)
def reset_apn_settings(ctx: Tau2Context) -> str:
    """Resets your APN settings to the default settings."""
    device(ctx)["active_apn_settings"]["reset_at_reboot"] = True
    simulate_network_search(ctx)
    return with_status_bar(ctx, "APN settings will reset at reboot.")


@TELECOM_USER.tool()
def check_wifi_status(ctx: Tau2Context) -> str:
    """Checks your Wi-Fi connection status. Shows if Wi-Fi is turned on, which network you're connected to (if any), and the signal strength."""
    d = device(ctx)
    if not d["wifi_enabled"]:
        return "Wi-Fi is turned OFF."
    if d["wifi_connected"]:
        return (
            f"Wi-Fi is ON and connected to '{d['wifi_ssid']}'. Signal strength: {d['wifi_signal_strength']}."
        )
    return "Wi-Fi is ON but not connected to any network."


@TELECOM_USER.tool(write=True)
def toggle_wifi(ctx: Tau2Context) -> str:
    """Toggles your phone's Wi-Fi radio ON or OFF. Controls whether your phone can discover and connect to wireless networks for internet access.
    Returns the new Wi-Fi status.
    """
    d = device(ctx)
    if d["airplane_mode"]:
        return with_status_bar(ctx, "Cannot change Wi-Fi settings while Airplane Mode is ON.")
    d["wifi_enabled"] = not d["wifi_enabled"]
    if not d["wifi_enabled"]:
        d["wifi_connected"], d["wifi_ssid"], d["wifi_signal_strength"] = False, None, "none"
    return with_status_bar(ctx, f"Wi-Fi is now {on_off(d['wifi_enabled'])}.")


@TELECOM_USER.tool()
def check_wifi_calling_status(ctx: Tau2Context) -> str:
    """Checks if Wi-Fi Calling is enabled on your device. This feature allows you to make and receive calls over a Wi-Fi network instead of using the cellular network."""
    return f"Wi-Fi Calling is currently turned {on_off(device(ctx)['wifi_calling_enabled'])}."


@TELECOM_USER.tool(write=True)
def toggle_wifi_calling(ctx: Tau2Context) -> str:
    """Toggles Wi-Fi Calling ON or OFF. This feature allows you to make and receive calls over Wi-Fi instead of the cellular network, which can help in areas with weak cellular signal.
    Returns the new Wi-Fi Calling status.
    """
    return with_status_bar(ctx, f"Wi-Fi Calling is now {on_off(toggle(ctx, 'wifi_calling_enabled', False))}.")


@TELECOM_USER.tool()
def check_vpn_status(ctx: Tau2Context) -> str:
    """Checks if you're using a VPN (Virtual Private Network) connection. Shows if a VPN is active, connected, and displays any available connection details."""
    d = device(ctx)
    if d["vpn_connected"]:
        details = d["vpn_details"]
        if details:
            return f"VPN is ON and connected. Details: {_details_repr(details)}"
        return "VPN is ON and connected (no specific details available)."
    if d["vpn_enabled_setting"]:
        return "VPN is turned ON in settings, but currently not connected."
    return "VPN is turned OFF."


@TELECOM_USER.tool(write=True)
def connect_vpn(ctx: Tau2Context) -> str:
    """Connects to your VPN (Virtual Private Network)."""
    if connect(ctx) is None:
        return "VPN already connected."
    return with_status_bar(ctx, "VPN connected successfully.")


@TELECOM_USER.tool(write=True)
def disconnect_vpn(ctx: Tau2Context) -> str:
    """Disconnects any active VPN (Virtual Private Network) connection. Stops routing your internet traffic through a VPN server, which might affect connection speed or access to content."""
    done = disconnect(ctx)
    return with_status_bar(
        ctx, "VPN disconnected successfully." if done else "No active VPN connection to disconnect."
    )


@TELECOM_USER.tool()
def check_installed_apps(ctx: Tau2Context) -> str:
    """Returns the name of all installed apps on the phone."""
    return f"The following apps are installed on the phone: {', '.join(device(ctx)['app_statuses'])}"


@TELECOM_USER.tool()
def check_app_status(ctx: Tau2Context, app_name: str) -> str:
    """Checks detailed information about a specific app. Shows its permissions and background data usage settings."""
    app = device(ctx)["app_statuses"].get(app_name)
    if not app:
        return f"App '{app_name}' not found on this phone."
    lines = [f"Status for App: {app_name}"]
    allowed = granted(app)
    if not allowed:
        lines.append(" - Permissions: None granted.")
    else:
        lines.append(" - Permissions Granted:")
        lines.extend(f"   - {perm}" for perm in allowed)
    return "\n".join(lines)


@TELECOM_USER.tool()
def check_app_permissions(ctx: Tau2Context, app_name: str) -> str:
    """Checks what permissions a specific app currently has. Shows if the app has access to features like storage, camera, location, etc."""
    app = device(ctx)["app_statuses"].get(app_name)
    if not app:
        return f"App '{app_name}' not found on this phone."
    allowed = granted(app)
    if not allowed:
        return f"App '{app_name}' currently has no permissions granted."
    return f"App '{app_name}' has permission for: {', '.join(allowed)}."


@TELECOM_USER.tool(write=True)
def grant_app_permission(ctx: Tau2Context, app_name: str, permission: str) -> str:
    """Gives a specific permission to an app (like access to storage, camera, or location). Required for some app functions to work properly.

    Args:
        app_name: The name of the app to grant the permission to.
        permission: The permission to grant, should be lowercase.
    """
    app = device(ctx)["app_statuses"].get(app_name)
    permission = permission.lower()
    if not app:
        success, message = False, f"App '{app_name}' not found. Cannot grant permission."
    elif permission not in app["permissions"]:
        available = list(app["permissions"])
        success = False
        message = (
            f"Permission '{permission}' not tracked for app '{app_name}', available permissions: {available}"
        )
    else:
        app["permissions"][permission] = True
        success, message = True, f"Permission '{permission}' granted to app '{app_name}'."
    return with_status_bar(ctx, f"{'Success. ' if success else 'Error. '}{message}")


@TELECOM_USER.tool()
def can_send_mms(ctx: Tau2Context) -> str:
    """Checks if the default messaging app can send MMS messages."""
    if can_send_mms_now(ctx):
        return "Your messaging app can send MMS messages."
    return "Your messaging app cannot send MMS messages."


@TELECOM_USER.tool(write=True)
def reboot_device(ctx: Tau2Context) -> str:
    """Restarts your phone completely. This can help resolve many temporary software glitches by refreshing all running services and connections."""
    d = device(ctx)
    lines = []
    if d["active_apn_settings"]["reset_at_reboot"]:
        lines.append("Resetting APN settings...")
        d["active_apn_settings"] = dump(APNSettings())
    lines.append("Restarting network services...")
    d["network_connection_status"] = "searching"
    simulate_network_search(ctx)
    return with_status_bar(ctx, "\n".join(lines))


@TELECOM_USER.tool()
def check_payment_request(ctx: Tau2Context) -> str:
    """
    Checks if the agent has sent you a payment request.
    """
    request = surroundings(ctx)["payment_request"]
    if request is None:
        return "No payment request has been made."
    return f"You have a payment request for bill {request['bill_id']} of {request['amount_due']} USD."


@TELECOM_USER.tool(write=True)
def make_payment(ctx: Tau2Context) -> str:
    """
    Makes a payment for the bill that the agent has sent you.
    """
    request = surroundings(ctx)["payment_request"]
    if request is None:
        return "You do not have a payment request."
    request["paid"] = True
    return f"Payment of {request['amount_due']} USD has been made for bill {request['bill_id']}."
