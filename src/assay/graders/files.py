"""Files graders read (rubrics, JSON Schemas): where a relative path is looked up, and
how they are parsed (errors say ``file:line: field``).

A relative path in a grader's parameters is looked up, in order, in the suite's folder
(when the task records it as ``metadata.suite_dir``), in the working directory, and in the
built-in suite folder of the task's domain (:data:`SUITE_DIRS`, which plugins extend with
a ``SUITE_DIRS`` dict).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from ..core.registry import Registry
from ..core.sources import Located, ProblemError, parse_yaml
from ..core.task import Task
from ..errors import AssayError, Problem

#: Domain name -> folder of its built-in suite, where relative grader files are found.
SUITE_DIRS: Registry[Path] = Registry(
    "suite folder", "SUITE_DIRS", {"retail": "assay.domains.retail:SUITE_DIR"}
)


class GraderFileError(AssayError):
    """A grader's file (rubric, schema) is missing or invalid; carries located problems."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def search_dirs(task: Task | None = None, domain_name: str | None = None) -> list[Path]:
    """Folders a relative grader file is looked up in, in order."""
    dirs: list[Path] = []
    suite_dir = (task.metadata.get("suite_dir") if task is not None else None) or None
    if suite_dir:
        dirs.append(Path(str(suite_dir)))
    dirs.append(Path.cwd())
    if domain_name and domain_name in SUITE_DIRS:
        with contextlib.suppress(ImportError, AttributeError):
            dirs.append(Path(SUITE_DIRS.get(domain_name)))
    return dirs


def resolve_file(ref: str, task: Task | None = None, domain_name: str | None = None) -> Path:
    """The file ``ref`` names; GraderFileError listing where it was looked for."""
    path = Path(ref).expanduser()
    if path.is_absolute():
        if path.is_file():
            return path
        raise GraderFileError([Problem(ref, None, "", "file does not exist")])
    dirs = search_dirs(task, domain_name)
    for folder in dirs:
        if (folder / path).is_file():
            return folder / path
    looked = ", ".join(str(d) for d in dirs)
    raise GraderFileError([Problem(ref, None, "", f"file not found (looked in {looked})")])


def parse_located(text: str, file: str) -> tuple[Any, Located]:
    """Parse one YAML/JSON document, remembering the line of every value."""
    try:
        return parse_yaml(text, file)
    except ProblemError as exc:
        raise GraderFileError(exc.problems) from None
