"""A suite as loaded from its folder: the suite's data plus what loading learned (its
folder, content hash, own templates, where each task was written, streamed files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import PrivateAttr

from ..core.task import Suite


class LoadedSuite(Suite):
    """A validated suite with its identity. Build one with :func:`assay.suites.load_suite`."""

    _hash: str = PrivateAttr(default="")
    _path: Path | None = PrivateAttr(default=None)
    _local_templates: dict[str, Any] = PrivateAttr(default_factory=dict)
    _where: dict[str, Any] = PrivateAttr(default_factory=dict)
    _streamed: list[tuple[Path, str]] = PrivateAttr(default_factory=list)
    _code: list[str] = PrivateAttr(default_factory=list)

    @property
    def code(self) -> list[str]:
        """The suite's own Python modules that loading it imported (and so ran), as
        paths relative to its folder."""
        return list(self._code)

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
