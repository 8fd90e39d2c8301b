"""The retail world: users, products, orders, refunds and transfers, generated from a seed.

Everything comes from one ``random.Random(seed)``, so the same seed always gives the
same database. Dates are calendar dates (ISO ``YYYY-MM-DD``) relative to
:data:`REFERENCE_DATE`, the as-of date of the built-in suite.

Id spaces are split so hand-written records never collide with generated ones:
generated order ids are ``#W`` + 7 digits not starting with ``0``, generated zip codes
do not start with ``0``, generated user-id suffixes are 4 digits not starting with
``0``. Static tasks use ``#W0...`` orders, ``0....`` zips and ``..._0NNN`` users.
"""

from __future__ import annotations

import random
import re
from datetime import date, timedelta
from typing import Any

from ...envs.state import Database

#: Primary key of each table.
KEYS: dict[str, str] = {
    "users": "user_id",
    "products": "product_id",
    "orders": "order_id",
    "refunds": "refund_id",
    "transfers": "transfer_id",
}

#: "Today" of the generated data; the built-in suite's ``as_of`` falls on this date.
REFERENCE_DATE = date(2025, 6, 15)

N_USERS = 60
N_ORDERS = 240

FIRST_NAMES = tuple(
    [
        "Emma",
        "Liam",
        "Olivia",
        "Noah",
        "Ava",
        "Ethan",
        "Sophia",
        "Mason",
        "Isabella",
        "Lucas",
        "Mia",
        "Aiden",
        "Harper",
        "Elijah",
        "Amelia",
        "James",
        "Evelyn",
        "Benjamin",
        "Abigail",
        "Henry",
        "Chloe",
        "Daniel",
        "Grace",
        "Samuel",
        "Zoe",
        "David",
        "Lily",
        "Omar",
        "Priya",
        "Yusuf",
        "Mei",
        "Carlos",
        "Lucia",
        "Kenji",
        "Anh",
        "Ivan",
        "Fatima",
        "Diego",
        "Nora",
        "Raj",
    ]
)
LAST_NAMES = tuple(
    [
        "Smith",
        "Johnson",
        "Garcia",
        "Nguyen",
        "Kim",
        "Patel",
        "Brown",
        "Lopez",
        "Wilson",
        "Chen",
        "Martin",
        "Lee",
        "Walker",
        "Young",
        "Hall",
        "Rivera",
        "Khan",
        "Moore",
        "Tanaka",
        "Silva",
        "Novak",
        "Rossi",
        "Schmidt",
        "Dubois",
        "Haddad",
        "Okafor",
        "Larsen",
        "Costa",
        "Ahmed",
        "Tran",
        "Cohen",
        "Morales",
        "Fischer",
        "Ito",
        "Baker",
        "Reyes",
        "Singh",
        "Park",
        "Ward",
    ]
)
STREETS = tuple(
    [
        "Maple Avenue",
        "Oak Street",
        "Cedar Lane",
        "Pine Road",
        "Elm Street",
        "Lakeview Drive",
        "Hillcrest Road",
        "Sunset Boulevard",
        "River Road",
        "Park Avenue",
        "Willow Way",
        "Chestnut Street",
        "Highland Avenue",
        "Meadow Lane",
        "Forest Drive",
        "Harbor View",
    ]
)
CITIES = (
    ("Springfield", "IL"),
    ("Portland", "OR"),
    ("Austin", "TX"),
    ("Madison", "WI"),
    ("Denver", "CO"),
    ("Raleigh", "NC"),
    ("Columbus", "OH"),
    ("Tucson", "AZ"),
    ("Boise", "ID"),
    ("Savannah", "GA"),
    ("Burlington", "VT"),
    ("Fresno", "CA"),
)
#: Catalogue: product name and (low, high) price range in dollars.
CATALOGUE: tuple[tuple[str, tuple[int, int]], ...] = (
    ("Wireless Headphones", (59, 249)),
    ("Bluetooth Speaker", (29, 149)),
    ("Mechanical Keyboard", (49, 189)),
    ("Wireless Mouse", (15, 79)),
    ("USB-C Charger", (12, 49)),
    ("Smart Watch", (129, 399)),
    ("Fitness Tracker", (39, 129)),
    ("Coffee Maker", (39, 189)),
    ("Electric Kettle", (19, 79)),
    ("Blender", (29, 159)),
    ("Air Fryer", (59, 199)),
    ("Desk Lamp", (15, 89)),
    ("Office Chair", (99, 449)),
    ("Yoga Mat", (15, 69)),
    ("Running Shoes", (49, 179)),
    ("Backpack", (25, 129)),
    ("Water Bottle", (9, 39)),
    ("Sunglasses", (19, 159)),
    ("Digital Camera", (199, 899)),
    ("Tablet Stand", (12, 59)),
    ("Portable Charger", (19, 79)),
    ("Hiking Boots", (79, 229)),
    ("Rain Jacket", (49, 199)),
    ("Throw Blanket", (19, 89)),
    ("Cast Iron Skillet", (19, 79)),
    ("Action Camera", (99, 399)),
)
STATUSES = ("pending", "processing", "delivered", "cancelled", "refunded")
_STATUS_WEIGHTS = (12, 12, 46, 10, 20)

_REFUND_ID = re.compile(r"^R-(\d+)$")
_TRANSFER_ID = re.compile(r"^T-(\d+)$")


def empty_database() -> Database:
    """A database with the retail tables and nothing in them."""
    return Database(KEYS)


def money(value: float) -> float:
    """Round a dollar amount to cents."""
    return round(value + 1e-9, 2)


def _next_id(db: Database, table: str, pattern: re.Pattern[str], prefix: str) -> str:
    """``<prefix>-NNNN``, one more than the highest such id (keys are the ids of these
    tables; :meth:`Database.max_number` is indexed, so this costs no scan)."""
    return f"{prefix}-{db.max_number(table, prefix + '-') + 1:04d}"


def next_refund_id(db: Database) -> str:
    """The id the next refund gets: ``R-`` and one more than the highest number so far."""
    return _next_id(db, "refunds", _REFUND_ID, "R")


def next_transfer_id(db: Database) -> str:
    """The id the next transfer to a human agent gets (``T-0001``, ``T-0002``, ...)."""
    return _next_id(db, "transfers", _TRANSFER_ID, "T")


def order_record(
    order_id: str,
    user: dict[str, Any],
    items: list[dict[str, Any]],
    status: str,
    created: date,
    delivered: date | None,
    refund_id: str | None = None,
) -> dict[str, Any]:
    """An order as the ``orders`` table holds it (shipped to the user's address)."""
    return {
        "order_id": order_id,
        "user_id": user["user_id"],
        "items": items,
        "total": order_total(items),
        "status": status,
        "created_at": created.isoformat(),
        "delivered_at": delivered.isoformat() if delivered else None,
        "shipping_address": user["address"],
        "refund_id": refund_id,
    }


def order_total(items: list[dict[str, Any]]) -> float:
    """Sum of price x quantity over an order's items."""
    return money(sum(float(i["price"]) * int(i["quantity"]) for i in items))


def make_address(rng: random.Random, zip_code: str) -> str:
    """A street address such as ``"482 Maple Avenue, Austin, TX 78704"``."""
    city, state = rng.choice(CITIES)
    return f"{rng.randint(10, 9899)} {rng.choice(STREETS)}, {city}, {state} {zip_code}"


def _products(rng: random.Random) -> list[dict[str, Any]]:
    products, used = [], set()
    for name, (low, high) in CATALOGUE:
        pid = f"P{rng.randint(100000, 999999)}"
        while pid in used:
            pid = f"P{rng.randint(100000, 999999)}"
        used.add(pid)
        price = money(rng.randint(low, high) - rng.choice((0.01, 0.05, 0.51, 0.0)))
        products.append({"product_id": pid, "name": name, "price": price})
    return products


def _users(rng: random.Random) -> list[dict[str, Any]]:
    users: list[dict[str, Any]] = []
    ids: set[str] = set()
    people: set[tuple[str, str, str]] = set()
    while len(users) < N_USERS:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        suffix = rng.randint(1000, 9999)
        zip_code = str(rng.randint(10000, 99999))
        user_id = f"{first.lower()}_{last.lower()}_{suffix}"
        if user_id in ids or (first, last, zip_code) in people:
            continue
        ids.add(user_id)
        people.add((first, last, zip_code))
        users.append(
            {
                "user_id": user_id,
                "first_name": first,
                "last_name": last,
                "email": f"{first.lower()}.{last.lower()}{suffix}@example.com",
                "zip": zip_code,
                "address": make_address(rng, zip_code),
            }
        )
    return users


def _order_dates(rng: random.Random, status: str) -> tuple[date, date | None]:
    today = REFERENCE_DATE
    if status == "pending":
        return today - timedelta(days=rng.randint(0, 2)), None
    if status == "processing":
        return today - timedelta(days=rng.randint(1, 4)), None
    if status == "cancelled":
        return today - timedelta(days=rng.randint(3, 90)), None
    created = today - timedelta(days=rng.randint(6, 120))
    delivered = min(created + timedelta(days=rng.randint(2, 7)), today)
    return created, delivered


def generate(seed: int) -> Database:
    """The retail database for ``seed``: 60 users, 26 products, 240 orders and the
    refunds of the refunded orders. Deterministic: uses ``random.Random(seed)`` only."""
    rng = random.Random(seed)
    db = empty_database()
    products = _products(rng)
    for product in products:
        db.insert("products", product)
    users = _users(rng)
    for user in users:
        db.insert("users", user)
    order_ids: set[str] = set()
    drafts = []
    for _ in range(N_ORDERS):
        order_id = f"#W{rng.randint(1000000, 9999999)}"
        while order_id in order_ids:
            order_id = f"#W{rng.randint(1000000, 9999999)}"
        order_ids.add(order_id)
        user = rng.choice(users)
        status = rng.choices(STATUSES, weights=_STATUS_WEIGHTS)[0]
        created, delivered = _order_dates(rng, status)
        picked = rng.sample(products, rng.choice((1, 1, 1, 2, 2, 3)))
        items = [
            {
                "product_id": p["product_id"],
                "name": p["name"],
                "price": p["price"],
                "quantity": rng.choice((1, 1, 1, 2)),
            }
            for p in picked
        ]
        refund_day = delivered + timedelta(days=rng.randint(0, 7)) if delivered else None
        drafts.append((order_id, user, status, created, delivered, items, refund_day))
    # refunds are numbered in the order they happened, as the refund tool would have
    refunded = sorted((d for d in drafts if d[2] == "refunded"), key=lambda d: (d[6], d[0]))
    refund_ids = {d[0]: f"R-{n:04d}" for n, d in enumerate(refunded, start=1)}
    for order_id, user, status, created, delivered, items, refund_day in drafts:
        order = order_record(order_id, user, items, status, created, delivered, refund_ids.get(order_id))
        db.insert("orders", order)
        if order_id in refund_ids:
            assert refund_day is not None
            db.insert(
                "refunds",
                {
                    "refund_id": refund_ids[order_id],
                    "order_id": order_id,
                    "amount": order["total"],
                    "created_at": min(refund_day, REFERENCE_DATE).isoformat(),
                },
            )
    return db
