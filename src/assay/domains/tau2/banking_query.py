"""tau2's banking_knowledge queries (``db_query.py``) and the helpers its tools share
(``tools.py``: balances, PIN rules, the discoverable tools' docstring reading). Port of
tau2-bench (Sierra Research, MIT).

Everything works on a :class:`~.toolkit.Tau2Context` where tau2 works on its database
object; the code keeps tau2's order of operations, so odd arguments fail with the same
Python errors (a dict key that is a list: ``unhashable type: 'list'``).
"""

from __future__ import annotations

import inspect
import json
import operator
import re
from collections.abc import Callable
from typing import Any

from .banking_models import QUERYABLE, TABLES
from .toolkit import Tau2Context

_QUERYABLE = dict.fromkeys(QUERYABLE)
_TABLES = dict.fromkeys(TABLES)

# --- records -----------------------------------------------------------------------------


def exists(ctx: Tau2Context, table: str, key: Any) -> bool:
    """``key in db.<table>.data`` (a key that is not hashable raises TypeError)."""
    return ctx.read(table, key) is not None


def record(ctx: Tau2Context, table: str, key: Any) -> dict[str, Any]:
    """``db.<table>.data[key]`` for changing in place (the caller checked it exists)."""
    found = ctx.get(table, key)
    if found is None:
        raise KeyError(key)
    return found


# --- db_query.py -------------------------------------------------------------------------


def _ops() -> dict[str, Callable[[Any, Any], bool]]:
    return {
        "eq": operator.eq,
        "ne": operator.ne,
        "gt": operator.gt,
        "gte": operator.ge,
        "lt": operator.lt,
        "lte": operator.le,
        "contains": lambda a, b: b in a if a is not None else False,
        "startswith": lambda a, b: str(a).startswith(str(b)) if a is not None else False,
        "endswith": lambda a, b: str(a).endswith(str(b)) if a is not None else False,
        "in": lambda a, b: a in b,
        "nin": lambda a, b: a not in b,
    }


_OPS = _ops()


def _parse_constraint(key: str, value: Any) -> tuple[str, str, Any]:
    if "__" in key:
        field_name, op_name = key.rsplit("__", 1)
    else:
        field_name, op_name = key, "eq"
    return field_name, op_name, value


def _record_matches(record: dict[str, Any], constraints: dict[str, Any]) -> bool:
    for key, value in constraints.items():
        field_name, op_name, expected = _parse_constraint(key, value)
        actual = record.get(field_name)
        compare = _OPS.get(op_name, operator.eq)
        try:
            if not compare(actual, expected):
                return False
        except (TypeError, ValueError):
            return False
    return True


def list_databases(db: Tau2Context) -> list[str]:
    return list(QUERYABLE)


def query_db(
    db_name: str, db: Tau2Context, return_ids: bool = False, limit: int | None = None, **constraints: Any
) -> list[Any]:
    """Records of ``db_name`` matching every ``field[__op]=value`` constraint, in table
    order (``(record id, record)`` pairs with ``return_ids``)."""
    if db_name not in _QUERYABLE:
        return []
    results: list[Any] = []
    for record_id, rec in db.items(db_name):
        if _record_matches(rec, constraints):
            results.append((record_id, rec) if return_ids else rec)
            if limit is not None and len(results) >= limit:
                break
    return results


def add_to_db(db_name: str, record_id: Any, rec: dict[str, Any], db: Tau2Context) -> bool:
    """Add a record; False when the table does not exist or the id is taken."""
    if db_name not in _TABLES:
        return False
    if exists(db, db_name, record_id):
        return False
    db.put(db_name, record_id, rec)
    return True


def update_record_in_db(
    db_name: str, db: Tau2Context, record_id: Any, updates: dict[str, Any]
) -> tuple[bool, dict[str, Any] | None]:
    """Set fields of a record; ``(False, None)`` when it does not exist."""
    if db_name not in _TABLES:
        return False, None
    if not exists(db, db_name, record_id):
        return False, None
    rec = record(db, db_name, record_id)
    for field, value in updates.items():
        rec[field] = value
    return True, rec


def query_database_tool(database_name: Any, constraints: Any = "{}", db: Tau2Context | None = None) -> str:
    """tau2's text listing of a query: ``Found N record(s) in 'table':`` then each
    record's fields, or ``No records found in 'table'.``, or an ``Error: ...`` text."""
    if db is None:
        return "Error: TransactionalDB instance required"
    try:
        available_dbs = list_databases(db)
        if database_name not in available_dbs:
            return f"Error: Database '{database_name}' not found. Available: {available_dbs}"
        try:
            constraint_dict = json.loads(constraints) if constraints else {}
        except json.JSONDecodeError as e:
            return f"Error: Invalid JSON: {e}"
        results = query_db(database_name, db=db, return_ids=True, **constraint_dict)
        if not results:
            return f"No records found in '{database_name}'."
        formatted_lines = [f"Found {len(results)} record(s) in '{database_name}':\n"]
        for i, (record_id, rec) in enumerate(results, 1):
            formatted_lines.append(f"{i}. Record ID: {record_id}")
            for field, value in rec.items():
                formatted_lines.append(f"   {field}: {value}")
            formatted_lines.append("")
        return "\n".join(formatted_lines)
    except Exception as e:
        return f"Error querying database: {e!s}"


def found(result: str) -> bool:
    """tau2's test that a query text found something."""
    return "No records found" not in result and "No results found" not in result


def listing(ctx: Tau2Context, table: str, field: str, value: Any, head: list[str], none: str) -> str:
    """The history tools' text: ``head``'s lines, then the records of ``table`` whose
    ``field`` is ``value``, or ``none`` when there are none."""
    result = query_database_tool(table, f'{{"{field}": "{value}"}}', db=ctx)
    return "\n".join([*head, result if found(result) else none])


# --- tools.py helpers --------------------------------------------------------------------


def parse_balance(val: Any) -> float:
    """A balance that may be a number or a text like '$2,850.00'."""
    if isinstance(val, (int, float)):
        return float(val)
    if isinstance(val, str):
        return float(val.replace("$", "").replace(",", ""))
    return 0.0


def account_balance(account: dict[str, Any]) -> float:
    """An account's balance from 'current_holdings', else 'balance'."""
    return parse_balance(account.get("current_holdings", account.get("balance", 0)))


_SEQUENTIAL_PINS = (
    "0123 1234 2345 3456 4567 5678 6789 9876 8765 7654 6543 5432 4321 3210".split()  # noqa: SIM905
)


def validate_pin(pin: Any) -> str | None:
    """None when a PIN meets the rules, else the reason."""
    if not pin or not pin.isdigit() or len(pin) != 4:
        return "PIN must be exactly 4 digits."
    if pin in _SEQUENTIAL_PINS:
        return "PIN cannot be sequential (e.g., 1234). Please choose a more secure PIN."
    if len(set(pin)) == 1:
        return "PIN cannot be all the same digit (e.g., 1111). Please choose a more secure PIN."
    return None


def parse_discoverable_tool_docstring(func: Callable[..., Any]) -> dict[str, Any]:
    """A discoverable tool's docstring as tau2 reads it: description, parameters
    (``name (type[, optional]): text``) and success message (the Returns line)."""
    docstring = inspect.getdoc(func) or ""
    parts = re.split(r"\n\s*Args:\s*\n", docstring, maxsplit=1)
    description = parts[0].strip()
    parameters: dict[str, dict[str, Any]] = {}
    success_message = "Action completed successfully."
    if len(parts) > 1:
        returns_split = re.split(r"\n\s*Returns:\s*\n", parts[1], maxsplit=1)
        args_section = returns_split[0]
        if len(returns_split) > 1:
            success_message = returns_split[1].strip().split("\n")[0].strip()
        arg_pattern = re.compile(r"^\s*(\w+)\s*(?:\(([^)]+)\))?\s*:\s*(.+?)$", re.MULTILINE)
        for match in arg_pattern.finditer(args_section):
            type_info = match.group(2) or "string"
            param_type = re.sub(r",?\s*optional", "", type_info, flags=re.IGNORECASE).strip()
            parameters[match.group(1)] = {
                "type": param_type or "string",
                "description": match.group(3).strip(),
                "required": "optional" not in type_info.lower(),
            }
    return {
        "name": func.__name__,
        "description": description,
        "parameters": parameters,
        "success_message": success_message,
    }


def format_discoverable_tool_for_agent(tool_info: dict[str, Any]) -> str:
    """A discoverable tool as the agent is shown it when it unlocks it."""
    param_strs = []
    for param_name, param_def in tool_info.get("parameters", {}).items():
        req_str = " (required)" if param_def.get("required", True) else " (optional)"
        param_strs.append(
            f"  - {param_name}: {param_def.get('type', 'string')}{req_str} - {param_def.get('description', '')}"
        )
    params_section = "\n".join(param_strs) if param_strs else "  (no parameters)"
    return (
        f"Tool: {tool_info['name']}\nDescription: {tool_info['description']}\nParameters:\n{params_section}"
    )


__all__ = [
    "account_balance",
    "add_to_db",
    "exists",
    "format_discoverable_tool_for_agent",
    "found",
    "listing",
    "parse_balance",
    "parse_discoverable_tool_docstring",
    "query_database_tool",
    "query_db",
    "record",
    "update_record_in_db",
    "validate_pin",
]
