"""The files of a suite folder: its task files (the declared patterns, else those under
``tasks/``), the task mappings of a task-file document, path tests that never raise,
and the hash of the files' names and contents."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core.sources import Located, PathKey
from ..errors import Problem

TASK_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")


def _task_entries(data: Any, located: Located) -> Iterator[tuple[Any, Located, PathKey]]:
    """The task mappings of a task-file document, each with its location."""
    prefix: PathKey
    if isinstance(data, dict) and "tasks" in data and "id" not in data:
        data, located, prefix = data["tasks"], located.sub("tasks"), ("tasks",)
    else:
        prefix = ()
    if isinstance(data, list):
        for i, item in enumerate(data):
            yield item, located.sub(i), (*prefix, i)
    else:
        yield data, located, prefix


def _task_files(root: Path, declared: Any, located: Located, problems: list[Problem]) -> list[Path]:
    """The task files of a suite: those ``task_files`` names (relative glob patterns,
    inside the suite folder), else every task file under ``tasks/``."""
    if declared is not None:
        if not isinstance(declared, list) or not all(isinstance(p, str) and p for p in declared):
            problems.append(located.problem(("task_files",), "must be a list of file names or patterns"))
            return []
        files: list[Path] = []
        for i, pattern in enumerate(declared):
            outside = Path(pattern).is_absolute() or ".." in Path(pattern).parts or pattern.startswith("~")
            if outside:
                message = f"task file {pattern!r} must be a relative path inside the suite folder"
                problems.append(located.problem(("task_files", i), message))
                continue
            try:
                matched = sorted(p for p in root.glob(pattern) if not p.is_dir())
            except (ValueError, NotImplementedError, OSError) as exc:
                problems.append(located.problem(("task_files", i), f"bad pattern {pattern!r}: {exc}"))
                continue
            files.extend(matched or [root / pattern])
        return files
    folder = root / "tasks"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.suffix in TASK_SUFFIXES and not p.is_dir())


def _is(path: Path, test: str) -> bool:
    """``path.exists()``, ``is_file()`` or ``is_dir()``, False for a path the system
    refuses (a name too long, a NUL byte) instead of an exception."""
    try:
        return bool(getattr(path, test)())
    except (OSError, ValueError):
        return False


#: What a suite is made of; anything else in its folder (stores, reports) is not hashed
#: (files its own domain names are hashed whatever their suffix).
SUITE_FILE_SUFFIXES = {".yaml", ".yml", ".json", ".jsonl", ".toml", ".py", ".md", ".txt"}


def _hash_files(digest: Any, root: Path) -> None:
    """The suite's files (suite.yaml, task files, templates, rubrics, schemas...) by
    relative path and content: the suite's identity."""
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in SUITE_FILE_SUFFIXES):
        rel = path.relative_to(root)
        if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        digest.update(rel.as_posix().encode() + b"\0")
        _hash_content(digest, path)


def _hash_content(digest: Any, path: Path) -> None:
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    digest.update(b"\0")
