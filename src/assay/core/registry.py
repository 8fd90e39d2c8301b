"""Registries of named extensions (domains, agents, graders, ...).

Entries are objects or lazy ``"module:attribute"`` strings, so registering a built-in
costs no import. Third-party packages add entries through the entry-point group
``assay.plugins``: each entry point names a module or object with any of the
attributes ``DOMAINS``, ``AGENTS``, ``GRADERS``, ``SUITES``, ``USERS`` (dicts of name ->
object or ``"module:attribute"``), merged into the registry of that kind. Modules
named in the environment variable ``ASSAY_PLUGINS`` (comma-separated) are loaded the
same way, for plugins that are not installed as packages.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_plugins_loaded: list[Any] | None = None


def _plugins() -> list[Any]:
    global _plugins_loaded
    if _plugins_loaded is None:
        _plugins_loaded = [ep.load() for ep in entry_points(group="assay.plugins")]
        for name in filter(None, (n.strip() for n in os.environ.get("ASSAY_PLUGINS", "").split(","))):
            _plugins_loaded.append(importlib.import_module(name))
    return _plugins_loaded


def import_object(path: str) -> Any:
    """Import ``"package.module:attr.sub"``; raise ImportError/AttributeError if missing."""
    module_name, _, attr = path.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj


class Registry(Generic[T]):
    """Name -> object, with lazy imports and plugin discovery."""

    def __init__(self, kind: str, plugin_attr: str, builtins: dict[str, Any] | None = None):
        self.kind = kind
        self.plugin_attr = plugin_attr
        self._entries: dict[str, Any] = dict(builtins or {})
        self._plugins_merged = False

    def register(self, name: str, obj: Any) -> None:
        self._entries[name] = obj

    def _merge_plugins(self) -> None:
        if not self._plugins_merged:
            self._plugins_merged = True
            for plugin in _plugins():
                for name, obj in (getattr(plugin, self.plugin_attr, None) or {}).items():
                    self._entries.setdefault(name, obj)

    def names(self) -> list[str]:
        self._merge_plugins()
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        self._merge_plugins()
        return name in self._entries

    def get(self, name: str) -> T:
        """The entry called ``name``; KeyError with the known names if there is none."""
        self._merge_plugins()
        if name not in self._entries:
            known = ", ".join(self.names()) or "none"
            raise KeyError(f"unknown {self.kind} {name!r}; known: {known}")
        obj = self._entries[name]
        if isinstance(obj, str) and ":" in obj:
            obj = import_object(obj)
            self._entries[name] = obj
        return obj
