"""A suite's own world: a tools module (or a factory) of the suite, its policy and its
data files, named in ``suite.yaml`` (``domain:`` as a :class:`~assay.core.task.DomainSource`).

No plugin and no reinstall: the module is imported from its file. Its ``@tool``
functions are the agent's tools (``@tool(for_="user")``: the user's own tools, dual
control), its ``@assertion`` functions check a state (the ``env_assert`` grader), and
``POLICY`` is the policy text unless a policy file is named. A module may instead define
``make_domain(ctx)`` (or the suite names a ``factory``) returning any
:class:`~assay.envs.environment.Domain`; ``ctx`` is a :class:`DomainContext`.

Data files (``data:``, files or folders): a ``*.jsonl`` file is one table (its file name)
with one record per line; a JSON, YAML or TOML file maps table names to a list of records
or to records by key. Each table's primary key is ``keys[table]`` (default ``id``).

Every file named is read from the suite folder (or from where the suite names it
explicitly) and is part of the suite's hash; loading a suite runs its module's code.
Domains are built once per process per version of their files.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from ..core.messages import Requestor
from ..core.registry import import_object
from ..core.task import DomainSource
from ..errors import AssayError
from .capabilities import AssertionDomain
from .environment import Domain, ToolDomain
from .state import Database, Snapshot, State
from .tools import Caller, Tool, ToolContext, Toolkit

DATA_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml", ".toml")


class SuiteDomainError(AssayError):
    """A suite's own domain (module, factory, policy or data file) that cannot be loaded."""


# --- assertions --------------------------------------------------------------------------


class Assertion:
    """A named check of a state: ``fn(ctx, **args) -> bool`` (``ctx.db`` is a private copy
    of the state). Build one with :func:`assertion`."""

    def __init__(self, fn: Callable[..., Any], name: str | None = None, for_: Caller = "agent"):
        params = list(inspect.signature(fn).parameters)
        if not params or params[0] != "ctx":
            raise TypeError(f"assertion {fn.__name__}: first parameter must be 'ctx: ToolContext'")
        self.fn = fn
        self.name = name or fn.__name__
        self.for_ = for_
        self.description = inspect.cleandoc(fn.__doc__ or "").split("\n\n")[0]

    def __call__(self, ctx: ToolContext, args: Mapping[str, Any]) -> bool:
        result = self.fn(ctx, **dict(args))
        if not isinstance(result, bool):
            raise TypeError(f"assertion {self.name} returned {type(result).__name__}, not bool")
        return result

    def __repr__(self) -> str:
        return f"Assertion({self.name!r}, for_={self.for_!r})"


def assertion(
    fn: Callable[..., Any] | None = None, *, name: str | None = None, for_: Caller = "agent"
) -> Any:
    """Declare an assertion function of a suite's domain (for the ``env_assert`` grader).

    >>> @assertion
    ... def ticket_closed(ctx: ToolContext, ticket_id: str) -> bool:
    ...     '''The ticket is closed.'''
    ...     return ctx.db.get("tickets", ticket_id)["status"] == "closed"
    """

    def wrap(f: Callable[..., Any]) -> Assertion:
        return Assertion(f, name=name, for_=for_)

    return wrap(fn) if fn is not None else wrap


# --- the domain ----------------------------------------------------------------------------


@dataclass
class SuiteDomain(ToolDomain, AssertionDomain):
    """A domain built from a suite's tools module: its tools, assertions, policy and data."""

    assertions: dict[str, Assertion] = field(default_factory=dict)

    def assertion_names(self, requestor: Requestor = "agent") -> list[str]:
        return [a.name for a in self.assertions.values() if a.for_ == requestor]

    def check_assertion(
        self, state: State | Snapshot, name: str, args: Mapping[str, Any], requestor: Requestor = "agent"
    ) -> bool:
        found = self.assertions.get(name)
        if found is None or found.for_ != requestor:
            known = ", ".join(self.assertion_names(requestor)) or "none"
            raise KeyError(f"unknown {requestor} assertion {name!r}; assertions: {known}")
        db = Database(state.keys, state) if isinstance(state, State) else Database(_keys_of(state), state)
        return found(ToolContext(db, _EPOCH, caller=requestor), args)


_EPOCH = datetime(2000, 1, 1)  # assertions look at the state, not the clock


def _keys_of(snapshot: Snapshot) -> dict[str, str]:
    return {table: "id" for table in snapshot}


@dataclass(frozen=True)
class LocalDomainRef:
    """Where a suite's own domain is: the suite folder and what ``suite.yaml`` says. A
    run carries this (picklable) to every trial, in any process."""

    root: str
    source: DomainSource
    suite_name: str = ""
    files_seen: str = ""
    """The stamp (paths, sizes, modification times) of the domain's files when the suite
    was loaded; with it a trial finds the domain built for that version without listing
    and stating every data file again ('' = look at the files)."""


@dataclass
class DomainContext:
    """What ``make_domain(ctx)`` or a factory receives."""

    root: Path
    """The suite folder."""
    name: str
    policy: str
    """The policy file's text ('' when none is named)."""
    data: list[Path]
    """The data files named (folders expanded), in order."""
    data_paths: list[Path]
    """The data files and folders as named (resolved, folders not expanded)."""
    keys: dict[str, str]
    options: dict[str, Any]
    version: str
    """A content hash of the module, policy and data files."""

    def tables(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The data files read as tables (see the module docstring)."""
        return read_tables(self.data, self.keys)


@dataclass
class LoadedLocalDomain:
    """A suite's own domain and what loading it involved."""

    domain: Domain
    files: list[Path]
    """Every file it was built from (hashed with the suite)."""
    modules: list[str]
    """The code it imported: suite files by path, factories by module."""
    files_seen: str = ""
    """The stamp of ``files`` it was built from (see :attr:`LocalDomainRef.files_seen`)."""


_LOCK = threading.RLock()
_CACHE: dict[tuple[Any, ...], LoadedLocalDomain] = {}


def _inside(root: Path, written: str, what: str) -> Path:
    path = (root / written).resolve() if not Path(written).is_absolute() else Path(written)
    if not path.exists():
        raise SuiteDomainError(f"{what} {written} does not exist (looked for {path})")
    return path


def data_files(root: Path, source: DomainSource) -> list[Path]:
    """The data files a domain source names, folders expanded (sorted), in order."""
    files: list[Path] = []
    for written in source.data:
        path = _inside(root, written, "data")
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")))
        else:
            files.append(path)
    return files


def source_files(root: Path, source: DomainSource) -> list[Path]:
    """Every file a domain source names: module, policy, data (what the hash covers)."""
    files = [_inside(root, source.module, "module")] if source.module else []
    if source.policy:
        files.append(_inside(root, source.policy, "policy"))
    return files + data_files(root, source)


def _digest(files: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.name).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def read_data_file(path: Path) -> Any:
    """A JSON, YAML or TOML file's content (``*.jsonl``: the list of its lines' records)."""
    try:
        if path.suffix == ".toml":
            import tomllib

            with path.open("rb") as fh:
                return tomllib.load(fh)
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            rows = []
            for number, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise SuiteDomainError(f"{path}:{number}: not JSON: {exc.msg}") from None
            return rows
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SuiteDomainError(f"{path}: cannot read: {exc}") from None


def read_tables(files: list[Path], keys: Mapping[str, str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Tables from data files: ``*.jsonl`` is one table; JSON/YAML/TOML map tables to
    records (a list, keyed by the table's key field, or a mapping key -> record)."""
    tables: dict[str, dict[str, dict[str, Any]]] = {}

    def add(path: Path, table: str, rows: Any) -> None:
        key = keys.get(table, "id")
        items: Iterator[tuple[Any, Any]]
        if isinstance(rows, dict):
            items = iter(rows.items())
        elif isinstance(rows, list):
            items = ((None, r) for r in rows)
        else:
            raise SuiteDomainError(f"{path}: table {table!r} must be a list of records or a mapping of them")
        into = tables.setdefault(table, {})
        for i, (name, record) in enumerate(items):
            if not isinstance(record, dict):
                raise SuiteDomainError(f"{path}: {table}[{name if name is not None else i}] is not a record")
            ident = name if name is not None else record.get(key)
            if ident is None:
                raise SuiteDomainError(
                    f"{path}: {table}[{i}] has no {key!r} field (its primary key; set domain.keys.{table})"
                )
            into[str(ident)] = record

    for path in files:
        if path.suffix not in DATA_SUFFIXES:
            continue
        content = read_data_file(path)
        if path.suffix == ".jsonl":
            add(path, path.stem, content)
        elif isinstance(content, dict):
            for table, rows in content.items():
                add(path, str(table), rows)
        elif content is not None:
            raise SuiteDomainError(f"{path}: a data file maps table names to records")
    return tables


def import_file(path: Path, version: str) -> ModuleType:
    """Import a suite's Python file (once per version of its content)."""
    name = f"assay_suite_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}_{version}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SuiteDomainError(f"{path}: cannot import")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise SuiteDomainError(f"{path}: importing it failed: {type(exc).__name__}: {exc}") from None
    return module


def _from_module(module: ModuleType, ctx: DomainContext) -> Domain:
    tools = [v for v in vars(module).values() if isinstance(v, Tool)]
    assertions = {v.name: v for v in vars(module).values() if isinstance(v, Assertion)}
    if not tools:
        raise SuiteDomainError(f"{module.__file__}: defines no @tool function and no make_domain(ctx)")
    policy = ctx.policy or str(getattr(module, "POLICY", "") or "")
    tables = ctx.tables()
    keys = {name: ctx.keys.get(name, "id") for name in tables} | dict(ctx.keys)
    base = Database(keys, {t: tables.get(t, {}) for t in keys}).snapshot()

    def generate(seed: int) -> Database:
        return Database(keys, base)

    return SuiteDomain(
        name=ctx.name,
        toolkit=Toolkit(tools),
        generate=generate,
        policy=policy,
        version=ctx.version,
        assertions=assertions,
    )


def _build(ref: LocalDomainRef, files: list[Path]) -> LoadedLocalDomain:
    root, source = Path(ref.root), ref.source
    policy = ""
    if source.policy:
        policy_path = _inside(root, source.policy, "policy")
        try:
            policy = policy_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SuiteDomainError(f"{policy_path}: cannot read the policy: {exc}") from None
    version = _digest(files)
    ctx = DomainContext(
        root=root,
        name=source.name or ref.suite_name or root.name,
        policy=policy,
        data=data_files(root, source),
        data_paths=[_inside(root, d, "data") for d in source.data],
        keys=dict(source.keys),
        options=dict(source.options),
        version=version,
    )
    if source.factory is not None:
        try:
            factory = import_object(source.factory)
        except (ImportError, AttributeError, ValueError) as exc:
            raise SuiteDomainError(f"domain.factory {source.factory!r}: cannot import it ({exc})") from None
        modules = [source.factory.partition(":")[0]]
        domain = factory(ctx)
    else:
        assert source.module is not None
        path = _inside(root, source.module, "module")
        module = import_file(path, version)
        modules = [str(path.relative_to(root)) if path.is_relative_to(root) else str(path)]
        make = getattr(module, "make_domain", None)
        domain = make(ctx) if callable(make) else _from_module(module, ctx)
    if not isinstance(domain, Domain):
        raise SuiteDomainError(
            f"domain of suite {ref.suite_name or root}: the factory returned {domain!r}, not a Domain"
        )
    return LoadedLocalDomain(domain, files, modules)


def _stamp(files: list[Path]) -> str:
    """Paths, sizes and modification times of ``files``: changes when any of them does."""
    digest = hashlib.sha256()
    for path in files:
        st = path.stat()
        digest.update(f"{path}\0{st.st_mtime_ns}\0{st.st_size}\n".encode())
    return digest.hexdigest()


def load_local_domain(ref: LocalDomainRef) -> LoadedLocalDomain:
    """The domain a suite brings (built once per process per version of its files). A
    ref with ``files_seen`` (set when the suite was loaded) is looked up by that stamp:
    the data folder is listed only when the domain is built."""
    root = Path(ref.root)
    files = None if ref.files_seen else source_files(root, ref.source)
    stamp = ref.files_seen or _stamp(files or [])
    key = (ref.root, ref.source.model_dump_json(), ref.suite_name, stamp)
    with _LOCK:
        loaded = _CACHE.get(key)
        if loaded is None:
            built = _build(ref, files if files is not None else source_files(root, ref.source))
            loaded = _CACHE[key] = replace(built, files_seen=stamp)
    return loaded


__all__ = [
    "DATA_SUFFIXES",
    "Assertion",
    "DomainContext",
    "LoadedLocalDomain",
    "LocalDomainRef",
    "SuiteDomain",
    "SuiteDomainError",
    "assertion",
    "data_files",
    "load_local_domain",
    "read_tables",
    "source_files",
]
