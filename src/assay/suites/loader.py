"""Loading suites: a folder with ``suite.yaml`` (plus task files and a templates
module) or a built-in suite by name. Every problem is collected and reported as
``file:line: field: message``."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..core.collector import paused_gc
from ..core.registry import Registry
from ..core.sources import (
    Located,
    PathKey,
    ProblemError,
    inside,
    iter_documents,
    parse_yaml,
    read_text,
    validation_problems,
)
from ..core.task import DomainSource, Task
from ..envs.local import LocalDomainRef, SuiteDomainError, load_local_domain
from ..envs.registry import DOMAINS, get_domain
from ..errors import Problem, SuiteError
from .checks import SEED_RANGE, _check_task, task_problem
from .files import _hash_content, _hash_files, _is, _task_entries, _task_files
from .loaded import LoadedSuite
from .templates import TemplateFn, collect_templates, load_module

#: Built-in suites by name: the value is (a lazy path to) the suite's folder.
SUITES: Registry[Path] = Registry("suite", "SUITES", {"retail": "assay.domains.retail:SUITE_DIR"})


def resolve_source(source: str | Path) -> Path:
    """The ``suite.yaml`` that ``source`` (a folder, a file or a built-in name) means."""
    path = Path(source)
    if path.is_dir():
        path = path / "suite.yaml"
        if not path.is_file():
            raise SuiteError([Problem(str(source), None, "", "folder has no suite.yaml file")])
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


class _Loaded:
    """Mutable state of one load: problems found, tasks and where each came from."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.tasks: list[Task] = []
        self.where: dict[str, tuple[Located, PathKey]] = {}
        self.seen: dict[str, str] = {}
        self.made: dict[str, str] = {}
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
        here = f"{located.file}:{located.line(())}"
        self.seen[task.id] = here
        problem = task_problem(task) or self._instance_clash(task, here)
        if problem is not None:
            self.problems.append(located.problem(*problem, prefix))
            return
        if keep:
            self.where[task.id] = (located, prefix)
            self.tasks.append(task)
        elif self.check is not None:
            self.problems.extend(self.check(task, located, prefix))

    def _instance_clash(self, task: Task, here: str) -> tuple[PathKey, str] | None:
        """Instance ids (``ID-1``, ``ID-2``...) must be unique across the suite too."""
        from .instantiate import instance_ids

        for made in instance_ids(task):
            first = self.made.get(made) or (self.seen.get(made) if made != task.id else None)
            if first is not None and first != here:
                return ("id",), f"task id {made!r} (instance of {task.id!r}) clashes with the task at {first}"
            self.made[made] = here
        return None


def load_suite(source: str | Path) -> LoadedSuite:
    """Load and validate a suite; raise :class:`SuiteError` listing every problem."""
    with paused_gc():
        try:
            return _load_suite(source)
        except OSError as exc:  # a file that cannot be read: one line, not a traceback
            what = f"{exc.filename}: " if exc.filename else ""
            raise SuiteError(
                [Problem(str(source), None, "", f"cannot read {what}{exc.strerror or exc}")]
            ) from None


def _load_suite(source: str | Path) -> LoadedSuite:
    suite_file = resolve_source(source)
    root = suite_file.parent
    given = Path(source).exists()
    display = str(suite_file) if given else f"{source}:{suite_file.name}"
    state = _Loaded()
    data, located = _read_suite_file(suite_file, display)
    raw_tasks = data.get("tasks") or []
    suite = _read_header(data, located, state)
    extra_files: list[Path] = []
    if suite is not None:
        suite._path = root
        suite._local_templates = _local_templates(suite, root, located, state)
        extra_files = _prepare_domain(suite, root, located, state)
    if not isinstance(raw_tasks, list):
        state.problems.append(located.problem(("tasks",), "must be a list of tasks"))
        raw_tasks = []
    for i, raw in enumerate(raw_tasks):
        state.add_task(raw, located.sub("tasks", i), ("tasks", i))
    streamed = _read_task_files(root, source if not given else None, data, located, state)
    if suite is None:
        raise SuiteError(state.problems)
    suite.tasks = state.tasks
    suite._where = state.where
    suite._streamed = streamed
    _check_tasks(state)
    if state.problems:
        raise SuiteError(state.problems)
    suite._hash = _suite_hash(state, root, extra_files)
    return suite


def _read_suite_file(suite_file: Path, display: str) -> tuple[dict[str, Any], Located]:
    try:
        data, located = parse_yaml(read_text(suite_file, display), display)
    except ProblemError as exc:
        raise SuiteError(exc.problems) from None
    if not isinstance(data, dict):
        raise SuiteError([Problem(display, 1, "", "suite.yaml must be a mapping with name, tasks, ...")])
    return data, located


def _read_header(data: dict[str, Any], located: Located, state: _Loaded) -> LoadedSuite | None:
    """The suite's own fields (everything but its tasks); None with the problems noted."""
    header = {k: v for k, v in data.items() if k != "tasks"}
    try:
        suite = _validate(LoadedSuite, header, located)
    except ProblemError as exc:
        state.problems.extend(exc.problems)
        return None
    if not SEED_RANGE[0] <= suite.defaults.data_seed <= SEED_RANGE[1]:
        message = f"seed {suite.defaults.data_seed} does not fit in 64 bits"
        state.problems.append(located.problem(("defaults", "data_seed"), message))
    return suite


def _prepare_domain(suite: LoadedSuite, root: Path, located: Located, state: _Loaded) -> list[Path]:
    """Check the suite's domain; when it is known, hash its identity and check each task
    against it as it is read. Returns the files the suite's own domain is built from."""
    domain_known, extra_files = _check_domain(suite, root, located, state)
    if domain_known:
        domain = get_domain(suite.domain_ref)
        state.digest.update(f"domain:{domain.name}:{domain.version}".encode())
        templates = suite_templates(suite)

        def check(task: Task, where: Located, prefix: PathKey) -> list[Problem]:
            return _check_task(suite, task, where, prefix, templates)

        state.check = check
    return extra_files


def _read_task_files(
    root: Path, named: str | Path | None, data: dict[str, Any], located: Located, state: _Loaded
) -> list[tuple[Path, str]]:
    """Read the suite's ``task_files`` into ``state``; returns the JSONL files, whose
    tasks are streamed again when the suite runs (``named``: the built-in name the suite
    was given by, shown in problems instead of a path)."""
    streamed: list[tuple[Path, str]] = []
    for path in _task_files(root, data.get("task_files"), located, state.problems):
        rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        file_display = str(path) if named is None else f"{named}:{rel}"
        if not _is(path, "exists"):
            state.problems.append(located.problem(("task_files",), f"task file {rel} does not exist"))
            continue
        if _is(path, "is_dir"):
            state.problems.append(located.problem(("task_files",), f"task file {rel} is a folder"))
            continue
        if not inside(root, path):  # e.g. a symbolic link out of the folder: not hashed
            message = f"task file {rel} is outside the suite folder (a link?); copy it in"
            state.problems.append(located.problem(("task_files",), message))
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
    return streamed


def _check_tasks(state: _Loaded) -> None:
    if state.check is not None:
        for task in state.tasks:
            where, prefix = state.where[task.id]
            state.problems.extend(state.check(task, where, prefix))


def _suite_hash(state: _Loaded, root: Path, extra_files: list[Path]) -> str:
    """The content hash: every file of the suite folder, and what its own domain is built
    from, wherever it is."""
    _hash_files(state.digest, root)
    for path in extra_files:
        named = (
            path.relative_to(root.resolve()).as_posix() if path.is_relative_to(root.resolve()) else str(path)
        )
        state.digest.update(f"domain-file:{named}".encode() + b"\0")
        _hash_content(state.digest, path)
    return state.digest.hexdigest()[:16]


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
        suite._domain_files_seen = loaded.files_seen  # trials find it without listing its files
        return True, loaded.files
    name = suite.domain or "none"
    if name not in DOMAINS:
        known = ", ".join(DOMAINS.names())
        state.problems.append(located.problem(("domain",), f"unknown domain {name!r}; known: {known}"))
        return False, []
    return True, []


def _local_templates(
    suite: LoadedSuite, root: Path, located: Located, state: _Loaded
) -> dict[str, TemplateFn]:
    path = root / (suite.templates or "templates.py")
    if suite.templates is not None and (Path(suite.templates).is_absolute() or not inside(root, path)):
        message = f"templates module {suite.templates} must be a file inside the suite folder"
        state.problems.append(located.problem(("templates",), message))
        return {}
    if not _is(path, "is_file") or not inside(root, path):
        if suite.templates:
            state.problems.append(
                located.problem(("templates",), f"templates module {suite.templates} does not exist")
            )
        return {}
    try:
        found = collect_templates(load_module(path))
        suite._modules.append(f"{path.relative_to(root).as_posix()} (templates)")
        return found
    except (Exception, SystemExit) as exc:  # a user's module failed to import: report, do not crash
        what = f"exited ({exc!r})" if isinstance(exc, SystemExit) else f"failed: {type(exc).__name__}: {exc}"
        state.problems.append(located.problem(("templates",), f"importing {path.name} {what}"))
        return {}


def suite_templates(suite: LoadedSuite) -> dict[str, TemplateFn]:
    """Templates a suite can use: its domain's, then its own (which win)."""
    domain = get_domain(suite.domain_ref)
    return {**dict(domain.templates), **suite._local_templates}


def locate(suite: LoadedSuite, task_id: str, path: PathKey = ()) -> tuple[Located, PathKey]:
    """Where a task (spec) of a loaded suite was written."""
    return suite._where.get(task_id, (Located(str(suite.path or suite.name)), ()))


def iter_specs(suite: LoadedSuite) -> Iterator[Task]:
    """The suite's task specs in order: kept ones, then those streamed from JSONL files
    (read again, line by line, each time: memory stays flat for huge suites)."""
    yield from suite.tasks
    for path, display in suite._streamed:
        for doc, located in iter_documents(path, display):
            for raw, _, _ in _task_entries(doc, located):
                yield Task.model_validate(raw)
