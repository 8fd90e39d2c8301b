"""Files graders read (rubrics, JSON Schemas): where a relative path is looked up, and
how they are parsed (errors say ``file:line: field``).

A relative path in a grader's parameters is looked up in the suite's folder (every
loaded task records it as ``metadata.suite_dir``). A file outside that folder (``..``, an
absolute path, a link out) is refused, as task files are: the suite's hash covers only
what is in its folder, and a rubric changed elsewhere would leave it the same. The files
assay ships (the default faithfulness rubric) are the exception: assay's version is part
of every run's provenance. A task that comes from no suite folder (built in code) looks
in the working directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.sources import Located, ProblemError, inside, parse_yaml, read_text
from ..core.task import Task
from ..errors import AssayError, Problem

#: Files shipped with assay (versioned with it): graders may name them from any suite.
SHIPPED = Path(__file__).resolve().parents[1]


class GraderFileError(AssayError):
    """A grader's file (rubric, schema) is missing or invalid; carries located problems."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def search_dirs(task: Task | None = None) -> list[Path]:
    """The folder a relative grader file is looked up in: the task's suite folder, else
    the working directory."""
    suite_dir = (task.metadata.get("suite_dir") if task is not None else None) or None
    return [Path(str(suite_dir))] if suite_dir else [Path.cwd()]


def resolve_file(ref: str, task: Task | None = None) -> Path:
    """The file ``ref`` names; GraderFileError saying where it was looked for, or that
    it lies outside the task's suite folder."""
    path = Path(ref).expanduser()
    (folder,) = search_dirs(task)
    found = path if path.is_absolute() else folder / path
    from_suite = task is not None and bool(task.metadata.get("suite_dir"))
    if from_suite and not inside(folder, found) and not inside(SHIPPED, found):
        raise GraderFileError(
            [
                Problem(
                    ref,
                    None,
                    "",
                    f"is outside the suite folder {folder} (the suite's hash would not cover it); copy it in",
                )
            ]
        )
    if found.is_file():
        return found
    where = "file does not exist" if path.is_absolute() else f"file not found (looked in {folder})"
    raise GraderFileError([Problem(ref, None, "", where)])


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
