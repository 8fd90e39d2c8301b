"""tau2's retail domain: products, users and orders (``RetailTools``).

Same checks, texts, changes and outputs as tau2's tools, including their quirks
(``modify_pending_order_items`` gives every modified item the price and options of the
*last* new item, as tau2 does).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .common import CALCULATE_DOC, TRANSFER_DOC, calculate_expression, doc
from .render import Model
from .retail_models import Order, Product, RetailDB, User
from .store import DbSpec, TableSpec
from .toolkit import Tau2Context, Tau2Toolkit, clone

RETAIL = Tau2Toolkit(
    "RetailTools",
    order=(
        "calculate",
        "cancel_pending_order",
        "exchange_delivered_order_items",
        "find_user_id_by_name_zip",
        "find_user_id_by_email",
        "get_order_details",
        "get_product_details",
        "get_item_details",
        "get_user_details",
        "list_all_product_types",
        "modify_pending_order_address",
        "modify_pending_order_items",
        "modify_pending_order_payment",
        "modify_user_address",
        "return_delivered_order_items",
        "transfer_to_human_agents",
    ),
)

DB_SPEC = DbSpec(
    RetailDB,
    (
        TableSpec("products", "product_id", Product),
        TableSpec("users", "user_id", User),
        TableSpec("orders", "order_id", Order),
    ),
    plain=True,
)


def policy(folder: Path) -> str:
    return (folder / "policy.md").read_text(encoding="utf-8")


# --- helpers (RetailTools' private methods) ----------------------------------------


def get_order(ctx: Tau2Context, order_id: Any) -> dict[str, Any]:
    order = ctx.get("orders", order_id)
    if order is None:
        raise ValueError("Order not found")
    return order


def get_user(ctx: Tau2Context, user_id: Any) -> dict[str, Any]:
    user = ctx.get("users", user_id)
    if user is None:
        raise ValueError("User not found")
    return user


def get_product(ctx: Tau2Context, product_id: Any) -> dict[str, Any]:
    product = ctx.get("products", product_id)
    if product is None:
        raise ValueError("Product not found")
    return product


def get_variant(ctx: Tau2Context, product_id: Any, variant_id: Any) -> dict[str, Any]:
    product = get_product(ctx, product_id)
    if variant_id not in product["variants"]:
        raise ValueError("Variant not found")
    return product["variants"][variant_id]


# --- tools, in RetailTools' order ---------------------------------------------------


@RETAIL.tool()
@doc(CALCULATE_DOC)
def calculate(ctx: Tau2Context, expression: str) -> str:
    return calculate_expression(expression)


@RETAIL.tool()
def find_user_id_by_name_zip(ctx: Tau2Context, first_name: str, last_name: str, zip: str) -> Any:
    """Find user id by first name, last name, and zip code. If the user is not found, the function
    will return an error message. By default, find user id by email, and only call this function
    if the user is not found by email or cannot remember email.

    Args:
        first_name: The first name of the customer, such as 'John'.
        last_name: The last name of the customer, such as 'Doe'.
        zip: The zip code of the customer, such as '12345'.

    Returns:
        str: The user id if found, otherwise an error message.

    Raises:
        ValueError: If the user is not found.
    """
    for user in ctx.rows("users"):
        if (
            user["name"]["first_name"].lower() == first_name.lower()
            and user["name"]["last_name"].lower() == last_name.lower()
            and user["address"]["zip"] == zip
        ):
            return user["user_id"]
    raise ValueError("User not found")


@RETAIL.tool()
def find_user_id_by_email(ctx: Tau2Context, email: str) -> Any:
    """Find user id by email. If the user is not found, the function will return an error message.

    Args:
        email: The email of the user, such as 'something@example.com'.

    Returns:
        str: The user id if found, otherwise an error message.

    Raises:
        ValueError: If the user is not found.
    """
    for user in ctx.rows("users"):
        if user["email"].lower() == email.lower():
            return user["user_id"]
    raise ValueError("User not found")


@RETAIL.tool()
def get_order_details(ctx: Tau2Context, order_id: str) -> Any:
    """Get the status and details of an order.

    Args:
        order_id: The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id.

    Returns:
        Order: The order details.

    Raises:
        ValueError: If the order is not found.
    """
    return Model(get_order(ctx, order_id))


@RETAIL.tool()
def get_product_details(ctx: Tau2Context, product_id: str) -> Any:
    """Get the inventory details of a product.

    Args:
        product_id: The product id, such as '6086499569'. Be careful the product id is different from the item id.

    Returns:
        Product: The product details.

    Raises:
        ValueError: If the product is not found.
    """
    return Model(get_product(ctx, product_id))


@RETAIL.tool()
def get_item_details(ctx: Tau2Context, item_id: str) -> Any:
    """Get the inventory details of an item.

    Args:
        item_id: The item id, such as '6086499569'. Be careful the item id is different from the product id.

    Returns:
        Variant: The item details.

    Raises:
        ValueError: If the item is not found.
    """
    for product in ctx.rows("products"):
        if item_id in product["variants"]:
            return Model(clone(product["variants"][item_id]))
    raise ValueError("Item not found")


@RETAIL.tool()
def get_user_details(ctx: Tau2Context, user_id: str) -> Any:
    """Get the details of a user, including their orders.

    Args:
        user_id: The user id, such as 'sara_doe_496'.

    Returns:
        User: The user details.

    Raises:
        ValueError: If the user is not found.
    """
    return Model(get_user(ctx, user_id))


@RETAIL.tool()
def list_all_product_types(ctx: Tau2Context) -> Any:
    """List the name and product id of all product types.
    Each product type has a variety of different items with unique item ids and options.
    There are only 50 product types in the store.

    Returns:
        str: A JSON string mapping product names to their product IDs, sorted alphabetically by name.
    """
    product_dict = {product["name"]: product["product_id"] for product in ctx.rows("products")}
    return json.dumps(product_dict, sort_keys=True)


@RETAIL.tool()
@doc(TRANSFER_DOC)
def transfer_to_human_agents(ctx: Tau2Context, summary: str) -> str:
    return "Transfer successful"


__all__ = ["DB_SPEC", "RETAIL", "policy"]
