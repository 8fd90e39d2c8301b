"""Reading a tau2 data folder: once per process per folder (and file version), into a
frozen base state every environment of the domain shares copy-on-write."""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ...envs.state import Database, State
from .specs import DB_FILES, USER_DB_FILES, DomainSpec, domain_spec
from .store import Tau2DataError, tables_from_data

_LOCK = threading.Lock()
_CACHE: dict[tuple[Any, ...], LoadedDomain] = {}


@dataclass(frozen=True)
class LoadedDomain:
    """A tau2 domain read from a data folder."""

    spec: DomainSpec
    name: str
    """As asked for (``telecom-workflow`` keeps its suffix)."""
    folder: Path
    base: State
    policy: str
    fingerprint: str
    """SHA-256 prefix of the database files, the policy and the domain's data folders
    (banking's documents): changes when they change."""

    @property
    def tasks_path(self) -> Path:
        return self.folder / "tasks.json"


def find_domain_folder(data_dir: Path | str, name: str) -> Path:
    """The folder of domain ``name`` under ``data_dir``: a folder holding ``domains/``
    (tau2's ``data/tau2``), a tau2 checkout (``data/tau2/domains``), or the domain
    folder itself."""
    root = Path(data_dir)
    base = name.removesuffix("-workflow")
    candidates = [
        root / "domains" / base,
        root / "tau2" / "domains" / base,
        root / "data" / "tau2" / "domains" / base,
        root,
    ]
    for folder in candidates:
        if folder.is_dir() and any((folder / f).is_file() for f in DB_FILES):
            return folder
    raise Tau2DataError(
        f"{root}: no tau2 data for domain {base!r} (looked for {', '.join(DB_FILES)} in "
        f"{root / 'domains' / base} and {root})"
    )


def read_data_file(path: Path) -> Any:
    """A JSON, TOML or YAML file's content."""
    try:
        if path.suffix == ".toml":
            try:
                import tomllib
            except ImportError:  # Python 3.10
                import tomli as tomllib  # type: ignore[no-redef]
            with path.open("rb") as fh:
                return tomllib.load(fh)
        text = path.read_text(encoding="utf-8")
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except RecursionError:
        raise Tau2DataError(
            f"{path}: cannot read: values nest too deeply (lists and objects inside one another)"
        ) from None
    except (OSError, ValueError, ImportError, yaml.YAMLError) as exc:
        raise Tau2DataError(f"{path}: cannot read: {exc}") from None


def _first(folder: Path, names: tuple[str, ...]) -> Path | None:
    return next((folder / n for n in names if (folder / n).is_file()), None)


def _stamp(path: Path | None) -> tuple[Any, ...]:
    if path is None:
        return ()
    st = path.stat()
    return (str(path), st.st_mtime_ns, st.st_size)


def load_domain(name: str, data_dir: Path | str) -> LoadedDomain:
    """Load (or reuse) domain ``name`` from ``data_dir``. Parsed once per process per
    folder and file version; the returned base state is frozen and shared."""
    spec = domain_spec(name)
    folder = find_domain_folder(data_dir, name).resolve()
    db_path = _first(folder, DB_FILES)
    user_path = _first(folder, USER_DB_FILES) if spec.user_db is not None else None
    dirs = tuple(_stamp(folder / d) for d in spec.data_dirs if (folder / d).is_dir())
    key = (name, str(folder), _stamp(db_path), _stamp(user_path), dirs)
    with _LOCK:
        loaded = _CACHE.get(key)
        if loaded is None:
            loaded = _CACHE[key] = _load(spec, name, folder, db_path, user_path)
    return loaded


def _load(
    spec: DomainSpec, name: str, folder: Path, db_path: Path | None, user_path: Path | None
) -> LoadedDomain:
    assert db_path is not None
    digest = hashlib.sha256(db_path.read_bytes())
    tables = tables_from_data(spec.db, read_data_file(db_path), str(db_path))
    if spec.user_db is not None:
        if user_path is None:
            raise Tau2DataError(f"{folder}: domain {name} needs a user database ({', '.join(USER_DB_FILES)})")
        digest.update(user_path.read_bytes())
        tables.update(tables_from_data(spec.user_db, read_data_file(user_path), str(user_path)))
    try:
        policy = spec.policy(folder, "workflow") if name == "telecom-workflow" else spec.policy(folder)  # type: ignore[call-arg]
    except OSError as exc:
        raise Tau2DataError(f"{folder}: cannot read the {name} policy: {exc}") from None
    digest.update(policy.encode())
    for name_ in spec.data_dirs:
        where = folder / name_
        if not where.is_dir():
            raise Tau2DataError(f"{folder}: domain {name} needs the folder {name_}/ next to its database")
        for file in sorted(p for p in where.rglob("*") if p.is_file()):
            digest.update(str(file.relative_to(folder)).encode() + b"\0" + file.read_bytes())
    base = Database(spec.keys, tables).snapshot()
    return LoadedDomain(spec, name, folder, base, policy, digest.hexdigest()[:16])


__all__ = ["LoadedDomain", "find_domain_folder", "load_domain", "read_data_file"]
