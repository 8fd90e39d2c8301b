"""The retail tools: happy paths, and every refusal says what is wrong and what is right."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from assay.domains.retail import TOOLKIT
from assay.domains.retail.data import empty_database
from assay.envs.tools import InvalidToolCall, ToolContext, ToolError

NOW = datetime(2025, 6, 15, 12, 0)
USER = {
    "user_id": "ana_kim_1234",
    "first_name": "Ana",
    "last_name": "Kim",
    "email": "ana.kim1234@example.com",
    "zip": "78704",
    "address": "12 Oak Street, Austin, TX 78704",
}


def _order(order_id: str, status: str, total: float = 120.0, **extra: Any) -> dict[str, Any]:
    return {
        "order_id": order_id,
        "user_id": USER["user_id"],
        "items": [{"product_id": "P100001", "name": "Blender", "price": total, "quantity": 1}],
        "total": total,
        "status": status,
        "created_at": "2025-06-01",
        "delivered_at": "2025-06-10" if status in ("delivered", "refunded") else None,
        "shipping_address": USER["address"],
        "refund_id": extra.get("refund_id"),
    }


@pytest.fixture
def ctx() -> ToolContext:
    db = empty_database()
    db.insert("users", USER)
    db.insert("products", {"product_id": "P100001", "name": "Blender", "price": 120.0})
    db.insert("orders", _order("#W1000001", "delivered"))
    db.insert("orders", _order("#W1000002", "pending", 45.5))
    db.insert("orders", _order("#W1000003", "processing"))
    db.insert("orders", _order("#W1000004", "refunded", refund_id="R-0007"))
    db.insert("orders", _order("#W1000005", "cancelled"))
    db.insert(
        "refunds",
        {"refund_id": "R-0007", "order_id": "#W1000004", "amount": 120.0, "created_at": "2025-06-11"},
    )
    return ToolContext(db, NOW)


def call(ctx: ToolContext, name: str, **args: Any) -> Any:
    return TOOLKIT.get(name)(ctx, args)


def refused(ctx: ToolContext, name: str, **args: Any) -> str:
    with pytest.raises(ToolError) as info:
        call(ctx, name, **args)
    return str(info.value)


def test_toolkit_has_about_ten_tools_with_schemas():
    names = TOOLKIT.names()
    assert len(names) == 10
    assert TOOLKIT.write_tools() == {"refund_delivered_order", "cancel_pending_order", "update_order_address"}
    for spec in TOOLKIT.specs():
        assert spec.description
        for prop in spec.parameters["properties"].values():
            assert prop.get("description"), f"{spec.name}: undocumented argument"


def test_find_user(ctx):
    assert call(ctx, "find_user_id_by_email", email=" Ana.Kim1234@example.com") == "ana_kim_1234"
    assert (
        call(ctx, "find_user_id_by_name_zip", first_name="ana", last_name="KIM", zip="78704")
        == "ana_kim_1234"
    )
    assert "find the user by first name, last name and zip" in refused(
        ctx, "find_user_id_by_email", email="nobody@example.com"
    )
    message = refused(ctx, "find_user_id_by_name_zip", first_name="Ana", last_name="Kim", zip="11111")
    assert "no user named Ana Kim with zip code 11111" in message and "by email" in message


def test_user_and_order_details(ctx):
    details = call(ctx, "get_user_details", user_id="ana_kim_1234")
    assert details["email"] == USER["email"]
    assert details["orders"] == ["#W1000001", "#W1000002", "#W1000003", "#W1000004", "#W1000005"]
    assert "find_user_id_by_email" in refused(ctx, "get_user_details", user_id="ghost")
    assert call(ctx, "get_order_details", order_id="W1000001")["status"] == "delivered"
    assert "look like '#W1234567'" in refused(ctx, "get_order_details", order_id="12345")
    assert "order #W9999999 not found" in refused(ctx, "get_order_details", order_id="#W9999999")
    assert call(ctx, "get_product_details", product_id="p100001")["name"] == "Blender"
    assert "look like 'P123456'" in refused(ctx, "get_product_details", product_id="X1")


def test_refund(ctx):
    result = call(ctx, "refund_delivered_order", order_id="#W1000001", amount=120)
    assert result == {"refund_id": "R-0008", "order_id": "#W1000001", "amount": 120.0, "status": "refunded"}
    assert ctx.db.get("orders", "#W1000001")["status"] == "refunded"
    assert ctx.db.get("refunds", "R-0008")["created_at"] == "2025-06-15"
    assert "already refunded (refund R-0008)" in refused(
        ctx, "refund_delivered_order", order_id="#W1000001", amount=120
    )


def test_refund_refusals(ctx):
    assert refused(ctx, "refund_delivered_order", order_id="#W1000002", amount=10) == (
        "order #W1000002 is pending, not delivered; refunds apply to delivered orders"
    )
    assert "refunded only once" in refused(ctx, "refund_delivered_order", order_id="#W1000004", amount=1)
    message = refused(ctx, "refund_delivered_order", order_id="#W1000001", amount=150)
    assert "150.00 exceeds the total of order #W1000001, 120.00" in message
    assert "at most the order total" in message
    assert "must be positive" in refused(ctx, "refund_delivered_order", order_id="#W1000001", amount=0)
    with pytest.raises(InvalidToolCall, match="amount"):
        call(ctx, "refund_delivered_order", order_id="#W1000001", amount="a lot")


def test_cancel(ctx):
    assert call(ctx, "cancel_pending_order", order_id="#W1000002") == {
        "order_id": "#W1000002",
        "status": "cancelled",
        "amount_returned": 45.5,
    }
    assert "already cancelled" in refused(ctx, "cancel_pending_order", order_id="#W1000002")
    assert refused(ctx, "cancel_pending_order", order_id="#W1000001") == (
        "order #W1000001 is delivered, not pending; only pending orders can be cancelled"
    )


def test_update_address(ctx):
    result = call(
        ctx, "update_order_address", order_id="#W1000003", address="  9 Pine Road,  Boise, ID 83702 "
    )
    assert result["shipping_address"] == "9 Pine Road, Boise, ID 83702"
    assert ctx.db.get("orders", "#W1000003")["shipping_address"] == "9 Pine Road, Boise, ID 83702"
    assert "only be changed while an order is pending or processing" in refused(
        ctx, "update_order_address", order_id="#W1000001", address="9 Pine Road, Boise, ID 83702"
    )
    assert "not a full address" in refused(ctx, "update_order_address", order_id="#W1000002", address="home")


def test_transfer_records_a_transfer(ctx):
    text = call(ctx, "transfer_to_human_agent", summary="Ana wants a manager.")
    assert "T-0001" in text
    assert ctx.db.get("transfers", "T-0001") == {
        "transfer_id": "T-0001",
        "summary": "Ana wants a manager.",
        "created_at": "2025-06-15T12:00:00",
    }
    assert "T-0002" in call(ctx, "transfer_to_human_agent", summary="again")
    assert "summary is empty" in refused(ctx, "transfer_to_human_agent", summary=" ")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("129.99 * 2 - 10", "249.98"),
        ("$1,200 / 4", "300"),
        ("-(2 + 3) ** 2", "-25"),
        ("7 // 2 + 7 % 2", "4"),
        ("0.1 + 0.2", "0.3"),
    ],
)
def test_calculate(ctx, expression, expected):
    assert call(ctx, "calculate", expression=expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("__import__('os').system('ls')", "unsupported expression element Call"),
        ("1 / 0", "divides by zero"),
        ("2 ** 1000", "exponent too large"),
        ("1 +", "cannot parse"),
        ("", "1 to 200 characters"),
        ("x * 2", "unsupported"),
    ],
)
def test_calculate_refuses_anything_but_arithmetic(ctx, expression, message):
    assert message in refused(ctx, "calculate", expression=expression)


def test_unknown_tool_lists_the_available_ones():
    with pytest.raises(InvalidToolCall, match="available tools: calculate, cancel_pending_order"):
        TOOLKIT.get("refund_everything")
