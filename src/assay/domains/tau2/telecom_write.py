"""tau2's telecom domain, agent side: the tools that change state, the functions a
task's initialization calls, and the agent-side assertions."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from .common import as_record
from .render import Model
from .store import dump
from .telecom import (
    TELECOM,
    TODAY,
    bills_awaiting_payment,
    get_bill_by_id,
    get_customer,
    get_line_by_id,
    get_plan_by_id,
    get_target_line,
)
from .telecom_models import Bill, LineItem
from .toolkit import Tau2Context


def _new_bill(**fields: Any) -> dict[str, Any]:
    return dump(Bill(**fields))


def _apply_one_time_charge(ctx: Tau2Context, customer_id: Any, amount: Any, description: str) -> None:
    customer = get_customer(ctx, customer_id)
    draft = None
    for bill_id in customer["bill_ids"]:
        bill = get_bill_by_id(ctx, bill_id)
        if bill and bill["status"] == "Draft":
            draft = bill
            break
    if not draft:
        start = (TODAY.replace(day=1) + timedelta(days=32)).replace(day=1)
        end = start.replace(
            month=start.month + 1 if start.month < 12 else 1,
            year=start.year if start.month < 12 else start.year + 1,
        ) - timedelta(days=1)
        new_bill_id = f"B{ctx.rng.getrandbits(32):08x}"
        draft = ctx.put(
            "bills",
            new_bill_id,
            _new_bill(
                bill_id=new_bill_id,
                customer_id=customer_id,
                period_start=start,
                period_end=end,
                issue_date=start,
                total_due=0,
                due_date=start + timedelta(days=14),
                status="Draft",
            ),
        )
        customer["bill_ids"].append(new_bill_id)
    item = LineItem(
        description=description, amount=amount, date=TODAY, item_type="Credit" if amount < 0 else "Charge"
    )
    draft["line_items"].append(dump(item))
    draft["total_due"] += amount


@TELECOM.tool(write=True)
def suspend_line(ctx: Tau2Context, customer_id: str, line_id: str, reason: str) -> Any:
    """
    Suspends a specific line (max 6 months).
    Checks: Line status must be Active.
    Logic: Sets line status to Suspended, records suspension_start_date.

    Args:
        customer_id: ID of the customer who owns the line.
        line_id: ID of the line to suspend.
        reason: Reason for suspension.

    Returns:
        Dictionary with success status, message, and updated line if applicable.

    Raises:
        ValueError: If customer or line not found, or if line is not active.
    """
    line = get_target_line(ctx, customer_id, line_id)
    if line["status"] != "Active":
        raise ValueError("Line must be active to suspend")
    line["status"] = "Suspended"
    line["suspension_start_date"] = TODAY.isoformat()
    return {"message": "Line suspended successfully. $5/month holding fee will apply.", "line": Model(line)}


@TELECOM.tool(write=True)
def resume_line(ctx: Tau2Context, customer_id: str, line_id: str) -> Any:
    """
    Resumes a suspended line.
    Checks: Line status must be Suspended or Pending Activation.
    Logic: Sets line status to Active, clears suspension_start_date.

    Args:
        customer_id: ID of the customer who owns the line.
        line_id: ID of the line to resume.

    Returns:
        Dictionary with success status, message, and updated line if applicable.

    Raises:
        ValueError: If customer or line not found, or if line is not suspended or pending activation.
    """
    line = get_target_line(ctx, customer_id, line_id)
    if line["status"] not in ("Suspended", "Pending Activation"):
        raise ValueError("Line must be suspended to resume")
    line["status"] = "Active"
    line["suspension_start_date"] = None
    return {"message": "Line resumed successfully", "line": Model(line)}


@TELECOM.tool(write=True)
def send_payment_request(ctx: Tau2Context, customer_id: str, bill_id: str) -> Any:
    """
    Sends a payment request to the customer for a specific bill.
    Checks:
        - Customer exists
        - Bill exists and belongs to the customer
        - No other bills are already awaiting payment for this customer
    Logic: Sets bill status to AWAITING_PAYMENT and notifies customer.
    Warning: This method does not check if the bill is already PAID.
    Always check the bill status before calling this method.

    Args:
        customer_id: ID of the customer who owns the bill.
        bill_id: ID of the bill to send payment request for.

    Returns:
        Message indicating the payment request has been sent.

    Raises:
        ValueError: If customer not found, bill not found, or if another bill is already awaiting payment.
    """
    customer = get_customer(ctx, customer_id)
    if len(bills_awaiting_payment(ctx, customer)) != 0:
        raise ValueError("A bill is already awaiting payment for this customer")
    if bill_id not in customer["bill_ids"]:
        raise ValueError(f"Bill {bill_id} not found for customer {customer_id}")
    bill = get_bill_by_id(ctx, bill_id)
    bill["status"] = "Awaiting Payment"
    return f"Payment request sent to the customer for bill {bill['bill_id']}"


@TELECOM.function
def set_data_usage(ctx: Tau2Context, customer_id: str, line_id: str, data_used_gb: float) -> str:
    """Sets the data usage for a line (not a tool: used by task initialization)."""
    line = get_target_line(ctx, customer_id, line_id)
    line["data_used_gb"] = as_record(data_used_gb)
    return f"Data usage set to {data_used_gb} GB for line {line_id}"


@TELECOM.tool(write=True)
def enable_roaming(ctx: Tau2Context, customer_id: str, line_id: str) -> Any:
    """
    Enables international roaming on a line.

    Args:
        customer_id: ID of the customer who owns the line.
        line_id: ID of the line to enable roaming for.

    Returns:
        Message indicating the roaming has been enabled.

    Raises:
        ValueError: If customer or line not found.
    """
    line = get_target_line(ctx, customer_id, line_id)
    if line["roaming_enabled"]:
        return "Roaming was already enabled"
    line["roaming_enabled"] = True
    return "Roaming enabled successfully"


@TELECOM.tool(write=True)
def disable_roaming(ctx: Tau2Context, customer_id: str, line_id: str) -> Any:
    """
    Disables international roaming on a line.

    Args:
        customer_id: ID of the customer who owns the line.
        line_id: ID of the line to disable roaming for.

    Returns:
        Message indicating the roaming has been enabled.

    Raises:
        ValueError: If customer or line not found.
    """
    line = get_target_line(ctx, customer_id, line_id)
    if not line["roaming_enabled"]:
        return "Roaming was already disabled"
    line["roaming_enabled"] = False
    return "Roaming disabled successfully"


@TELECOM.tool(write=True)
def refuel_data(ctx: Tau2Context, customer_id: str, line_id: str, gb_amount: float) -> Any:
    """
    Refuels data for a specific line, adding to the customer's bill.
    Checks: Line status must be Active, Customer owns the line.
    Logic: Adds data to the line and charges customer based on the plan's refueling rate.

    Args:
        customer_id: ID of the customer who owns the line.
        line_id: ID of the line to refuel data for.
        gb_amount: Amount of data to add in gigabytes.

    Returns:
        Dictionary with success status, message, charge amount, and updated line if applicable.

    Raises:
        ValueError: If customer, line, or plan not found, or if checks fail.
    """
    line = get_target_line(ctx, customer_id, line_id)
    if gb_amount <= 0:
        raise ValueError("Refuel amount must be positive")
    plan = get_plan_by_id(ctx, line["plan_id"])
    price = plan["data_refueling_price_per_gb"]
    charge = gb_amount * price
    line["data_refueling_gb"] += gb_amount
    _apply_one_time_charge(ctx, customer_id, charge, f"Data refueling: {gb_amount} GB at ${price}/GB")
    return {
        "message": f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge:.2f}",
        "new_data_refueling_gb": line["data_refueling_gb"],
        "charge": charge,
    }


@TELECOM.function
def suspend_line_for_overdue_bill(
    ctx: Tau2Context, customer_id: str, line_id: str, new_bill_id: str, contract_ended: bool
) -> str:
    """Suspends a line for an unpaid bill (not a tool: used by task initialization)."""
    line = get_line_by_id(ctx, line_id)
    if line["status"] != "Active":
        raise ValueError("Line must be active to suspend for unpaid bill")
    plan = get_plan_by_id(ctx, line["plan_id"])
    amount = plan["price_per_month"]
    description = f"Charge for line {line['line_id']}"
    if amount <= 0:
        raise ValueError("Amount must be positive for overdue bill")
    customer = get_customer(ctx, customer_id)
    overdue = [b for b in list(customer["bill_ids"]) if get_bill_by_id(ctx, b)["status"] == "Overdue"]
    if overdue:
        raise ValueError("Customer already has an overdue bill")
    last_day = TODAY.replace(day=1) - timedelta(days=1)
    first_day = last_day.replace(day=1)
    bill = Bill(
        bill_id=new_bill_id,
        customer_id=customer_id,
        period_start=first_day,
        period_end=last_day,
        issue_date=first_day,
        total_due=0,
        due_date=first_day + timedelta(days=14),
        status="Overdue",
    )
    bill.line_items.append(
        LineItem(
            description=description, amount=amount, date=TODAY, item_type="Charge" if amount > 0 else "Credit"
        )
    )
    bill.total_due += amount
    ctx.put("bills", new_bill_id, dump(bill))
    customer["bill_ids"].append(new_bill_id)
    line["status"] = "Suspended"
    line["suspension_start_date"] = TODAY.isoformat()
    if contract_ended:
        line["contract_end_date"] = last_day.isoformat()
    return f"Line {line_id} suspended for unpaid bill {new_bill_id}. Contract ended: {contract_ended}"
