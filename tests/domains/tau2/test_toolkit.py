"""The port's tools declare what tau2's do: the same tools in the same order, the same
descriptions and argument texts (read from tau2's reference source), the same
state-changing flags, and tau2's rendering and call-error texts."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from assay.domains.tau2.render import Model, to_json_str
from assay.domains.tau2.specs import domain_spec
from assay.domains.tau2.toolkit import Tau2Toolkit, parse_docstring
from assay.envs.tools import InvalidToolCall

SOURCES = {
    ("airline", "agent"): ("airline/tools.py", "AirlineTools"),
    ("retail", "agent"): ("retail/tools.py", "RetailTools"),
    ("telecom", "agent"): ("telecom/tools.py", "TelecomTools"),
    ("telecom", "user"): ("telecom/user_tools.py", "TelecomUserTools"),
    ("mock", "agent"): ("mock/tools.py", "MockTools"),
    ("mock", "user"): ("mock/user_tools.py", "MockUserTools"),
}


def _reference_tools(root: Path, file: str, cls: str) -> list[tuple[str, list[str], str, bool]]:
    tree = ast.parse((root / "reference" / "tau2" / "domains" / file).read_text(encoding="utf-8"))
    klass = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    out = []
    for node in klass.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        marks = [ast.unparse(d) for d in node.decorator_list]
        if not any(m.startswith("is_tool") for m in marks):
            continue
        args = [a.arg for a in node.args.args[1:]]
        out.append(
            (node.name, args, ast.get_docstring(node, clean=False) or "", any("WRITE" in m for m in marks))
        )
    return out


def _toolkit(domain: str, side: str) -> Tau2Toolkit:
    spec = domain_spec(domain)
    kit = spec.tools if side == "agent" else spec.user_tools
    assert kit is not None
    return kit


@pytest.mark.parametrize(("domain", "side"), list(SOURCES))
def test_tools_match_tau2_source(root: Path, domain: str, side: str) -> None:
    file, cls = SOURCES[(domain, side)]
    reference = _reference_tools(root, file, cls)
    kit = _toolkit(domain, side)
    assert kit.owner == cls
    assert [t.name for t in kit.tools] == [name for name, *_ in reference]
    for tool, (name, args, docstring, write) in zip(kit.tools, reference, strict=True):
        description, arg_docs = parse_docstring(docstring)
        assert tool.description == (description or name), name
        assert tool.signature.names == args, name
        assert tool.write == write, name
        props = tool.parameters.get("properties", {})
        assert list(props) == args, name
        assert {a: props[a].get("description") for a in arg_docs} == arg_docs, name


def test_docstrings_read_as_docstring_parser_reads_them() -> None:
    doc = """Cancel a pending order. If the order is already processed or delivered,
        it cannot be cancelled.

        Args:
            order_id: The order id, such as '#W0000000'.
            payment_method_id: The payment method id,
                             such as 'gift_card_0000000'.
            reason: The reason.

        Returns:
            Order: The order details after the cancellation.
        """
    description, args = parse_docstring(doc)
    short, long = (
        "Cancel a pending order. If the order is already processed or delivered,",
        "it cannot be cancelled.",
    )
    assert description == f"{short}\n\n{long}"
    assert args == {
        "order_id": "The order id, such as '#W0000000'.",
        "payment_method_id": "The payment method id,\nsuch as 'gift_card_0000000'.",
        "reason": "The reason.",
    }
    assert parse_docstring("Toggles X.\n        Returns the new state.\n        ") == (
        "Toggles X.\n\nReturns the new state.",
        {},
    )


def test_schema_is_tau2s_parameters_model() -> None:
    tool = next(t for t in domain_spec("airline").tools.tools if t.name == "book_reservation")
    schema = tool.parameters
    assert schema["title"] == "parameters"
    assert schema["properties"]["cabin"]["enum"] == ["business", "economy", "basic_economy"]
    assert schema["properties"]["flights"]["items"]["anyOf"][0] == {"$ref": "#/$defs/FlightInfo"}
    assert schema["$defs"]["Payment"]["properties"]["amount"]["type"] == "integer"
    assert schema["required"] == list(schema["properties"])
    limit = next(t for t in domain_spec("telecom").tools.tools if t.name == "get_bills_for_customer")
    assert limit.parameters["properties"]["limit"]["default"] == 12 and limit.parameters["required"] == [
        "customer_id"
    ]


def test_rendering_follows_tau2_to_json_str() -> None:
    assert to_json_str("plain text") == "plain text"
    assert to_json_str({"charge": 4.0, "ok": True, "n": None, "m": Model({"x": 4.0, "é": [1]})}) == (
        '{"charge": "4.0", "ok": "True", "n": null, "m": {"x": 4.0, "\\u00e9": [1]}}'
    )
    assert to_json_str([Model({"b": 1, "a": 2})]) == '[{"b": 1, "a": 2}]'
    assert json.loads(to_json_str(3)) == "3"


def test_bad_calls_give_pythons_error_texts() -> None:
    tool = next(t for t in domain_spec("airline").tools.tools if t.name == "update_reservation_baggages")
    with pytest.raises(InvalidToolCall) as missing_one:
        tool.validate({"reservation_id": "X", "total_baggages": 1, "nonfree_baggages": 0})
    assert str(missing_one.value) == (
        "AirlineTools.update_reservation_baggages() missing 1 required positional argument: 'payment_id'"
    )
    with pytest.raises(InvalidToolCall) as missing_three:
        tool.validate({"reservation_id": "X"})
    assert str(missing_three.value).endswith(
        "missing 3 required positional arguments: 'total_baggages', 'nonfree_baggages', and 'payment_id'"
    )
    with pytest.raises(InvalidToolCall) as extra:
        tool.validate({"reservation_id": "X", "bags": 1})
    assert (
        str(extra.value)
        == "AirlineTools.update_reservation_baggages() got an unexpected keyword argument 'bags'"
    )
