"""tau2 tools as assay tools: the same names, descriptions, JSON schemas, call
semantics and error texts.

tau2 builds a tool from a method: the description is the docstring's short and long
description (``docstring_parser``), the parameters are a pydantic model named
``parameters`` made of the annotations plus the ``Args:`` texts, and a call passes the
model's arguments to the method *unvalidated* (``method(**arguments)``), so a wrong
argument surfaces as Python's own ``TypeError`` and every exception becomes the tool
message ``"Error: <exception>"``. :class:`Tau2Tool` reproduces each of these.

Tools work on :class:`Tau2Context` (:mod:`.context`, with :func:`clone`); a tool's
description and argument texts are read from its docstring by :func:`parse_docstring`
(:mod:`.docstrings`). The three are exported here too, where the domains import them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, Field, create_model

from ...envs.tools import Caller, InvalidToolCall, Tool, ToolContext, ToolError
from .context import Tau2Context, clone
from .docstrings import parse_docstring

# --- tools -----------------------------------------------------------------------

Fn = Callable[..., Any]


def _names_list(names: list[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return f"{quoted[0]} and {quoted[1]}"
    return ", ".join(quoted[:-1]) + f", and {quoted[-1]}"


class Signature:
    """A function's parameters (after ``ctx``) and the errors Python gives a bad call."""

    def __init__(self, fn: Fn, qualname: str, module: str = ""):
        params = list(inspect.signature(fn).parameters.values())[1:]
        self.qualname = qualname
        self.module = module
        """tau2's module of the method (Python names it in the ``**`` error)."""
        self.names = [p.name for p in params]
        self.required = [p.name for p in params if p.default is inspect.Parameter.empty]

    def check(self, args: Any) -> dict[str, Any]:
        """``args`` as keyword arguments of the bound method, or the TypeError text
        Python would raise."""
        if not isinstance(args, dict):
            where = f"{self.module}.{self.qualname}" if self.module else self.qualname
            raise TypeError(f"{where}() argument after ** must be a mapping, not {type(args).__name__}")
        for name in args:
            if name == "self":  # bound to the toolkit already
                raise TypeError(f"{self.qualname}() got multiple values for argument 'self'")
            if name not in self.names:
                raise TypeError(f"{self.qualname}() got an unexpected keyword argument '{name}'")
        missing = [n for n in self.required if n not in args]
        if missing:
            s = "s" if len(missing) > 1 else ""
            raise TypeError(
                f"{self.qualname}() missing {len(missing)} required positional argument{s}: {_names_list(missing)}"
            )
        return dict(args)


def tau2_parameters(fn: Fn, arg_docs: dict[str, str]) -> dict[str, Any]:
    """The JSON schema tau2 gives a tool's parameters (``create_model("parameters")``)."""
    hints = get_type_hints(fn)
    fields: dict[str, Any] = {}
    for p in list(inspect.signature(fn).parameters.values())[1:]:
        anno = hints.get(p.name, Any)
        default = ... if p.default is inspect.Parameter.empty else p.default
        if p.name in arg_docs:
            default = Field(default, description=arg_docs[p.name])
        fields[p.name] = (anno, default)
    model: type[BaseModel] = create_model("parameters", **fields)
    return model.model_json_schema()


class Tau2Tool(Tool):
    """A tau2 tool: tau2's description and schema; arguments passed unvalidated; every
    exception of the tool turned into a :class:`ToolError` with tau2's text."""

    def __init__(self, fn: Fn, *, owner: str, write: bool, for_: Caller, module: str = ""):
        self.fn = fn
        self.name = fn.__name__
        self.write = write
        self.for_ = for_
        self.signature = Signature(fn, f"{owner}.{self.name}", module)
        self.description, arg_docs = parse_docstring(fn.__doc__)
        self.description = self.description or self.name
        self.parameters = tau2_parameters(fn, arg_docs)
        self._arg_names = self.signature.names

    def validate(self, args: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.signature.check(args)
        except TypeError as exc:
            raise InvalidToolCall(str(exc)) from None

    def run(self, ctx: Tau2Context, args: dict[str, Any]) -> Any:
        """Run on ``ctx`` (changes committed even when the tool raises)."""
        kwargs = self.validate(args)
        try:
            return self.fn(ctx, **kwargs)
        except ToolError:
            raise
        except Exception as exc:
            raise ToolError(str(exc)) from exc
        finally:
            ctx.commit()

    def __call__(self, ctx: Any, args: dict[str, Any]) -> Any:
        if isinstance(ctx, ToolContext):
            ctx = Tau2Context(ctx.db, ctx.rng, ctx.caller)
        return self.run(ctx, args)

    def __repr__(self) -> str:
        return f"Tau2Tool({self.name!r}, write={self.write}, for_={self.for_!r})"


class Tau2Toolkit:
    """The tools and plain functions of one tau2 toolkit class (e.g. ``AirlineTools``):
    tools in declaration order (tau2's order), functions callable by name from a task's
    initialization actions and environment assertions."""

    def __init__(self, owner: str, caller: Caller = "agent", order: tuple[str, ...] = (), module: str = ""):
        self.owner = owner
        self.caller: Caller = caller
        self.order = order
        self.module = module
        """tau2's module defining the toolkit class (e.g. ``tau2.domains.banking_knowledge.tools``)."""
        """tau2's tool order (its class's definition order); tools may be declared in
        several modules."""
        self._tools: list[Tau2Tool] = []
        self.discoverable: dict[str, Tau2Tool] = {}
        """tau2's discoverable tools (``is_discoverable_tool``), in definition order: not
        offered to the model, callable by name, and unlocked or given at run time."""
        self.functions: dict[str, Signature] = {}
        self._fns: dict[str, Fn] = {}

    @property
    def tools(self) -> list[Tau2Tool]:
        """The tools, in tau2's order."""
        rank = {name: i for i, name in enumerate(self.order)}
        return sorted(self._tools, key=lambda t: rank.get(t.name, len(rank)))

    def tool(self, *, write: bool = False, owner: str | None = None) -> Callable[[Fn], Fn]:
        """Declare a tool (``write``: tau2's ``mutates_state``; ``owner``: the class that
        defines it in tau2, when not the toolkit's own, e.g. a mixin)."""

        def wrap(fn: Fn) -> Fn:
            self._tools.append(
                Tau2Tool(fn, owner=owner or self.owner, write=write, for_=self.caller, module=self.module)
            )
            self._register(fn)
            return fn

        return wrap

    def discoverable_tool(self, *, write: bool = False) -> Callable[[Fn], Fn]:
        """Declare a discoverable tool (tau2's ``is_discoverable_tool``): callable by name
        like a tool, never offered."""

        def wrap(fn: Fn) -> Fn:
            self.discoverable[fn.__name__] = Tau2Tool(
                fn, owner=self.owner, write=write, for_=self.caller, module=self.module
            )
            self._register(fn)
            return fn

        return wrap

    def function(self, fn: Fn) -> Fn:
        """Declare a plain method of the toolkit (not offered as a tool)."""
        self._register(fn)
        return fn

    def _register(self, fn: Fn) -> None:
        self._fns[fn.__name__] = fn
        self.functions[fn.__name__] = Signature(fn, f"{self.owner}.{fn.__name__}", self.module)

    def call_function(self, ctx: Tau2Context, name: str, arguments: dict[str, Any]) -> Any:
        """Call a tool or function by name as tau2's ``getattr(toolkit, name)(**args)``
        does; exceptions propagate (changes made before them are committed)."""
        fn = self._fns.get(name)
        if fn is None:
            raise AttributeError(f"'{self.owner}' object has no attribute '{name}'")
        kwargs = self.functions[name].check(arguments)
        try:
            return fn(ctx, **kwargs)
        finally:
            ctx.commit()


Requestor = Literal["assistant", "user"]


def caller_of(requestor: str) -> Caller:
    """tau2's requestor (``assistant`` / ``user``) as an assay caller."""
    return "user" if requestor == "user" else "agent"


__all__ = [
    "Requestor",
    "Signature",
    "Tau2Context",
    "Tau2Tool",
    "Tau2Toolkit",
    "caller_of",
    "clone",
    "parse_docstring",
    "tau2_parameters",
]
