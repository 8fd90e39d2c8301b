"""tau2's banking_knowledge domain: its transactional database (``TransactionalDB``), its
fixed clock and its deterministic ids (``utils.py``). Port of tau2-bench (Sierra
Research, MIT).

tau2's database is 23 tables, each ``{data: {record id: record}, notes: text}`` with
free-form records (no schema). In assay each becomes a table of the same name, each
record stored under its dict key (records need not carry it); the order of a table is
its dict's (new records last), which is the order tau2's queries list them in. The
``notes`` texts are documentation that no tool reads or changes; they are checked (a
string) and not kept.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...envs.state import Database, Record
from .store import DbSpec, TableSpec, Tau2DataError, merge
from .toolkit import clone


class DatabaseTable(BaseModel):
    """A database table with data and optional notes."""

    data: dict[str, dict[str, Any]] = Field(default_factory=dict)
    notes: str = ""


#: ``TransactionalDB``'s tables, in its field order.
TABLES = (
    "users",
    "accounts",
    "debit_cards",
    "referrals",
    "credit_card_applications",
    "user_discoverable_tools",
    "user_discoverable_tool_calls",
    "verification_history",
    "credit_card_transaction_history",
    "cash_back_disputes",
    "bank_account_transaction_history",
    "credit_card_accounts",
    "agent_discoverable_tools",
    "task_config",
    "human_transfer_requests",
    "transaction_disputes",
    "credit_card_orders",
    "debit_card_orders",
    "credit_card_closure_reasons",
    "credit_card_account_flags",
    "credit_limit_increase_requests",
    "payment_history",
    "debit_card_disputes",
)
#: The tables ``query_database_tool`` knows, in the order its error message lists them
#: (``db_query._load_databases``).
QUERYABLE = (
    "users",
    "accounts",
    "referrals",
    "credit_card_applications",
    "user_discoverable_tools",
    "user_discoverable_tool_calls",
    "agent_discoverable_tools",
    "task_config",
    "verification_history",
    "credit_card_transaction_history",
    "cash_back_disputes",
    "bank_account_transaction_history",
    "credit_card_accounts",
    "human_transfer_requests",
    "transaction_disputes",
    "credit_card_orders",
    "credit_card_closure_reasons",
    "credit_card_account_flags",
    "debit_cards",
    "debit_card_orders",
    "debit_card_disputes",
    "credit_limit_increase_requests",
    "payment_history",
)


class TransactionalDB(BaseModel):
    """Transactional database for the knowledge domain (tau2's ``DB``: no extra fields)."""

    model_config = ConfigDict(extra="forbid")

    users: DatabaseTable = Field(default_factory=DatabaseTable)
    accounts: DatabaseTable = Field(default_factory=DatabaseTable)
    debit_cards: DatabaseTable = Field(default_factory=DatabaseTable)
    referrals: DatabaseTable = Field(default_factory=DatabaseTable)
    credit_card_applications: DatabaseTable = Field(default_factory=DatabaseTable)
    user_discoverable_tools: DatabaseTable = Field(default_factory=DatabaseTable)
    user_discoverable_tool_calls: DatabaseTable = Field(default_factory=DatabaseTable)
    verification_history: DatabaseTable = Field(default_factory=DatabaseTable)
    credit_card_transaction_history: DatabaseTable = Field(default_factory=DatabaseTable)
    cash_back_disputes: DatabaseTable = Field(default_factory=DatabaseTable)
    bank_account_transaction_history: DatabaseTable = Field(default_factory=DatabaseTable)
    credit_card_accounts: DatabaseTable = Field(default_factory=DatabaseTable)
    agent_discoverable_tools: DatabaseTable = Field(default_factory=DatabaseTable)
    task_config: DatabaseTable = Field(default_factory=DatabaseTable)
    human_transfer_requests: DatabaseTable = Field(default_factory=DatabaseTable)
    transaction_disputes: DatabaseTable = Field(default_factory=DatabaseTable)
    credit_card_orders: DatabaseTable = Field(default_factory=DatabaseTable)
    debit_card_orders: DatabaseTable = Field(default_factory=DatabaseTable)
    credit_card_closure_reasons: DatabaseTable = Field(default_factory=DatabaseTable)
    credit_card_account_flags: DatabaseTable = Field(default_factory=DatabaseTable)
    credit_limit_increase_requests: DatabaseTable = Field(default_factory=DatabaseTable)
    payment_history: DatabaseTable = Field(default_factory=DatabaseTable)
    debit_card_disputes: DatabaseTable = Field(default_factory=DatabaseTable)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{where}: {err['msg']}"


def read_tables(content: Any, source: str) -> dict[str, dict[str, Record]]:
    """The tables of ``db.json``'s content, validated as tau2's ``TransactionalDB``."""
    try:
        db = TransactionalDB.model_validate(content)
    except ValidationError as exc:
        raise Tau2DataError(f"{source}: not a valid tau2 banking database: {_first_error(exc)}") from None
    return {name: dict(getattr(db, name).data) for name in TABLES}


def update_tables(db: Database, update: Mapping[str, Any]) -> None:
    """tau2's ``update_db`` on the banking database: each table object deep-merged into
    the current one (records merged key by key, new records last), then validated."""
    if not isinstance(update, Mapping):
        raise Tau2DataError("initialization data: expected a mapping of tables")
    for name, value in update.items():
        if name not in TABLES:
            raise Tau2DataError(f"initialization data names {name!r}, which the database does not have")
        try:
            table = DatabaseTable.model_validate(value)  # the shape; records are merged below
        except ValidationError as exc:
            raise Tau2DataError(f"initialization data: {name}.{_first_error(exc)}") from None
        for key in table.data:
            current = db.get(name, key)
            patch = value["data"][key]
            db.put(name, key, clone(merge(current, patch) if current is not None else patch))


DB_SPEC = DbSpec(
    TransactionalDB,
    tuple(TableSpec(name, "_id", DatabaseTable) for name in TABLES),
    plain=True,
    read=read_tables,
    update=update_tables,
)

# --- the fixed clock (utils.py) ----------------------------------------------------------
KNOWLEDGE_FIXED_DATE = date(2025, 11, 14)


def get_today_str() -> str:
    """'11/14/2025': the locked date of every scenario."""
    return KNOWLEDGE_FIXED_DATE.strftime("%m/%d/%Y")


def get_now() -> datetime:
    """2025-11-14 03:40:00: the locked time of every scenario."""
    return datetime(2025, 11, 14, 3, 40, 0)


# --- deterministic ids (utils.py) ---------------------------------------------------------
def deterministic_id(seed_string: str, length: int = 16) -> str:
    hash_bytes = hashlib.sha256(seed_string.encode()).digest()
    return hash_bytes[: length // 2].hex()


def generate_transaction_id(
    user_id: Any, credit_card_type: Any, merchant_name: Any, amount: Any, category: Any, date: Any = None
) -> str:
    seed_parts = ["transaction", user_id, credit_card_type, merchant_name, f"{amount:.2f}", category]
    if date:
        seed_parts.append(date)
    return f"txn_{deterministic_id(':'.join(seed_parts), length=12)}"


def generate_referral_id(referrer_id: Any, referred_account_type: Any, date: Any = None) -> str:
    seed_parts = ["referral", referrer_id, referred_account_type]
    if date:
        seed_parts.append(date)
    return deterministic_id(":".join(seed_parts), length=16)


def generate_application_id(
    card_type: Any, customer_name: Any, annual_income: Any, rho_bank_subscription: Any = False
) -> str:
    seed = f"credit_card:{card_type}:{customer_name}:{annual_income}:{rho_bank_subscription}"
    return deterministic_id(seed, length=16)


def generate_verification_id(user_id: Any, time_verified: Any) -> str:
    time_suffix = time_verified.replace(" ", "_").replace(":", "").replace("-", "")
    return f"{user_id}_{time_suffix}"


def generate_user_discoverable_tool_id(tool_name: Any) -> str:
    return deterministic_id(f"user_discoverable_tool:{tool_name}", length=16)


def generate_user_discoverable_tool_call_id(tool_name: Any, arguments: Any) -> str:
    seed = f"user_discoverable_tool_call:{tool_name}:{json.dumps(arguments, sort_keys=True)}"
    return deterministic_id(seed, length=16)


def generate_dispute_id(user_id: Any, transaction_id: Any) -> str:
    return f"dsp_{deterministic_id(f'dispute:{user_id}:{transaction_id}', length=12)}"


def generate_referral_link_id(user_id: Any, card_name: Any) -> str:
    return deterministic_id(f"referral_link:{user_id}:{card_name}", length=16)


def generate_agent_discoverable_tool_id(tool_name: Any) -> str:
    return deterministic_id(f"agent_discoverable_tool:{tool_name}", length=16)


def generate_credit_card_order_id(credit_card_account_id: Any, user_id: Any, reason: Any) -> str:
    seed = f"credit_card_order:{credit_card_account_id}:{user_id}:{reason}"
    return f"ccord_{deterministic_id(seed, length=12)}"


def generate_closure_reason_id(credit_card_account_id: Any, user_id: Any) -> str:
    return f"clsr_{deterministic_id(f'closure_reason:{credit_card_account_id}:{user_id}', length=12)}"


def generate_account_flag_id(credit_card_account_id: Any, flag_type: Any, expiration_date: Any) -> str:
    seed = f"account_flag:{credit_card_account_id}:{flag_type}:{expiration_date}"
    return f"ccflag_{deterministic_id(seed, length=12)}"


def generate_credit_limit_increase_request_id(
    credit_card_account_id: Any, user_id: Any, requested_increase_amount: Any
) -> str:
    seed = f"cli_request:{credit_card_account_id}:{user_id}:{requested_increase_amount:.2f}"
    return f"cli_{deterministic_id(seed, length=12)}"


def generate_debit_card_order_id(account_id: Any, user_id: Any, delivery_option: Any) -> str:
    seed = f"debit_card_order:{account_id}:{user_id}:{delivery_option}"
    return f"dcord_{deterministic_id(seed, length=12)}"


def generate_debit_card_id(account_id: Any, user_id: Any, issue_date: Any) -> str:
    return f"dbc_{deterministic_id(f'debit_card:{account_id}:{user_id}:{issue_date}', length=12)}"


__all__ = [
    "DB_SPEC",
    "QUERYABLE",
    "TABLES",
    "DatabaseTable",
    "TransactionalDB",
    "deterministic_id",
    "get_now",
    "get_today_str",
    "read_tables",
    "update_tables",
]
