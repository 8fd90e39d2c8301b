"""Loading suites: a folder with ``suite.yaml`` (plus task files and a templates
module) or a built-in suite by name. Every problem is collected and reported as
``file:line: field: message``."""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..core.registry import Registry
from ..core.sources import Located, PathKey, ProblemError, iter_documents, parse_yaml, validation_problems
from ..core.task import DomainSource, Task
from ..envs.local import LocalDomainRef, SuiteDomainError, load_local_domain
from ..envs.registry import DOMAINS, get_domain
from ..errors import Problem, SuiteError
from .loaded import LoadedSuite
from .templates import TemplateFn, collect_templates, load_module

#: Built-in suites by name: the value is (a lazy path to) the suite's folder.
SUITES: Registry[Path] = Registry("suite", "SUITES", {"retail": "assay.domains.retail:SUITE_DIR"})

TASK_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")


def resolve_source(source: str | Path) -> Path:
    """The ``suite.yaml`` that ``source`` (a folder, a file or a built-in name) means."""
    path = Path(source)
    if path.is_dir():
        path = path / "suite.yaml"
        if not path.exists():
            raise SuiteError([Problem(str(source), None, "", "folder has no suite.yaml")])
        return path
    if path.is_file():
        return path
    if isinstance(source, str) and source in SUITES:
        return Path(SUITES.get(source)) / "suite.yaml"
    known = ", ".join(SUITES.names())
    raise SuiteError(
        [Problem(str(source), None, "", f"no such file or folder, and not a built-in suite ({known})")]
    )


def _validate(model: type[BaseModel], data: Any, located: Located, prefix: PathKey = ()) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ProblemError(validation_problems(exc, located, prefix)) from None


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


def _task_files(root: Path, declared: list[str] | None) -> list[Path]:
    if declared is not None:
        files: list[Path] = []
        for pattern in declared:
            matched = sorted(root.glob(pattern))
            files.extend(matched or [root / pattern])
        return files
    folder = root / "tasks"
    return sorted(p for p in folder.rglob("*") if p.suffix in TASK_SUFFIXES) if folder.is_dir() else []


class _Loaded:
    """Mutable state of one load: problems found, tasks and where each came from."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.tasks: list[Task] = []
        self.where: dict[str, tuple[Located, PathKey]] = {}
        self.seen: dict[str, str] = {}
        self.digest = hashlib.sha256()
        self.check: Callable[[Task, Located, PathKey], list[Problem]] | None = None

    def add_task(self, raw: Any, located: Located, prefix: PathKey, keep: bool = True) -> None:
        """Validate one task; keep it (small files) or check it now and let it go
        (JSONL files, which are streamed again when the suite is run)."""
        try:
            task = _validate(Task, raw, located, prefix)
        except ProblemError as exc:
            self.problems.extend(exc.problems)
            return
        if task.id in self.seen:
            message = f"duplicate task id {task.id!r} (first at {self.seen[task.id]})"
            self.problems.append(located.problem(("id",), message, prefix))
            return
        self.seen[task.id] = f"{located.file}:{located.line(())}"
        if keep:
            self.where[task.id] = (located, prefix)
            self.tasks.append(task)
        elif self.check is not None:
            self.problems.extend(self.check(task, located, prefix))


def load_suite(source: str | Path) -> LoadedSuite:
    """Load and validate a suite; raise :class:`SuiteError` listing every problem."""
    with paused_gc():
        return _load_suite(source)


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many long-lived objects (a
    100,000-task suite would otherwise pay for repeated full collections), and resume
    it afterwards (no global side effect survives the load)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _load_suite(source: str | Path) -> LoadedSuite:
    suite_file = resolve_source(source)
    root = suite_file.parent
    display = str(suite_file) if Path(source).exists() else f"{source}:{suite_file.name}"
    state = _Loaded()
    text = suite_file.read_text(encoding="utf-8")
    try:
        data, located = parse_yaml(text, display)
    except ProblemError as exc:
        raise SuiteError(exc.problems) from None
    if not isinstance(data, dict):
        raise SuiteError([Problem(display, 1, "", "suite.yaml must be a mapping with name, tasks, ...")])

    raw_tasks = data.get("tasks") or []
    header = {k: v for k, v in data.items() if k != "tasks"}
    suite: LoadedSuite | None = None
    try:
        suite = _validate(LoadedSuite, header, located)
    except ProblemError as exc:
        state.problems.extend(exc.problems)
    extra_files: list[Path] = []
    if suite is not None:
        suite._path = root
        suite._local_templates = _local_templates(suite, root, located, state)
        domain_known, extra_files = _check_domain(suite, root, located, state)
        if domain_known:
            domain = get_domain(suite.domain_ref)
            state.digest.update(f"domain:{domain.name}:{domain.version}".encode())
            templates = suite_templates(suite)
            checked = suite

            def check(task: Task, where: Located, prefix: PathKey) -> list[Problem]:
                return _check_task(checked, task, where, prefix, templates)

            state.check = check
    if not isinstance(raw_tasks, list):
        state.problems.append(located.problem(("tasks",), "must be a list of tasks"))
        raw_tasks = []
    for i, raw in enumerate(raw_tasks):
        state.add_task(raw, located.sub("tasks", i), ("tasks", i))

    streamed: list[tuple[Path, str]] = []
    for path in _task_files(root, data.get("task_files")):
        rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        file_display = str(path) if Path(source).exists() else f"{source}:{rel}"
        if not path.exists():
            state.problems.append(located.problem(("task_files",), f"task file {rel} does not exist"))
            continue
        keep = path.suffix.lower() != ".jsonl"
        if not keep:
            streamed.append((path, file_display))
        try:
            for doc, doc_located in iter_documents(path, file_display):
                for raw, task_located, prefix in _task_entries(doc, doc_located):
                    state.add_task(raw, task_located, prefix, keep=keep)
        except ProblemError as exc:
            state.problems.extend(exc.problems)

    if suite is None:
        raise SuiteError(state.problems)
    suite.tasks = state.tasks
    suite._where = state.where
    suite._streamed = streamed
    if state.check is not None:
        for task in state.tasks:
            where, prefix = state.where[task.id]
            state.problems.extend(state.check(task, where, prefix))
    if state.problems:
        raise SuiteError(state.problems)
    _hash_files(state.digest, root)
    for path in extra_files:  # what the suite's own domain is built from, wherever it is
        named = (
            path.relative_to(root.resolve()).as_posix() if path.is_relative_to(root.resolve()) else str(path)
        )
        state.digest.update(f"domain-file:{named}".encode() + b"\0")
        _hash_content(state.digest, path)
    suite._hash = state.digest.hexdigest()[:16]
    return suite


def _check_domain(
    suite: LoadedSuite, root: Path, located: Located, state: _Loaded
) -> tuple[bool, list[Path]]:
    """Whether the suite's domain can be used, and the files of its own world (if any);
    problems go to ``state``."""
    if isinstance(suite.domain, DomainSource):
        ref = suite.domain_ref
        assert isinstance(ref, LocalDomainRef)
        try:
            loaded = load_local_domain(ref)
        except SuiteDomainError as exc:
            state.problems.append(located.problem(("domain",), str(exc)))
            return False, []
        except Exception as exc:  # the suite's own code failed: report it, never crash
            state.problems.append(located.problem(("domain",), f"building the domain failed: {exc!r}"))
            return False, []
        suite._modules.extend(f"{m} (domain)" for m in loaded.modules)
        return True, loaded.files
    name = suite.domain or "none"
    if name not in DOMAINS:
        known = ", ".join(DOMAINS.names())
        state.problems.append(located.problem(("domain",), f"unknown domain {name!r}; known: {known}"))
        return False, []
    return True, []


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


def _local_templates(
    suite: LoadedSuite, root: Path, located: Located, state: _Loaded
) -> dict[str, TemplateFn]:
    path = root / (suite.templates or "templates.py")
    if not path.exists():
        if suite.templates:
            state.problems.append(
                located.problem(("templates",), f"templates module {suite.templates} does not exist")
            )
        return {}
    try:
        found = collect_templates(load_module(path))
        suite._modules.append(f"{path.name} (templates)")
        return found
    except Exception as exc:  # a user's module failed to import: report, do not crash
        state.problems.append(located.problem(("templates",), f"cannot import {path.name}: {exc}"))
        return {}


def suite_templates(suite: LoadedSuite) -> dict[str, TemplateFn]:
    """Templates a suite can use: its domain's, then its own (which win)."""
    domain = get_domain(suite.domain_ref)
    return {**dict(domain.templates), **suite._local_templates}


def locate(suite: LoadedSuite, task_id: str, path: PathKey = ()) -> tuple[Located, PathKey]:
    """Where a task (spec) of a loaded suite was written."""
    return suite._where.get(task_id, (Located(str(suite.path or suite.name)), ()))


def _check_task(
    suite: LoadedSuite, spec: Task, located: Located, prefix: PathKey, templates: dict[str, TemplateFn]
) -> list[Problem]:
    """Semantic checks of one task: its template exists and produces a valid task; its
    graders are known and name existing tools."""
    from .instantiate import instantiate_task

    if spec.template and spec.template not in templates:
        known = ", ".join(sorted(templates)) or "none"
        return [located.problem(("template",), f"unknown template {spec.template!r}; known: {known}", prefix)]
    try:
        concrete = instantiate_task(suite, spec, 0, 0, where=(located, prefix))
    except ProblemError as exc:
        return exc.problems
    return _check_graders(suite, spec, concrete, located, prefix)


def iter_specs(suite: LoadedSuite) -> Iterator[Task]:
    """The suite's task specs in order: kept ones, then those streamed from JSONL files
    (read again, line by line, each time: memory stays flat for huge suites)."""
    yield from suite.tasks
    for path, display in suite._streamed:
        for doc, located in iter_documents(path, display):
            for raw, _, _ in _task_entries(doc, located):
                yield Task.model_validate(raw)


def _check_graders(
    suite: LoadedSuite, spec: Task, task: Task, located: Located, prefix: PathKey
) -> list[Problem]:
    from ..graders.registry import check_grader_spec

    domain = get_domain(suite.domain_ref)
    problems = []
    from_template = spec.template is not None and "graders" not in spec.model_fields_set
    for i, grader in enumerate(task.graders):
        for subpath, message in check_grader_spec(grader, domain, task):
            if from_template:
                path: PathKey = ("template",)
                message = f"template {spec.template!r} made grader {grader.label!r} with a problem: {message}"
            else:
                short = (*located.base, "graders", i, grader.kind) in located.lines
                path = located.written(("graders", i, grader.kind if short else "params", *subpath))
            problems.append(located.problem(path, message, prefix))
    return problems
