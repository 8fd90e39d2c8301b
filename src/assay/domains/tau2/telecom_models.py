"""The telecom domain's records (agent side: plans, customers, lines, bills, devices;
user side: the phone and the user's surroundings), as tau2's models define them."""

from __future__ import annotations

import datetime
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_START_DATE = datetime.date(2025, 1, 1)
_EST = "(format: YYYY-MM-DD, timezone: EST)"


class _NoExtra(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Address(_NoExtra):
    street: str = Field(description="Street address including house/apartment number")
    city: str = Field(description="City name")
    state: str = Field(description="State or province code (e.g., CA, NY)")
    zip_code: str = Field(description="Postal/ZIP code")


class Plan(_NoExtra):
    plan_id: str = Field(description="Unique identifier for the plan")
    name: str = Field(description="Display name of the plan")
    data_limit_gb: float = Field(description="Monthly data allowance in gigabytes (GB)")
    price_per_month: float = Field(description="Monthly price of the plan in USD")
    data_refueling_price_per_gb: float = Field(description="Price per gigabyte for data refueling")


class DeviceType(str, Enum):
    PHONE = "phone"
    ROUTER = "router"
    TABLET = "tablet"
    WATCH = "watch"
    OTHER = "other"


class Device(_NoExtra):
    device_id: str = Field(description="Unique identifier for the device")
    device_type: DeviceType = Field(description="Type/category of the device")
    model: str = Field(description="Model name/number of the device")
    imei: str | None = Field(None, description="International Mobile Equipment Identity number")
    is_esim_capable: bool = Field(description="Whether the device supports eSIM technology")
    activated: bool = Field(False, description="Whether the device has been activated on the network")
    activation_date: datetime.datetime | None = Field(
        None, description="Date and time when the device was activated"
    )
    last_esim_transfer_date: datetime.datetime | None = Field(
        None, description="Last date an eSIM profile was transferred to this device"
    )


class LineStatus(str, Enum):
    ACTIVE = "Active"
    SUSPENDED = "Suspended"
    PENDING_ACTIVATION = "Pending Activation"
    CLOSED = "Closed"


class Line(_NoExtra):
    line_id: str = Field(description="Unique identifier for the line")
    phone_number: str = Field(description="Phone number associated with the line")
    status: LineStatus = Field(LineStatus.PENDING_ACTIVATION, description="Current status of the line")
    plan_id: str = Field(description="Plan associated with this line")
    device_id: str | None = Field(None, description="Device associated with this line")
    data_used_gb: float = Field(0.0, description="Data used in the current billing cycle in gigabytes (GB)")
    data_refueling_gb: float = Field(
        0.0, description="Data refueled in the current billing cycle in gigabytes (GB)"
    )
    roaming_enabled: bool = Field(False, description="Whether international roaming is enabled for this line")
    contract_end_date: datetime.date | None = Field(
        None, description=f"End date of the current contract {_EST}"
    )
    last_plan_change_date: datetime.date | None = Field(
        None, description=f"Date of the most recent plan change {_EST}"
    )
    last_sim_replacement_date: datetime.date | None = Field(
        None, description=f"Date of the last SIM change {_EST}"
    )
    suspension_start_date: datetime.date | None = Field(None, description=f"Start of the suspension {_EST}")


class LineItem(_NoExtra):
    description: str = Field(description="Descriptive text for the line item")
    amount: float = Field(description="Monetary amount in USD (positive for charges, negative for credits)")
    date: datetime.date = Field(description=f"Date the line item was applied {_EST}")
    item_type: str = Field(
        description="Category of the line item (e.g., Plan Charge, Overage, Fee, Credit, Payment)"
    )


class BillStatus(str, Enum):
    DRAFT = "Draft"
    ISSUED = "Issued"
    AWAITING_PAYMENT = "Awaiting Payment"
    PAID = "Paid"
    OVERDUE = "Overdue"
    DISPUTED = "Disputed"


class Bill(_NoExtra):
    bill_id: str = Field(description="Unique identifier for the bill")
    customer_id: str = Field(description="ID of the customer this bill belongs to")
    period_start: datetime.date = Field(description=f"Start date of the billing period {_EST}")
    period_end: datetime.date = Field(description=f"End date of the billing period {_EST}")
    issue_date: datetime.date = Field(description=f"Date the bill was issued/generated {_EST}")
    total_due: float = Field(description="Total amount due in USD")
    due_date: datetime.date = Field(description=f"Date by which payment is due {_EST}")
    line_items: list[LineItem] = Field(default_factory=list, description="Charges, credits and payments")
    status: BillStatus = Field(BillStatus.DRAFT, description="Current status of the bill")


class AccountStatus(str, Enum):
    ACTIVE = "Active"
    SUSPENDED = "Suspended"
    PENDING_VERIFICATION = "Pending Verification"
    CLOSED = "Closed"


class PaymentMethodType(str, Enum):
    CREDIT_CARD = "Credit Card"
    DEBIT_CARD = "Debit Card"
    PAYPAL = "PayPal"


class PaymentMethod(_NoExtra):
    method_type: PaymentMethodType = Field(description="Type of payment method")
    account_number_last_4: str = Field(description="Last 4 digits of the account number")
    expiration_date: str = Field(
        description="The expiration date of the payment method in the format MM/YYYY"
    )


class Customer(_NoExtra):
    customer_id: str = Field(description="Unique identifier for the customer")
    full_name: str = Field(description="Customer's full name")
    date_of_birth: str = Field(
        description="Customer's date of birth for identity verification (format: YYYY-MM-DD)"
    )
    email: str = Field(description="Customer's email address")
    phone_number: str = Field(description="Customer's primary contact phone number")
    address: Address = Field(description="Customer's billing address")
    account_status: AccountStatus = Field(
        AccountStatus.PENDING_VERIFICATION, description="Current status of the customer account"
    )
    payment_methods: list[PaymentMethod] = Field(default_factory=list, description="Stored payment methods")
    line_ids: list[str] = Field(default_factory=list, description="Phone/data lines owned by this customer")
    bill_ids: list[str] = Field(default_factory=list, description="Bills associated with this customer")
    created_at: datetime.datetime = Field(  # type: ignore[assignment]
        DEFAULT_START_DATE, description="Date and time when the customer account was created"
    )
    last_extension_date: datetime.date | None = Field(
        None, description=f"Date of the last payment extension {_EST}"
    )
    goodwill_credit_used_this_year: float = Field(0.0, description="Goodwill credit used in the current year")


class TelecomDB(_NoExtra):
    """Database interface for telecom domain."""

    plans: list[Plan] = Field(default_factory=list, description="Available service plans")
    customers: list[Customer] = Field(default_factory=list, description="All customers in the system")
    lines: list[Line] = Field(default_factory=list, description="All lines in the system")
    bills: list[Bill] = Field(default_factory=list, description="All bills in the system")
    devices: list[Device] = Field(default_factory=list, description="All devices in the system")


# --- user side: the phone ------------------------------------------------------------


class SimStatus(str, Enum):
    ACTIVE = "active"
    MISSING = "missing"
    LOCKED_PIN = "locked_pin"
    LOCKED_PUK = "locked_puk"


class NetworkTechnology(str, Enum):
    NONE = "none"
    TWO_G = "2G"
    THREE_G = "3G"
    FOUR_G = "4G"
    FIVE_G = "5G"


class NetworkModePreference(str, Enum):
    FOUR_G_5G_PREFERRED = "4g_5g_preferred"
    FOUR_G_ONLY = "4g_only"
    THREE_G_ONLY = "3g_only"
    TWO_G_ONLY = "2g_only"


class SignalStrength(str, Enum):
    NONE = "none"
    POOR = "poor"
    FAIR = "fair"
    GOOD = "good"
    EXCELLENT = "excellent"


class PerformanceLevel(str, Enum):
    UNKNOWN = "unknown"
    POOR = "poor"
    FAIR = "fair"
    GOOD = "good"
    EXCELLENT = "excellent"


class NetworkStatus(str, Enum):
    CONNECTED = "connected"
    SEARCHING = "searching"
    NO_SERVICE = "no_service"
    EMERGENCY_ONLY = "emergency_only"


class APNNames(str, Enum):
    INTERNET = "internet"
    BROKEN = "broken"


class APNSettings(_NoExtra):
    """Represents the configuration for a single Access Point Name (APN)."""

    apn_name: APNNames = Field(APNNames.INTERNET, description="The name identifier for the APN connection.")
    reset_at_reboot: bool = Field(
        False, description="Whether the APN settings will be reset at the next reboot."
    )
    mms_apn: str | None = Field(
        "mms", description="Specific APN name used for MMS traffic, if different from general data."
    )
    mmsc_url: str | None = Field(
        "http://mms.carrier.com/mms/wapenc",
        description="The URL of the Multimedia Messaging Service Center (MMSC). Crucial for MMS.",
    )
    mms_proxy: str | None = Field(
        None, description="The proxy server address required for MMS traffic on some networks."
    )
    mms_port: int | None = Field(
        None, description="The proxy server port required for MMS traffic on some networks."
    )


class VpnDetails(_NoExtra):
    """Holds details about the VPN connection if active."""

    server_address: str | None = Field(None, description="Address of the connected VPN server.")
    protocol: str | None = Field(None, description="VPN protocol being used (e.g., WireGuard, OpenVPN).")
    server_performance: PerformanceLevel = Field(
        default=PerformanceLevel.UNKNOWN,
        validate_default=True,
        description="Estimated performance/latency of the VPN connection.",
    )


class AppPermissions(_NoExtra):
    """Represents the permissions relevant to an application."""

    sms: bool = Field(False, description="Permission to send/read SMS/MMS.")
    storage: bool = Field(False, description="Permission to access device storage.")
    phone: bool = Field(False, description="Permission to make/manage phone calls.")
    network: bool = Field(False, description="Permission to access network state/internet.")


class AppStatus(_NoExtra):
    """Represents the status of a specific application relevant to issues."""

    app_name: str
    permissions: AppPermissions = Field(default_factory=AppPermissions)


def _default_apps() -> dict[str, AppStatus]:
    return {
        "messaging": AppStatus(
            app_name="messaging", permissions=AppPermissions(sms=True, storage=True, phone=True)
        ),
        "browser": AppStatus(app_name="browser", permissions=AppPermissions(network=True, storage=True)),
    }


class MockPhoneAttributes(_NoExtra):
    """Data model representing the state attributes of a mock phone device."""

    sim_card_status: SimStatus = Field(default=SimStatus.ACTIVE, validate_default=True)
    sim_card_missing: bool = False
    airplane_mode: bool = False
    network_signal_strength: SignalStrength = Field(default=SignalStrength.GOOD, validate_default=True)
    network_technology_connected: NetworkTechnology = Field(
        default=NetworkTechnology.FIVE_G, validate_default=True
    )
    network_connection_status: NetworkStatus = Field(default=NetworkStatus.CONNECTED, validate_default=True)
    battery_level: int = 80
    data_enabled: bool = True
    roaming_enabled: bool = False
    network_mode_preference: NetworkModePreference = Field(
        default=NetworkModePreference.FOUR_G_5G_PREFERRED, validate_default=True
    )
    active_apn_settings: APNSettings = Field(default_factory=APNSettings)
    wifi_enabled: bool = False
    wifi_connected: bool = False
    wifi_ssid: str | None = None
    wifi_signal_strength: SignalStrength = Field(default=SignalStrength.NONE, validate_default=True)
    wifi_calling_enabled: bool = False
    wifi_calling_mms_over_wifi: bool = False
    data_saver_mode: bool = False
    vpn_enabled_setting: bool = False
    vpn_connected: bool = False
    vpn_details: VpnDetails | None = None
    app_statuses: dict[str, AppStatus] = Field(default_factory=_default_apps)


class PaymentRequest(_NoExtra):
    """Represents a payment made by the user."""

    bill_id: str = Field(description="The ID of the bill.")
    amount_due: float = Field(description="The amount of the payment in USD.")
    paid: bool = Field(description="Whether the payment has been made.", default=False)


def _default_signal() -> dict[NetworkTechnology, SignalStrength]:
    return {
        NetworkTechnology.TWO_G: SignalStrength.POOR,
        NetworkTechnology.THREE_G: SignalStrength.FAIR,
        NetworkTechnology.FOUR_G: SignalStrength.GOOD,
        NetworkTechnology.FIVE_G: SignalStrength.EXCELLENT,
    }


class UserSurroundings(_NoExtra):
    """Represents the physical surroundings of the user."""

    name: str | None = None
    phone_number: str | None = None
    is_abroad: bool = False
    roaming_allowed: bool = False
    signal_strength: dict[NetworkTechnology, SignalStrength] = Field(default_factory=_default_signal)
    mobile_data_usage_exceeded: bool = False
    line_active: bool = True
    payment_request: PaymentRequest | None = None


class TelecomUserDB(_NoExtra):
    """Database interface for telecom domain."""

    device: MockPhoneAttributes = Field(default_factory=MockPhoneAttributes)
    surroundings: UserSurroundings = Field(default_factory=UserSurroundings)
