"""Files graders read (rubrics, JSON Schemas): where a relative path is looked up, and
YAML parsing that remembers the line of every value so errors say ``file:line: field``.

A relative path in a grader's parameters is looked up, in order, in the suite's folder
(when the task records it as ``metadata.suite_dir``), in the working directory, and in the
built-in suite folder of the task's domain (:data:`SUITE_DIRS`, which plugins extend with
a ``SUITE_DIRS`` dict).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..core.registry import Registry
from ..core.task import Task
from ..errors import AssayError, Problem

PathKey = tuple[str | int, ...]

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


def _build(loader: yaml.SafeLoader, node: yaml.Node, path: PathKey, lines: dict[PathKey, int]) -> Any:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if key in out:
                raise GraderFileError([Problem("", key_node.start_mark.line + 1, str(key), "duplicate key")])
            lines[(*path, key)] = key_node.start_mark.line + 1
            out[key] = _build(loader, value_node, (*path, key), lines)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(loader, item, (*path, i), lines) for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


def parse_located(text: str, file: str) -> tuple[Any, dict[PathKey, int]]:
    """Parse one YAML/JSON document; return the data and the line of every data path."""
    lines: dict[PathKey, int] = {}
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = None if node is None else _build(loader, node, (), lines)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise GraderFileError(
            [Problem(file, mark.line + 1 if mark else None, "", f"YAML syntax error: {exc.problem}")]
        ) from None
    except GraderFileError as exc:
        raise GraderFileError([Problem(file, p.line, p.field, p.message) for p in exc.problems]) from None
    finally:
        loader.dispose()
    return data, lines


def line_of(lines: dict[PathKey, int], path: PathKey) -> int | None:
    """Line of ``path`` or of its nearest ancestor that has one."""
    while True:
        if path in lines:
            return lines[path]
        if not path:
            return None
        path = path[:-1]


def format_path(path: PathKey) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validation_problems(
    exc: ValidationError, file: str, lines: dict[PathKey, int], prefix: PathKey = ()
) -> list[Problem]:
    """Pydantic errors as located problems (``file:line: field: message``)."""
    problems = []
    for err in exc.errors():
        loc = prefix + tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        elif err["type"] == "missing":
            message = "required field is missing"
        else:
            message = err["msg"].removeprefix("Value error, ")
        problems.append(Problem(file, line_of(lines, loc), format_path(loc), message))
    return problems
