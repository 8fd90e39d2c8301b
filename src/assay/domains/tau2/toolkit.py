"""tau2 tools as assay tools: the same names, descriptions, JSON schemas, call
semantics and error texts.

tau2 builds a tool from a method: the description is the docstring's short and long
description (``docstring_parser``), the parameters are a pydantic model named
``parameters`` made of the annotations plus the ``Args:`` texts, and a call passes the
model's arguments to the method *unvalidated* (``method(**arguments)``), so a wrong
argument surfaces as Python's own ``TypeError`` and every exception becomes the tool
message ``"Error: <exception>"``. :class:`Tau2Tool` reproduces each of these.

Tools work on :class:`Tau2Context`: tau2 mutates its pydantic models in place, so a
tool that fails half-way keeps the changes it made before failing. A context checks
records out (deep copies), and :meth:`Tau2Context.commit` writes back every record that
changed, whether the tool returned or raised.
"""

from __future__ import annotations

import inspect
import random
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, Field, create_model

from ...envs.state import Database, Record
from ...envs.tools import Caller, InvalidToolCall, Tool, ToolContext, ToolError

# --- docstrings, as docstring_parser reads them ------------------------------------

_SECTIONS = (
    "Arguments",
    "Args",
    "Parameters",
    "Params",
    "Raises",
    "Exceptions",
    "Except",
    "Attributes",
    "Example",
    "Examples",
    "Returns",
    "Yields",
)
_TITLES = re.compile("^(" + "|".join(f"({t})" for t in _SECTIONS) + "):[ \t\r\f\v]*$", flags=re.M)
_PARAM_SECTIONS = {"Arguments", "Args", "Parameters", "Params", "Attributes"}
_SINGULAR_OR_MULTIPLE = {"Returns", "Yields"}
_SINGULAR = {"Example", "Examples"}


def _split_description(desc_chunk: str) -> tuple[str, str]:
    parts = desc_chunk.split("\n", 1)
    short = parts[0]
    long = parts[1].strip() if len(parts) > 1 else ""
    return short, long


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The tool description and per-argument texts tau2 derives from a docstring
    (``docstring_parser.parse`` in its automatic mode: the Google reading when it finds
    sections, else the plain one; short and long descriptions joined by a blank line)."""
    text = inspect.cleandoc(doc or "")
    if not text:
        return "", {}
    params: dict[str, str] = {}
    metas = 0
    match = _TITLES.search(text)
    if match:
        desc_chunk, meta_chunk = text[: match.start()], text[match.start() :]
        titles = list(_TITLES.finditer(meta_chunk))
        bounds = [
            (m.end(), titles[i + 1].start() if i + 1 < len(titles) else len(meta_chunk))
            for i, m in enumerate(titles)
        ]
        for m, (start, end) in zip(titles, bounds, strict=True):
            title = m.group(1)
            details = meta_chunk[start:end]
            unknown = re.search(r"\n\S", details)
            if unknown is not None:
                details = details[: unknown.start()]
            chunk = details.strip("\n")
            if not chunk:
                continue
            if title in _SINGULAR or title in _SINGULAR_OR_MULTIPLE:
                metas += 1
                continue
            indent = re.match(r"^\s*", chunk).group()  # type: ignore[union-attr]
            starts = list(re.finditer("^" + indent + r"(?=\S)", chunk, flags=re.M))
            for i, item in enumerate(starts):
                part = chunk[item.end() : starts[i + 1].start() if i + 1 < len(starts) else len(chunk)].strip(
                    "\n"
                )
                metas += 1
                if title not in _PARAM_SECTIONS or ":" not in part:
                    continue
                before, desc = part.split(":", 1)
                if desc:
                    desc = desc[1:] if desc[0] == " " else desc
                    if "\n" in desc:
                        first, rest = desc.split("\n", 1)
                        desc = first + "\n" + inspect.cleandoc(rest)
                    desc = desc.strip("\n")
                typed = re.match(r"\s*(.+?)\s*\(\s*(.*[^\s]+)\s*\)", before)
                params[typed.group(1) if typed else before] = desc
    if not match or metas == 0:  # the plain reading: description up to a line starting with ':'
        colon = re.search("^:", text, flags=re.M)
        desc_chunk = text[: colon.start()] if colon else text
    short, long = _split_description(desc_chunk)
    return (f"{short}\n\n{long}" if long else short), params


# --- context ---------------------------------------------------------------------


def clone(value: Any) -> Any:
    """A deep copy of a JSON-like value (dicts, lists, scalars)."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) for v in value]
    return value


class Tau2Context:
    """What a tau2 tool or function works on: the state, checked out record by record
    for in-place changes, the environment's seeded generator, and what tau2 keeps on
    its toolkit objects rather than in the database: ``session`` (changed by tools, e.g.
    banking's unlocked tools; reset with the environment) and ``options`` (fixed for an
    environment, e.g. its data folder)."""

    __slots__ = ("_new", "_original", "_out", "caller", "db", "options", "rng", "session")

    def __init__(
        self,
        db: Database,
        rng: random.Random | None = None,
        caller: Caller = "agent",
        session: dict[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
    ):
        self.db = db
        self.rng = rng if rng is not None else random.Random(0)
        self.caller = caller
        self.session: dict[str, Any] = session if session is not None else {}
        self.options: Mapping[str, Any] = options if options is not None else {}
        self._out: dict[tuple[str, str], Record] = {}
        self._original: dict[tuple[str, str], Record] = {}
        self._new: list[tuple[str, str]] = []

    def get(self, table: str, key: Any) -> Record | None:
        """The record ``key`` of ``table`` as a mutable copy (None if absent); changes to
        it are written back by :meth:`commit`. ``key`` follows dict semantics: an
        unhashable key raises TypeError, a key of another type is not found."""
        hash(key)
        if not isinstance(key, str):
            return None
        slot = (table, key)
        found = self._out.get(slot)
        if found is not None:
            return found
        record = self.db.get(table, key)
        if record is None:
            return None
        copy = clone(record)
        self._out[slot] = copy
        self._original[slot] = record
        return copy

    def read(self, table: str, key: Any) -> Record | None:
        """The record as it stands now, read-only (no copy)."""
        hash(key)
        if not isinstance(key, str):
            return None
        found = self._out.get((table, key))
        return found if found is not None else self.db.get(table, key)

    def rows(self, table: str) -> Iterator[Record]:
        """Every record of ``table`` in order (read-only), seeing this call's changes."""
        field = self.db.keys[table]
        for record in self.db.rows(table):
            yield self._out.get((table, str(record[field])), record)
        for slot in self._new:
            if slot[0] == table:
                yield self._out[slot]

    def items(self, table: str) -> Iterator[tuple[str, Record]]:
        """``(key, record)`` of every record of ``table`` in order (read-only), seeing this
        call's changes: for tables keyed by a dict key rather than a field."""
        for key, record in self.db.items(table):
            yield key, self._out.get((table, key), record)
        for slot in self._new:
            if slot[0] == table:
                yield slot[1], self._out[slot]

    def put(self, table: str, key: str, record: Record) -> Record:
        """Add a new record (appended after the existing ones, as tau2 appends)."""
        slot = (table, key)
        if slot not in self._out and self.db.get(table, key) is None:
            self._new.append(slot)
        self._out[slot] = record
        return record

    def commit(self) -> None:
        """Write back every checked-out record that changed."""
        for slot, record in self._out.items():
            if slot not in self._original or self._original[slot] != record:
                self.db.put(slot[0], slot[1], record)
        self._out.clear()
        self._original.clear()
        self._new.clear()


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
