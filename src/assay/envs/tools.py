"""Declaring tools: a decorator that derives the JSON schema from type hints and the
docstring, validates arguments, and turns misuse into :class:`ToolError` messages an
agent can act on."""

from __future__ import annotations

import inspect
import json
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from ..core.messages import ToolSpec
from .state import Database

Caller = Literal["agent", "user"]


class ToolError(Exception):
    """A tool call the tool refuses. The message is shown to the caller verbatim, so it
    says what was wrong and what would be right ("order #W123 is pending, not
    delivered; refunds apply to delivered orders")."""


class InvalidToolCall(ToolError):
    """The call itself is malformed: unknown tool, missing or mistyped argument."""


class _LazyRandom:
    """The ``rng`` field of :class:`ToolContext`: a ``random.Random`` made from the
    context's ``seed`` the first time a tool reads it (most tool calls never draw a
    random number, so most never pay for seeding one, about 20 us)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return None  # the field's default: made on first use
        value = getattr(obj, self.slot, None)
        if value is None:
            value = random.Random(obj.seed)
            setattr(obj, self.slot, value)
        return value

    def __set__(self, obj: Any, value: random.Random | None) -> None:
        setattr(obj, self.slot, value)


@dataclass
class ToolContext:
    """What a tool sees besides its arguments: the state, the task's "now", a seeded
    generator (never the global one; built from ``seed`` on first use unless given) and
    who is calling."""

    db: Database
    now: datetime
    rng: random.Random = _LazyRandom()  # type: ignore[assignment]
    caller: Caller = "agent"
    seed: int = 0


_SECTIONS = {"Args", "Arguments", "Parameters", "Returns", "Raises", "Examples", "Example"}
_ARG_LINE = re.compile(r"^\s*(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and per-argument texts."""
    description: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in inspect.cleandoc(doc or "").splitlines():
        stripped = line.strip()
        if not line.startswith(" ") and stripped.endswith(":") and stripped[:-1] in _SECTIONS:
            section, current = stripped[:-1], None
        elif section is None:
            if stripped:
                description.append(stripped)
        elif section in ("Args", "Arguments", "Parameters"):
            match = _ARG_LINE.match(line)
            if match and len(line) - len(line.lstrip()) <= 4:
                current = match.group(1)
                args[current] = match.group(3).strip()
            elif current and stripped:
                args[current] = f"{args[current]} {stripped}"
    return " ".join(description), args


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema.setdefault("required", [])
    schema["additionalProperties"] = False
    return schema


class Tool:
    """A callable tool with its schema. Build one with :func:`tool`."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        write: bool = False,
        for_: Caller | Literal["both"] = "agent",
    ):
        self.fn = fn
        self.name = name or fn.__name__
        self.write = write
        self.for_ = for_
        self.description, arg_docs = _parse_docstring(fn.__doc__ or "")
        hints = get_type_hints(fn)
        params = list(inspect.signature(fn).parameters.values())
        if not params or params[0].name != "ctx":
            raise TypeError(f"tool {self.name}: first parameter must be 'ctx: ToolContext'")
        fields: dict[str, Any] = {}
        simple: dict[str, type] | None = {}
        for p in params[1:]:
            if p.name not in hints:
                raise TypeError(f"tool {self.name}: argument {p.name!r} needs a type hint")
            default = ... if p.default is inspect.Parameter.empty else p.default
            from pydantic import Field

            fields[p.name] = (hints[p.name], Field(default, description=arg_docs.get(p.name)))
            if simple is not None and hints[p.name] in _PLAIN_TYPES:
                simple[p.name] = hints[p.name]
            else:
                simple = None
        self.args_model: type[BaseModel] = create_model(
            f"{self.name}_args", __config__=ConfigDict(extra="forbid"), **fields
        )
        self.parameters = _clean_schema(self.args_model.model_json_schema())
        self._arg_names = list(fields)
        #: Argument name -> type when every argument is a plain str/int/float/bool
        #: without constraints: a call giving each of them a value of exactly that type
        #: is valid as it is (what the schema check would return), so it is not checked.
        self._plain_args = simple

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters, self.write)

    def validate(self, args: dict[str, Any]) -> dict[str, Any]:
        """Check ``args`` against the schema; raise ToolError naming each bad argument."""
        plain = self._plain_args
        if plain is not None and type(args) is dict and len(args) == len(plain):
            for name, value in args.items():
                if plain.get(name) is not type(value):
                    break
            else:  # every argument given, each of exactly its type
                return {name: args[name] for name in self._arg_names}
        if not isinstance(args, dict):
            raise InvalidToolCall(f"{self.name}: arguments must be a JSON object, got {args!r}")
        try:
            model = self.args_model.model_validate(args)
        except ValidationError as exc:
            raise InvalidToolCall(self._explain(exc)) from None
        return {name: getattr(model, name) for name in self._arg_names}

    def _explain(self, exc: ValidationError) -> str:
        problems = []
        for err in exc.errors():
            arg = ".".join(str(p) for p in err["loc"]) or "arguments"
            if err["type"] == "missing":
                problems.append(f"missing required argument {arg!r}")
            elif err["type"] == "extra_forbidden":
                problems.append(f"unexpected argument {arg!r}")
            else:
                msg = err["msg"].removeprefix("Input ").removeprefix("Value ")
                problems.append(f"argument {arg!r}: {msg}, got {err['input']!r}")
        expected = ", ".join(self._arg_names) or "no arguments"
        return f"{self.name}: {'; '.join(problems)} (arguments: {expected})"

    def __call__(self, ctx: ToolContext, args: dict[str, Any]) -> Any:
        return self.fn(ctx, **self.validate(args))

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, write={self.write})"


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    write: bool = False,
    for_: Caller | Literal["both"] = "agent",
) -> Any:
    """Declare a tool. The first parameter is ``ctx: ToolContext``; the others become
    the tool's arguments, typed by their hints and described by the docstring's
    ``Args:`` section. ``write=True`` marks tools that change state (graders check
    that a confirmation came before them).

    >>> @tool(write=True)
    ... def cancel_pending_order(ctx: ToolContext, order_id: str) -> dict:
    ...     '''Cancel a pending order.
    ...
    ...     Args:
    ...         order_id: The order id, such as '#W1234567'.
    ...     '''
    """

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool(f, name=name, write=write, for_=for_)

    return wrap(fn) if fn is not None else wrap


#: The types of arguments taken as they are when given exactly (see ``Tool.validate``).
_PLAIN_TYPES = (str, int, float, bool)

#: The types of argument values :func:`arguments_key` keys by value.
SCALARS = (str, int, float, bool, type(None))


def arguments_key(arguments: Any) -> tuple[tuple[Any, ...], ...] | None:
    """Tool-call arguments as a key: (name, type, repr) of each (a str by itself), so
    1, 1.0 and True differ, and 0.0 and -0.0; None when ``arguments`` is not a mapping
    of names to plain values (str, numbers, bool, None)."""
    if type(arguments) is not dict:
        return None
    out: list[tuple[Any, ...]] = []
    for name, value in arguments.items():
        kind = type(value)
        if kind is str:
            out.append((name, value))
        elif kind in SCALARS:
            out.append((name, kind, repr(value)))
        else:
            return None
    return tuple(out)


def plain_arguments(arguments: dict[str, Any]) -> bool:
    """Whether every argument is a plain value (a shallow copy is a full copy)."""
    return all(type(v) in SCALARS for v in arguments.values())


#: ``json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)``, built once.
_RESULT_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)


def render_result(value: Any) -> str:
    """A tool's return value as the text the caller reads."""
    if isinstance(value, str):
        return value
    return _RESULT_ENCODER.encode(value)


class Toolkit:
    """A named set of tools with lookup that explains unknown names."""

    def __init__(self, tools: Iterable[Tool]):
        self._tools = {t.name: t for t in tools}

    def __iter__(self):
        return iter(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def names(self, for_: Caller | None = None) -> list[str]:
        return [t.name for t in self._tools.values() if for_ is None or t.for_ in (for_, "both")]

    def get(self, name: str, for_: Caller = "agent") -> Tool:
        found = self._tools.get(name)
        if found is None or found.for_ not in (for_, "both"):
            available = ", ".join(sorted(self.names(for_)))
            raise InvalidToolCall(f"unknown tool {name!r}; available tools: {available}")
        return found

    def specs(self, for_: Caller = "agent") -> list[ToolSpec]:
        return [t.spec() for t in self._tools.values() if t.for_ in (for_, "both")]

    def write_tools(self, for_: Caller | None = None) -> set[str]:
        """Names of the tools that change state: all of them, or those of one side
        (``agent``: what the agent may call; ``user``: the user's own tools)."""
        return {
            t.name for t in self._tools.values() if t.write and (for_ is None or t.for_ in (for_, "both"))
        }
