"""Reading YAML/JSON input files while remembering where every value came from:
suites, task files, rubrics, gate policies, scoring profiles, fault plans.

``read_documents(path)`` returns, per document (one for YAML/JSON, one per line for
JSONL), the parsed data plus a :class:`Located` map from data paths such as
``("tasks", 3, "user")`` to line numbers, so every later error names file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .problem import Problem

PathKey = tuple[str | int, ...]


@dataclass
class Located:
    """Where the values of one document live: file name and line per data path."""

    file: str
    lines: dict[PathKey, int] = field(default_factory=dict)
    base: PathKey = ()

    def line(self, path: PathKey) -> int | None:
        """Line of ``path`` or of its nearest ancestor that has one."""
        full = self.base + tuple(path)
        while True:
            if full in self.lines:
                return self.lines[full]
            if not full:
                return None
            full = full[:-1]

    def sub(self, *path: str | int) -> Located:
        """The same file seen from a nested value (its paths relative to ``path``)."""
        return Located(self.file, self.lines, self.base + tuple(path))

    def written(self, path: PathKey) -> PathKey:
        """The longest prefix of ``path`` that the file spells out (a short form such as
        ``required: [get_order]`` has no ``required[0].name``)."""
        path = tuple(path)
        while path and self.base + path not in self.lines:
            path = path[:-1]
        return path

    def problem(self, path: PathKey, message: str, prefix: PathKey = ()) -> Problem:
        return Problem(self.file, self.line(path), format_path(prefix + tuple(path)), message)


def format_path(path: PathKey) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class _DuplicateKey(Exception):
    def __init__(self, key: Any, line: int):
        self.key, self.line = key, line


def _build(loader: yaml.SafeLoader, node: yaml.Node, path: PathKey, lines: dict) -> Any:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if key in out:
                raise _DuplicateKey(key, key_node.start_mark.line + 1)
            lines[(*path, key)] = key_node.start_mark.line + 1
            out[key] = _build(loader, value_node, (*path, key), lines)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(loader, item, (*path, i), lines) for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


def parse_yaml(text: str, file: str) -> tuple[Any, Located]:
    """Parse one YAML (or JSON) document; raise SuiteErrorLike via ``ProblemError``."""
    located = Located(file)
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = None if node is None else _build(loader, node, (), located.lines)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        reason = exc.problem or exc.context or "invalid YAML"
        raise ProblemError([Problem(file, line, "", f"YAML syntax error: {reason}")]) from None
    except yaml.YAMLError as exc:
        raise ProblemError([Problem(file, None, "", f"YAML error: {exc}")]) from None
    except _DuplicateKey as exc:
        raise ProblemError([Problem(file, exc.line, str(exc.key), "duplicate key")]) from None
    finally:
        loader.dispose()
    return data, located


class ProblemError(Exception):
    """Internal: carries problems up to the loader, which collects them."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(map(str, problems)))


def iter_documents(path: Path, display: str) -> Iterator[tuple[Any, Located]]:
    """Yield ``(data, located)`` for each document of a task file.

    YAML and JSON files hold either one task, a list of tasks, or ``{tasks: [...]}``;
    JSONL files hold one task per line. Parse errors become ProblemError. JSONL is read
    line by line, so a large file streams.
    """
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        with path.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                located = Located(display, {(): number})
                try:
                    yield json.loads(line), located
                except json.JSONDecodeError as exc:
                    raise ProblemError(
                        [Problem(display, number, "", f"invalid JSON: {exc.msg} (column {exc.colno})")]
                    ) from None
        return
    if suffix not in (".yaml", ".yml", ".json"):
        raise ProblemError([Problem(display, None, "", "task files must be .yaml, .yml, .json or .jsonl")])
    text = path.read_text(encoding="utf-8")
    if suffix == ".json":
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProblemError(
                [Problem(display, exc.lineno, "", f"invalid JSON: {exc.msg} (column {exc.colno})")]
            ) from None
    data, located = parse_yaml(text, display)
    yield data, located


#: Tags of tagged unions in assay's models: pydantic puts them in error locations, the
#: user never wrote them.
UNION_TAGS = frozenset({"registered", "own-world"})


def validation_problems(exc: Any, located: Located, prefix: PathKey = ()) -> list[Problem]:
    """A pydantic ``ValidationError`` as located problems, one per error."""
    problems = []
    for err in exc.errors():
        loc = tuple(
            p
            for p in err["loc"]
            if not (isinstance(p, str) and (p.startswith("function-") or p in UNION_TAGS))
        )
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        elif err["type"] == "missing":
            message = "required field is missing"
        else:
            message = err["msg"].removeprefix("Value error, ")
            if (
                "input" in err
                and err["type"] not in ("model_type", "dict_type")
                and not isinstance(err["input"], (dict, list))
            ):
                message += f" (got {err['input']!r})"
        problems.append(located.problem(loc, message, prefix))
    return problems
