"""tau2's telecom domain, agent side (``TelecomTools``), and the environment's
synchronisation of the user's phone with the agent's database after every call.

"Today" is tau2's fixed 2025-02-25. tau2 names a new draft bill ``B`` + 8 random hex
digits from ``uuid4``; here they come from the environment's seeded generator, so a
trial is reproducible (two environments with different seeds still disagree, as two
tau2 environments always do).
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import Any

from .common import TRANSFER_DOC, doc
from .render import Model
from .store import DbSpec, TableSpec, dump
from .telecom_models import (
    Bill,
    Customer,
    Device,
    Line,
    PaymentRequest,
    Plan,
    TelecomDB,
)
from .toolkit import Tau2Context, Tau2Toolkit

TELECOM = Tau2Toolkit(
    "TelecomTools",
    order=(
        "get_customer_by_phone",
        "get_customer_by_id",
        "get_customer_by_name",
        "get_details_by_id",
        "suspend_line",
        "resume_line",
        "get_bills_for_customer",
        "send_payment_request",
        "get_data_usage",
        "enable_roaming",
        "disable_roaming",
        "transfer_to_human_agents",
        "refuel_data",
    ),
)
TODAY = date(2025, 2, 25)

DB_SPEC = DbSpec(
    TelecomDB,
    (
        TableSpec("plans", "plan_id", Plan, ordered=True),
        TableSpec("customers", "customer_id", Customer, ordered=True),
        TableSpec("lines", "line_id", Line, ordered=True),
        TableSpec("bills", "bill_id", Bill, ordered=True),
        TableSpec("devices", "device_id", Device, ordered=True),
    ),
)


def policy(folder: Path, policy_type: str = "manual") -> str:
    """tau2's telecom policy: the main policy plus the tech-support manual (or workflow)."""
    main = (folder / "main_policy.md").read_text(encoding="utf-8")
    support = (folder / f"tech_support_{policy_type}.md").read_text(encoding="utf-8")
    return f"<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n{support}\n</tech_support_policy>"


# --- lookups (tau2 scans its lists; an id that is not a string matches nothing) -----


def _find(ctx: Tau2Context, table: str, key: Any, message: str) -> dict[str, Any]:
    record = ctx.get(table, key) if isinstance(key, str) else None
    if record is None:
        raise ValueError(message)
    return record


def get_line_by_id(ctx: Tau2Context, line_id: Any) -> dict[str, Any]:
    return _find(ctx, "lines", line_id, f"Line with ID {line_id} not found")


def get_plan_by_id(ctx: Tau2Context, plan_id: Any) -> dict[str, Any]:
    return _find(ctx, "plans", plan_id, f"Plan with ID {plan_id} not found")


def get_device_by_id(ctx: Tau2Context, device_id: Any) -> dict[str, Any]:
    return _find(ctx, "devices", device_id, f"Device with ID {device_id} not found")


def get_bill_by_id(ctx: Tau2Context, bill_id: Any) -> dict[str, Any]:
    return _find(ctx, "bills", bill_id, f"Bill with ID {bill_id} not found")


def get_customer(ctx: Tau2Context, customer_id: Any) -> dict[str, Any]:
    return _find(ctx, "customers", customer_id, f"Customer with ID {customer_id} not found")


def get_line_by_phone(ctx: Tau2Context, phone_number: Any) -> dict[str, Any]:
    for line in ctx.rows("lines"):
        if line["phone_number"] == phone_number:
            return ctx.get("lines", line["line_id"])  # type: ignore[return-value]
    raise ValueError(f"Line with phone number {phone_number} not found")


def customer_by_phone(ctx: Tau2Context, phone_number: Any) -> dict[str, Any]:
    for customer in ctx.rows("customers"):
        if customer["phone_number"] == phone_number:
            return ctx.get("customers", customer["customer_id"])  # type: ignore[return-value]
        for line_id in customer["line_ids"]:
            line = get_line_by_id(ctx, line_id)
            if line and line["phone_number"] == phone_number:
                return ctx.get("customers", customer["customer_id"])  # type: ignore[return-value]
    raise ValueError(f"Customer with phone number {phone_number} not found")


def get_target_line(ctx: Tau2Context, customer_id: Any, line_id: Any) -> dict[str, Any]:
    customer = get_customer(ctx, customer_id)
    if line_id not in customer["line_ids"]:
        raise ValueError(f"Line {line_id} not found for customer {customer_id}")
    return get_line_by_id(ctx, line_id)


def bills_awaiting_payment(ctx: Tau2Context, customer: dict[str, Any]) -> list[dict[str, Any]]:
    bills = []
    for bill_id in customer["bill_ids"]:
        bill = get_bill_by_id(ctx, bill_id)
        if bill and bill["status"] == "Awaiting Payment":
            bills.append(bill)
    return bills


# --- tools, in TelecomTools' order ---------------------------------------------------


@TELECOM.tool()
def get_customer_by_phone(ctx: Tau2Context, phone_number: str) -> Any:
    """
    Finds a customer by their primary contact or line phone number.

    Args:
        phone_number: The phone number to search for.

    Returns:
        Customer object if found, None otherwise.
    """
    return Model(customer_by_phone(ctx, phone_number))


@TELECOM.tool()
def get_customer_by_id(ctx: Tau2Context, customer_id: str) -> Any:
    """
    Retrieves a customer directly by their unique ID.

    Args:
        customer_id: The unique identifier of the customer.

    Returns:
        Customer object if found, None otherwise.
    """
    return Model(get_customer(ctx, customer_id))


@TELECOM.tool()
def get_customer_by_name(ctx: Tau2Context, full_name: str, dob: str) -> Any:
    """
    Searches for customers by name and DOB. May return multiple matches if names are similar,
    DOB helps disambiguate.

    Args:
        full_name: The full name of the customer.
        dob: Date of birth for verification, in the format YYYY-MM-DD.

    Returns:
        List of matching Customer objects.
    """
    return [
        Model(c)
        for c in ctx.rows("customers")
        if c["full_name"].lower() == full_name.lower() and c["date_of_birth"] == dob
    ]


@TELECOM.function
def get_available_plan_ids(ctx: Tau2Context) -> list[str]:
    """Returns all the plans that are available to the user."""
    return [plan["plan_id"] for plan in ctx.rows("plans")]


@TELECOM.tool()
def get_details_by_id(ctx: Tau2Context, id: str) -> Any:
    """
    Retrieves the details for a given ID.
    The ID must be a valid ID for a Customer, Line, Device, Bill, or Plan.

    Args:
        id: The ID of the object to retrieve.

    Returns:
        The object corresponding to the ID.

    Raises:
        ValueError: If the ID is not found or if the ID format is invalid.
    """
    if id.startswith("L"):
        return Model(get_line_by_id(ctx, id))
    elif id.startswith("D"):
        return Model(get_device_by_id(ctx, id))
    elif id.startswith("B"):
        return Model(get_bill_by_id(ctx, id))
    elif id.startswith("C"):
        return Model(get_customer(ctx, id))
    elif id.startswith("P"):
        return Model(get_plan_by_id(ctx, id))
    raise ValueError(f"Unknown ID format or type: {id}")


@TELECOM.tool()
def get_bills_for_customer(ctx: Tau2Context, customer_id: str, limit: int = 12) -> Any:
    """
    Retrieves a list of the customer's bills, most recent first.

    Args:
        customer_id: ID of the customer.
        limit: Maximum number of bills to return.

    Returns:
        List of Bill objects, ordered by issue date (newest first).

    Raises:
        ValueError: If the customer is not found.
    """
    customer = get_customer(ctx, customer_id)
    bills = [get_bill_by_id(ctx, bill_id) for bill_id in customer["bill_ids"]]
    ordered = sorted(bills, key=lambda bill: bill["issue_date"], reverse=True)  # ISO dates sort as dates
    return [Model(b) for b in ordered[:limit]]


@TELECOM.tool()
def get_data_usage(ctx: Tau2Context, customer_id: str, line_id: str) -> Any:
    """
    Retrieves current billing cycle data usage for a line, including data
    refueling amount, data limit, and cycle end date.

    Args:
        customer_id: ID of the customer who owns the line.
        line_id: ID of the line to check usage for.

    Returns:
        Dictionary with usage information.

    Raises:
        ValueError: If customer, line, or plan not found.
    """
    line = get_target_line(ctx, customer_id, line_id)
    plan = get_plan_by_id(ctx, line["plan_id"])
    cycle_end = date(TODAY.year, TODAY.month + 1 if TODAY.month < 12 else 1, 1) - timedelta(days=1)
    return {
        "line_id": line_id,
        "data_used_gb": line["data_used_gb"],
        "data_limit_gb": plan["data_limit_gb"],
        "data_refueling_gb": line["data_refueling_gb"],
        "cycle_end_date": cycle_end,
    }


@TELECOM.tool()
@doc(TRANSFER_DOC)
def transfer_to_human_agents(ctx: Tau2Context, summary: str) -> str:
    return "Transfer successful"


# --- assertions (EnvAssertion functions on the agent side) ---------------------------


# --- synchronisation (TelecomEnvironment.sync_tools) ---------------------------------


def sync(ctx: Tau2Context) -> None:
    """Bring the user's surroundings in line with the agent's database: line active,
    roaming allowed, data limit exceeded, and the payment request (a paid one marks its
    bill paid; a bill awaiting payment becomes the new request)."""
    surroundings = ctx.get("user_db", "surroundings")
    if surroundings is None or surroundings["phone_number"] is None:
        return
    phone = surroundings["phone_number"]
    line = get_line_by_phone(ctx, phone)
    surroundings["line_active"] = line["status"] == "Active"
    surroundings["roaming_allowed"] = bool(line["roaming_enabled"])
    plan = get_plan_by_id(ctx, line["plan_id"])
    surroundings["mobile_data_usage_exceeded"] = bool(
        line["data_used_gb"] >= plan["data_limit_gb"] + line["data_refueling_gb"]
    )
    request = surroundings["payment_request"]
    if request is not None and request["paid"]:
        get_bill_by_id(ctx, request["bill_id"])["status"] = "Paid"
        surroundings["payment_request"] = None
    if surroundings["payment_request"] is None:
        bills = bills_awaiting_payment(ctx, customer_by_phone(ctx, phone))
        if bills:
            request = PaymentRequest(bill_id=bills[0]["bill_id"], amount_due=bills[0]["total_due"])
            surroundings["payment_request"] = dump(request)


__all__ = ["DB_SPEC", "TELECOM", "TODAY", "policy", "sync"]
