"""tau2's retail domain: the tools that change state (``RetailTools``' write tools).

Same checks, texts, changes and outputs as tau2's tools, including their quirks
(``modify_pending_order_items`` gives every modified item the price and options of the
*last* new item, as tau2 does).
"""

from __future__ import annotations

from typing import Any

from .common import as_record
from .render import Model
from .retail import RETAIL, get_order, get_user, get_variant
from .retail_models import OrderPayment, UserAddress
from .store import dump
from .toolkit import Tau2Context, clone


def _get_payment_method(ctx: Tau2Context, user_id: Any, payment_method_id: Any) -> dict[str, Any]:
    user = get_user(ctx, user_id)
    if payment_method_id not in user["payment_methods"]:
        raise ValueError("Payment method not found")
    return user["payment_methods"][payment_method_id]


def _is_gift_card(method: dict[str, Any]) -> bool:
    return method["source"] == "gift_card"


def _check_counts(order: dict[str, Any], item_ids: Any, message: str) -> None:
    all_item_ids = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        if item_ids.count(item_id) > all_item_ids.count(item_id):
            raise ValueError(message.format(item_id=item_id))


def _first_item(order: dict[str, Any], item_id: Any) -> dict[str, Any]:
    item = next((item for item in order["items"] if item["item_id"] == item_id), None)
    if item is None:
        raise ValueError(f"Item {item_id} not found")
    return item


def _address(**fields: Any) -> dict[str, Any]:
    return dump(UserAddress(**fields))


@RETAIL.tool(write=True)
def cancel_pending_order(ctx: Tau2Context, order_id: str, reason: str) -> Any:
    """Cancel a pending order. If the order is already processed or delivered,
    it cannot be cancelled. The agent needs to explain the cancellation detail
    and ask for explicit user confirmation (yes/no) to proceed. If the user confirms,
    the order status will be changed to 'cancelled' and the payment will be refunded.
    The refund will be added to the user's gift card balance immediately if the payment
    was made using a gift card, otherwise the refund would take 5-7 business days to process.
    The function returns the order details after the cancellation.

    Args:
        order_id: The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.
        reason: The reason for cancellation, which should be either 'no longer needed' or 'ordered by mistake'.

    Returns:
        Order: The order details after the cancellation.
    """
    order = get_order(ctx, order_id)
    if order["status"] != "pending":
        raise ValueError("Non-pending order cannot be cancelled")
    if reason not in {"no longer needed", "ordered by mistake"}:
        raise ValueError("Invalid reason")
    refunds = []
    for payment in order["payment_history"]:
        payment_id = payment["payment_method_id"]
        refunds.append(
            dump(
                OrderPayment(
                    transaction_type="refund", amount=payment["amount"], payment_method_id=payment_id
                )
            )
        )
        user = get_user(ctx, order["user_id"])
        method = _get_payment_method(ctx, user["user_id"], payment_id)
        if _is_gift_card(method):
            method["balance"] += payment["amount"]
            method["balance"] = round(method["balance"], 2)
    order["status"] = "cancelled"
    order["cancel_reason"] = as_record(reason)
    order["payment_history"].extend(refunds)
    return Model(order)


@RETAIL.tool(write=True)
def exchange_delivered_order_items(
    ctx: Tau2Context, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> Any:
    """Exchange items in a delivered order to new items of the same product type.
    For a delivered order, return or exchange can be only done once by the agent.
    The agent needs to explain the exchange detail and ask for explicit user confirmation (yes/no) to proceed.

    Args:
        order_id: The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.
        item_ids: The item ids to be exchanged, each such as '1008292230'. There could be duplicate items in the list.
        new_item_ids: The item ids to be exchanged for, each such as '1008292230'.
                     There could be duplicate items in the list. Each new item id should match the item id
                     in the same position and be of the same product.
        payment_method_id: The payment method id to pay or receive refund for the item price difference,
                         such as 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up
                         from the user or order details.

    Returns:
        Order: The order details after the exchange.

    Raises:
        ValueError: If the order is not delivered.
        ValueError: If the items to be exchanged do not exist.
        ValueError: If the new items do not exist or do not match the old items.
        ValueError: If the number of items to be exchanged does not match.
    """
    order = get_order(ctx, order_id)
    if order["status"] != "delivered":
        raise ValueError("Non-delivered order cannot be exchanged")
    _check_counts(order, item_ids, "Number of {item_id} not found.")
    if len(item_ids) != len(new_item_ids):
        raise ValueError("The number of items to be exchanged should match.")
    diff_price: Any = 0
    for item_id, new_item_id in zip(item_ids, new_item_ids):  # noqa: B905 (tau2 zips unchecked)
        item = _first_item(order, item_id)
        variant = get_variant(ctx, item["product_id"], new_item_id)
        if not variant["available"]:
            raise ValueError(f"New item {new_item_id} not found or available")
        diff_price += variant["price"] - item["price"]
    diff_price = round(diff_price, 2)
    method = _get_payment_method(ctx, order["user_id"], payment_method_id)
    if _is_gift_card(method) and method["balance"] < diff_price:
        raise ValueError("Insufficient gift card balance to pay for the price difference")
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = as_record(payment_method_id)
    order["exchange_price_difference"] = diff_price
    return Model(order)


@RETAIL.tool(write=True)
def modify_pending_order_address(
    ctx: Tau2Context,
    order_id: str,
    address1: str,
    address2: str,
    city: str,
    state: str,
    country: str,
    zip: str,
) -> Any:
    """Modify the shipping address of a pending order. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.

    Args:
        order_id: The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.
        address1: The first line of the address, such as '123 Main St'.
        address2: The second line of the address, such as 'Apt 1' or ''.
        city: The city, such as 'San Francisco'.
        state: The state, such as 'CA'.
        country: The country, such as 'USA'.
        zip: The zip code, such as '12345'.

    Returns:
        Order: The order details after the modification.

    Raises:
        ValueError: If the order is not pending.
    """
    order = get_order(ctx, order_id)
    if "pending" not in order["status"]:
        raise ValueError("Non-pending order cannot be modified")
    order["address"] = _address(
        address1=address1, address2=address2, city=city, state=state, country=country, zip=zip
    )
    return Model(order)


@RETAIL.tool(write=True)
def modify_pending_order_items(
    ctx: Tau2Context, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> Any:
    """Modify items in a pending order to new items of the same product type. For a pending order, this function can only be called once. The agent needs to explain the exchange detail and ask for explicit user confirmation (yes/no) to proceed.

    Args:
        order_id: The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.
        item_ids: The item ids to be modified, each such as '1008292230'. There could be duplicate items in the list.
        new_item_ids: The item ids to be modified for, each such as '1008292230'. There could be duplicate items in the list. Each new item id should match the item id in the same position and be of the same product.
        payment_method_id: The payment method id to pay or receive refund for the item price difference, such as 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up from the user or order details.

    Returns:
        Order: The order details after the modification.

    Raises:
        ValueError: If the order is not pending.
        ValueError: If the items to be modified do not exist.
        ValueError: If the new items do not exist or do not match the old items.
        ValueError: If the number of items to be modified does not match.
    """
    order = get_order(ctx, order_id)
    if order["status"] != "pending":
        raise ValueError("Non-pending order cannot be modified")
    _check_counts(order, item_ids, "{item_id} not found")
    if len(item_ids) != len(new_item_ids):
        raise ValueError("The number of items to be exchanged should match")
    diff_price: Any = 0
    variant: dict[str, Any] = {}
    for item_id, new_item_id in zip(item_ids, new_item_ids):  # noqa: B905 (tau2 zips unchecked)
        if item_id == new_item_id:
            raise ValueError("The new item id should be different from the old item id")
        item = _first_item(order, item_id)
        variant = get_variant(ctx, item["product_id"], new_item_id)
        if not variant["available"]:
            raise ValueError(f"New item {new_item_id} not found or available")
        diff_price += variant["price"] - item["price"]
    method = _get_payment_method(ctx, order["user_id"], payment_method_id)
    if _is_gift_card(method) and method["balance"] < diff_price:
        raise ValueError("Insufficient gift card balance to pay for the new item")
    order["payment_history"].append(
        dump(
            OrderPayment(
                transaction_type="payment" if diff_price > 0 else "refund",
                amount=abs(diff_price),
                payment_method_id=payment_method_id,
            )
        )
    )
    if _is_gift_card(method):
        method["balance"] -= diff_price
        method["balance"] = round(method["balance"], 2)
    for item_id, new_item_id in zip(item_ids, new_item_ids):  # noqa: B905 (tau2 zips unchecked)
        item = _first_item(order, item_id)
        item["item_id"] = as_record(new_item_id)
        item["price"] = variant["price"]
        item["options"] = clone(variant["options"])
    order["status"] = "pending (item modified)"
    return Model(order)


@RETAIL.tool(write=True)
def modify_pending_order_payment(ctx: Tau2Context, order_id: str, payment_method_id: str) -> Any:
    """Modify the payment method of a pending order. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.

    Args:
        order_id: The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.
        payment_method_id: The payment method id to pay or receive refund for the item price difference, such as 'gift_card_0000000' or 'credit_card_0000000'. These can be looked up from the user or order details.

    Returns:
        Order: The order details after the modification.

    Raises:
        ValueError: If the order is not pending.
        ValueError: If the payment method does not exist.
        ValueError: If the payment history has more than one payment.
        ValueError: If the new payment method is the same as the current one.
    """
    order = get_order(ctx, order_id)
    if "pending" not in order["status"]:
        raise ValueError("Non-pending order cannot be modified")
    method = _get_payment_method(ctx, order["user_id"], payment_method_id)
    history = order["payment_history"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        raise ValueError("There should be exactly one payment for a pending order")
    if history[0]["payment_method_id"] == payment_method_id:
        raise ValueError("The new payment method should be different from the current one")
    amount = history[0]["amount"]
    if _is_gift_card(method) and method["balance"] < amount:
        raise ValueError("Insufficient gift card balance to pay for the order")
    history.extend(
        [
            dump(
                OrderPayment(transaction_type="payment", amount=amount, payment_method_id=payment_method_id)
            ),
            dump(
                OrderPayment(
                    transaction_type="refund",
                    amount=amount,
                    payment_method_id=history[0]["payment_method_id"],
                )
            ),
        ]
    )
    if _is_gift_card(method):
        method["balance"] -= amount
        method["balance"] = round(method["balance"], 2)
    old_method = _get_payment_method(ctx, order["user_id"], history[0]["payment_method_id"])
    if _is_gift_card(old_method):
        old_method["balance"] += amount
        old_method["balance"] = round(old_method["balance"], 2)
    return Model(order)


@RETAIL.tool(write=True)
def modify_user_address(
    ctx: Tau2Context,
    user_id: str,
    address1: str,
    address2: str,
    city: str,
    state: str,
    country: str,
    zip: str,
) -> Any:
    """Modify the default address of a user. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.

    Args:
        user_id: The user id, such as 'sara_doe_496'.
        address1: The first line of the address, such as '123 Main St'.
        address2: The second line of the address, such as 'Apt 1' or ''.
        city: The city, such as 'San Francisco'.
        state: The state, such as 'CA'.
        country: The country, such as 'USA'.
        zip: The zip code, such as '12345'.

    Returns:
        User: The user details after the modification.

    Raises:
        ValueError: If the user is not found.
    """
    user = get_user(ctx, user_id)
    user["address"] = _address(
        address1=address1, address2=address2, city=city, state=state, country=country, zip=zip
    )
    return Model(user)


@RETAIL.tool(write=True)
def return_delivered_order_items(
    ctx: Tau2Context, order_id: str, item_ids: list[str], payment_method_id: str
) -> Any:
    """Return some items of a delivered order.
    The order status will be changed to 'return requested'.
    The agent needs to explain the return detail and ask for explicit user confirmation (yes/no) to proceed.
    The user will receive follow-up email for how and where to return the item.

    Args:
        order_id: The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.
        item_ids: The item ids to be returned, each such as '1008292230'. There could be duplicate items in the list.
        payment_method_id: The payment method id to pay or receive refund for the item price difference, such as 'gift_card_0000000' or 'credit_card_0000000'.
                         These can be looked up from the user or order details.

    Returns:
        Order: The order details after requesting the return.

    Raises:
        ValueError: If the order is not delivered.
        ValueError: If the payment method is not the original payment method or a gift card.
        ValueError: If the items to be returned do not exist.
    """
    order = get_order(ctx, order_id)
    if order["status"] != "delivered":
        raise ValueError("Non-delivered order cannot be returned")
    user = get_user(ctx, order["user_id"])
    method = _get_payment_method(ctx, user["user_id"], payment_method_id)
    if not _is_gift_card(method) and payment_method_id != order["payment_history"][0]["payment_method_id"]:
        raise ValueError("Payment method should be the original payment method")
    _check_counts(order, item_ids, "Some item not found")
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = as_record(payment_method_id)
    return Model(order)
