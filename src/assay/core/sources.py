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


#: Limits that keep a hostile or broken input file from hanging or exhausting the
#: machine: the size of one YAML/JSON file (JSONL streams: a limit per line), how deep
#: values may nest, and how many values YAML aliases may add by repeating others.
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64
MAX_ALIAS_VALUES = 100_000


#: libyaml's parser when PyYAML has it (several times faster; it also bounds nesting).
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _NodeProblem(Exception):
    def __init__(self, line: int | None, field: str, message: str):
        self.line, self.field, self.message = line, field, message


class _Builder:
    """Builds Python values from a composed YAML node, recording the line of every data
    path, within the nesting and alias-expansion limits."""

    def __init__(self, loader: Any, lines: dict[PathKey, int]):
        self.loader, self.lines = loader, lines
        self.built = 0
        self.distinct: set[int] = set()

    def build(self, node: yaml.Node, path: PathKey) -> Any:
        line = node.start_mark.line + 1
        if len(path) > MAX_DEPTH:
            raise _NodeProblem(
                line, format_path(path[:MAX_DEPTH]), f"values nest deeper than {MAX_DEPTH} levels"
            )
        self.built += 1
        self.distinct.add(id(node))
        if self.built - len(self.distinct) > MAX_ALIAS_VALUES:
            raise _NodeProblem(line, "", f"YAML aliases expand to more than {MAX_ALIAS_VALUES:,} values")
        self.lines.setdefault(path, line)
        if isinstance(node, yaml.MappingNode):
            self.loader.flatten_mapping(node)
            out: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key_line = key_node.start_mark.line + 1
                if not isinstance(key_node, yaml.ScalarNode):
                    raise _NodeProblem(
                        key_line, format_path(path), "a key must be a plain value, not a list or mapping"
                    )
                key = self.scalar(key_node, path)
                if not isinstance(key, str):  # 1:, true:, 2025-01-01: -> the text written
                    key = str(key_node.value)
                if key in out:
                    raise _NodeProblem(key_line, str(key), "duplicate key")
                self.lines[(*path, key)] = key_line
                out[key] = self.build(value_node, (*path, key))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return self.scalar(node, path)

    def scalar(self, node: yaml.Node, path: PathKey) -> Any:
        try:
            value = self.loader.construct_object(node, deep=True)
        except (ValueError, OverflowError, TypeError) as exc:  # e.g. a date such as 2025-13-45
            raise _NodeProblem(node.start_mark.line + 1, format_path(path), f"invalid value: {exc}") from None
        if isinstance(value, str):
            problem = text_problem(value)
            if problem:
                raise _NodeProblem(node.start_mark.line + 1, format_path(path), problem)
        elif isinstance(value, (bytes, bytearray)):
            raise _NodeProblem(
                node.start_mark.line + 1, format_path(path), "binary values (!!binary) are not supported"
            )
        return value


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be used: a lone surrogate such as ``\\ud800`` (not UTF-8) or a
    NUL character (not allowed in file names, cut short by C libraries)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"text with a lone surrogate {text[exc.start]!r} at character {exc.start} (not valid Unicode)"
    if "\x00" in text:
        return f"text with a NUL character at character {text.index(chr(0))}"
    return None


def parse_yaml(text: str, file: str) -> tuple[Any, Located]:
    """Parse one YAML (or JSON) document; raise SuiteErrorLike via ``ProblemError``."""
    located = Located(file)
    loader: Any = None
    try:
        loader = _Loader(text)  # reading the stream can fail already (NUL bytes)
        node = loader.get_single_node()
        data = None if node is None else _Builder(loader, located.lines).build(node, ())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        reason = exc.problem or exc.context or "invalid YAML"
        raise ProblemError([Problem(file, line, "", f"YAML syntax error: {reason}")]) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1 if isinstance(exc.position, int) else None
        character = exc.character if isinstance(exc.character, str) else chr(exc.character)
        raise ProblemError(
            [Problem(file, line, "", f"character {character!r} is not allowed in YAML")]
        ) from None
    except yaml.YAMLError as exc:
        raise ProblemError([Problem(file, None, "", f"YAML error: {exc}")]) from None
    except _NodeProblem as exc:
        raise ProblemError([Problem(file, exc.line, exc.field, exc.message)]) from None
    except RecursionError:
        raise ProblemError([Problem(file, None, "", f"values nest deeper than {MAX_DEPTH} levels")]) from None
    finally:
        if loader is not None:
            loader.dispose()
    return data, located


def read_text(path: Path, display: str) -> str:
    """A text input file, or a :class:`ProblemError` naming it: missing, a folder,
    unreadable, larger than :data:`MAX_FILE_BYTES`, or not UTF-8 (with the line)."""
    try:
        if path.is_dir():
            raise ProblemError([Problem(display, None, "", "is a folder, not a file")])
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            mb = MAX_FILE_BYTES // (1024 * 1024)
            raise ProblemError(
                [Problem(display, None, "", f"file too large ({size:,} bytes, limit {mb} MB); use JSONL")]
            )
        raw = path.read_bytes()
    except OSError as exc:
        raise ProblemError([Problem(display, None, "", f"cannot read: {exc.strerror or exc}")]) from None
    return decode_utf8(raw, display)


def decode_utf8(raw: bytes, display: str, first_line: int = 1) -> str:
    """``raw`` as text, or a :class:`ProblemError` at the line of the first bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + raw.count(b"\n", 0, exc.start)
        raise ProblemError(
            [
                Problem(
                    display, line, "", f"not UTF-8 text (byte 0x{raw[exc.start]:02x}); save the file as UTF-8"
                )
            ]
        ) from None


def check_text(value: Any, display: str, line: int | None, path: PathKey = ()) -> None:
    """Raise a :class:`ProblemError` if a string anywhere in ``value`` (parsed JSON) is
    not valid Unicode or it nests too deeply."""
    if len(path) > MAX_DEPTH:
        raise ProblemError([Problem(display, line, "", f"values nest deeper than {MAX_DEPTH} levels")])
    if isinstance(value, str):
        problem = text_problem(value)
        if problem:
            raise ProblemError([Problem(display, line, format_path(path), problem)])
    elif isinstance(value, dict):
        for k, v in value.items():
            check_text(k, display, line, path)
            check_text(v, display, line, (*path, str(k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            check_text(v, display, line, (*path, i))


class ProblemError(Exception):
    """Internal: carries problems up to the loader, which collects them."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(map(str, problems)))


def inside(root: Path, path: Path) -> bool:
    """Whether ``path`` (symbolic links resolved) is inside the folder ``root``."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError):  # a link loop, a NUL byte
        return False


def iter_documents(path: Path, display: str) -> Iterator[tuple[Any, Located]]:
    """Yield ``(data, located)`` for each document of a task file.

    YAML and JSON files hold either one task, a list of tasks, or ``{tasks: [...]}``;
    JSONL files hold one task per line. Parse errors become ProblemError. JSONL is read
    line by line, so a large file streams.
    """
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        yield from _jsonl_documents(path, display)
        return
    if suffix not in (".yaml", ".yml", ".json"):
        raise ProblemError([Problem(display, None, "", "task files must be .yaml, .yml, .json or .jsonl")])
    text = read_text(path, display)
    if suffix == ".json":
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProblemError(
                [Problem(display, exc.lineno, "", f"invalid JSON: {exc.msg} (column {exc.colno})")]
            ) from None
        except RecursionError:
            raise ProblemError(
                [Problem(display, None, "", f"values nest deeper than {MAX_DEPTH} levels")]
            ) from None
        except ValueError as exc:  # a number too long to convert
            raise ProblemError([Problem(display, None, "", _json_value_problem(exc))]) from None
    data, located = parse_yaml(text, display)
    yield data, located


def _json_value_problem(exc: ValueError) -> str:
    """What :func:`json.loads` refused that is not a syntax error: an integer longer than
    Python converts (4,300 digits) is the one case."""
    return f"invalid JSON: {str(exc).split(';')[0]}"


#: Tags of tagged unions in assay's models: pydantic puts them in error locations, the
#: user never wrote them.
UNION_TAGS = frozenset({"registered", "own-world"})


def _jsonl_documents(path: Path, display: str) -> Iterator[tuple[Any, Located]]:
    """One document per non-empty line, read line by line (a large file streams)."""
    try:
        if path.is_dir():
            raise ProblemError([Problem(display, None, "", "is a folder, not a file")])
        fh = path.open("rb")
    except OSError as exc:
        raise ProblemError([Problem(display, None, "", f"cannot read: {exc.strerror or exc}")]) from None
    with fh:
        for number, raw in enumerate(fh, start=1):
            if len(raw) > MAX_LINE_BYTES:
                mb = MAX_LINE_BYTES // (1024 * 1024)
                raise ProblemError([Problem(display, number, "", f"line longer than {mb} MB")])
            line = decode_utf8(raw, display, number)
            if not line.strip():
                continue
            located = Located(display, {(): number})
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ProblemError(
                    [Problem(display, number, "", f"invalid JSON: {exc.msg} (column {exc.colno})")]
                ) from None
            except RecursionError:
                raise ProblemError(
                    [Problem(display, number, "", f"values nest deeper than {MAX_DEPTH} levels")]
                ) from None
            except ValueError as exc:  # a number too long to convert
                raise ProblemError([Problem(display, number, "", _json_value_problem(exc))]) from None
            check_text(value, display, number)
            yield value, located


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
