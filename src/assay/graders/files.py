"""Files graders read (rubrics, JSON Schemas): where a relative path is looked up, and
how they are parsed (errors say ``file:line: field``).

A relative path in a grader's parameters is looked up, in order, in the suite's folder
(every loaded task records it as ``metadata.suite_dir``) and in the working directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.sources import Located, ProblemError, parse_yaml, read_text
from ..core.task import Task
from ..errors import AssayError, Problem


class GraderFileError(AssayError):
    """A grader's file (rubric, schema) is missing or invalid; carries located problems."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def search_dirs(task: Task | None = None) -> list[Path]:
    """Folders a relative grader file is looked up in, in order."""
    suite_dir = (task.metadata.get("suite_dir") if task is not None else None) or None
    return [*([Path(str(suite_dir))] if suite_dir else []), Path.cwd()]


def resolve_file(ref: str, task: Task | None = None) -> Path:
    """The file ``ref`` names; GraderFileError listing where it was looked for."""
    path = Path(ref).expanduser()
    if path.is_absolute():
        if path.is_file():
            return path
        raise GraderFileError([Problem(ref, None, "", "file does not exist")])
    dirs = search_dirs(task)
    for folder in dirs:
        if (folder / path).is_file():
            return folder / path
    looked = ", ".join(str(d) for d in dirs)
    raise GraderFileError([Problem(ref, None, "", f"file not found (looked in {looked})")])


def read_located(path: Path, file: str) -> tuple[Any, Located]:
    """Read and parse a grader's YAML/JSON file (not UTF-8, too large, a folder...:
    GraderFileError with the line)."""
    try:
        return parse_located(read_text(path, file), file)
    except ProblemError as exc:
        raise GraderFileError(exc.problems) from None


def parse_located(text: str, file: str) -> tuple[Any, Located]:
    """Parse one YAML/JSON document, remembering the line of every value."""
    try:
        return parse_yaml(text, file)
    except ProblemError as exc:
        raise GraderFileError(exc.problems) from None
