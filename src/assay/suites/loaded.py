"""A suite as loaded from its folder: the suite's data plus what loading learned (its
folder, content hash, own templates, where each task was written, streamed files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import PrivateAttr

from ..core.task import DomainSource, Suite
from ..envs.local import LocalDomainRef
from ..envs.registry import DomainRef


class LoadedSuite(Suite):
    """A validated suite with its identity. Build one with :func:`assay.suites.load_suite`."""

    _hash: str = PrivateAttr(default="")
    _path: Path | None = PrivateAttr(default=None)
    _local_templates: dict[str, Any] = PrivateAttr(default_factory=dict)
    _where: dict[str, Any] = PrivateAttr(default_factory=dict)
    _streamed: list[tuple[Path, str]] = PrivateAttr(default_factory=list)
    _modules: list[str] = PrivateAttr(default_factory=list)
    _domain_files_seen: str = PrivateAttr(default="")

    @property
    def hash(self) -> str:
        """Content hash of the suite's files: its version identity."""
        return self._hash

    @property
    def path(self) -> Path | None:
        """The suite's folder (None for a suite built in memory)."""
        return self._path

    @property
    def streamed(self) -> bool:
        """Whether some task files are streamed from disk at each pass (JSONL)."""
        return bool(self._streamed)

    @property
    def domain_ref(self) -> DomainRef:
        """What names the suite's domain for :func:`assay.envs.get_domain`: a registered
        name, or (a suite that brings its own world) where its module and data are."""
        if isinstance(self.domain, DomainSource):
            root = self._path if self._path is not None else Path.cwd()
            return LocalDomainRef(str(root.resolve()), self.domain, self.name, self._domain_files_seen)
        return self.domain

    @property
    def imported_modules(self) -> list[str]:
        """The code loading the suite imported (its own domain module, its templates
        module, a domain factory's module): loading a suite runs that code."""
        return list(self._modules)
