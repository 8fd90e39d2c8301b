"""Pieces several tau2 domains share: the ``calculate`` tool's arithmetic and the fixed
texts of ``transfer_to_human_agents``."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from .store import dump
from .toolkit import clone

_ALLOWED = "0123456789+-*/(). "
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
MAX_EXPONENT = 10_000

TRANSFER_DOC = """
        Transfer the user to a human agent, with a summary of the user's issue.
        Only transfer if
         -  the user explicitly asks for a human agent
         -  given the policy and the available tools, you cannot solve the user's issue.

        Args:
            summary: A summary of the user's issue.

        Returns:
            A message indicating the user has been transferred to a human agent.
        """

CALCULATE_DOC = """
        Calculate the result of a mathematical expression.

        Args:
            expression: The mathematical expression to calculate, such as '2 + 2'. The expression can contain numbers, operators (+, -, *, /), parentheses, and spaces.

        Returns:
            The result of the mathematical expression.

        Raises:
            ValueError: If the expression is invalid.
        """


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        big = isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT
        if isinstance(node.op, ast.Pow) and big and isinstance(left, (int, float)) and abs(left) > 1:
            raise ValueError("Exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Call):
        func = _evaluate(node.func)
        raise TypeError(f"'{type(func).__name__}' object is not callable")
    raise ValueError("Invalid characters in expression")


def calculate_expression(expression: Any) -> str:
    """tau2's ``calculate``: the expression (digits, ``+-*/``, parentheses, dots and
    spaces only) evaluated as Python evaluates it, rounded to 2 decimals, as text.
    The one difference: an exponent beyond 10,000 is refused instead of hanging."""
    if not all(char in _ALLOWED for char in expression):
        raise ValueError("Invalid characters in expression")
    tree = compile(expression.lstrip(" \t"), "<string>", "eval", ast.PyCF_ONLY_AST)
    return str(round(float(_evaluate(tree)), 2))


def doc(text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a tool function a docstring shared by several domains."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__doc__ = text
        return fn

    return wrap


def as_record(value: Any) -> Any:
    """A value assigned into a record: a model as its dump, anything else as it is
    (tau2 assigns without validating)."""
    return dump(value) if isinstance(value, BaseModel) else clone(value)


__all__ = ["CALCULATE_DOC", "TRANSFER_DOC", "as_record", "calculate_expression", "doc"]
