"""Suite versions: accepting reviewed candidates (the version bumps, the changelog
grows, the previous version is archived) and diffing two versions task by task.

``accept`` copies the suite as it was to ``SUITE/.history/vOLD/`` (a dot-folder: not
part of the suite's hash), writes each accepted candidate to ``tasks/flowback/ID.yaml``,
checks that the suite still loads (else everything is rolled back: the archive, the
written tasks and any folder made for them removed, ``suite.yaml`` as it was), bumps
``version:`` in ``suite.yaml`` and appends an entry to ``CHANGELOG.md``. ``SUITE@OLD``
names an archived version wherever a suite is expected by ``assay suite diff``.

Versions are labels (:data:`VERSION_LABEL`: letters, digits, ``_ . -``, at most the
store's column width) because they name folders; ``accept`` refuses a new version equal
to the current one or already archived, and never overwrites or skips an archive.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml
from sqlalchemy import String

from ..core.problem import Problem
from ..core.task import Task
from ..errors import AssayError, SuiteError
from ..store import schema
from ..suites.instantiate import iter_instances
from ..suites.loaded import LoadedSuite
from ..suites.loader import load_suite, resolve_source
from .duplicates import DEFAULT_NEAR, Match, near_duplicates
from .flowback import pending

HISTORY_DIR = ".history"
FLOWBACK_DIR = "tasks/flowback"
_VERSION_LINE = re.compile(r"^version:[ \t]*(?P<value>[^#\n]*?)[ \t]*(?P<comment>#.*)?$", re.MULTILINE)
_NAME_LINE = re.compile(r"^name:.*$", re.MULTILINE)

#: Longest version label: the width of the store's ``runs.suite_version``.
MAX_VERSION = cast(String, schema.runs.c.suite_version.type).length or 50
#: A version label: it names the archive folder ``.history/vLABEL`` and ``SUITE@LABEL``.
VERSION_LABEL = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.-]{{0,{MAX_VERSION - 1}}}")


def version_problem(version: str) -> str | None:
    """Why ``version`` cannot label a suite version (None: it can)."""
    if VERSION_LABEL.fullmatch(version):
        return None
    shown = repr(version if len(version) <= 60 else version[:60] + "...")
    return (
        f"{shown} is not a version label: use letters, digits, '_', '.' and '-', starting with a "
        f"letter or digit, at most {MAX_VERSION} characters"
    )


def next_version(version: str) -> str:
    """``3`` -> ``4``, ``1.2`` -> ``1.3``; other labels need ``--version``."""
    if re.fullmatch(r"\d+", version):
        return str(int(version) + 1)
    if re.fullmatch(r"\d+(\.\d+)+", version):
        head, _, last = version.rpartition(".")
        return f"{head}.{int(last) + 1}"
    raise AssayError(f"suite version {version!r} is not a number; give the new one with --version")


def set_version(text: str, new: str) -> str:
    """``suite.yaml`` text with ``version:`` set to ``new`` (comments kept)."""
    value = f'"{new}"' if not re.fullmatch(r"\d+", new) else new
    match = _VERSION_LINE.search(text)
    if match:
        comment = f"  {match['comment']}" if match["comment"] else ""
        return text[: match.start()] + f"version: {value}{comment}" + text[match.end() :]
    name = _NAME_LINE.search(text)
    at = name.end() if name else 0
    return text[:at] + f"\nversion: {value}" + text[at:]


def suite_folder(source: str | Path) -> Path:
    """The folder of a suite given as a folder, a ``suite.yaml`` or ``FOLDER@VERSION``."""
    text = str(source)
    if "@" in text and not Path(text).exists():
        base, _, version = text.rpartition("@")
        problem = version_problem(version)
        if problem is not None:
            raise AssayError(f"{text}: {problem}")
        folder = suite_folder(base) / HISTORY_DIR / f"v{version}"
        if not (folder / "suite.yaml").is_file():
            raise AssayError(
                f"{text}: no archived version {version} (archives are made by assay suite accept)"
            )
        return folder
    return resolve_source(source).parent


def _archive(folder: Path, version: str, made: list[Path]) -> Path:
    """Copy the suite to ``.history/vVERSION`` (adding what it makes to ``made``); an
    existing archive is refused, never skipped or overwritten."""
    history = folder / HISTORY_DIR
    target = history / f"v{version}"
    if target.exists() or target.is_symlink():
        raise AssayError(
            f"{target} exists already: version {version} was archived before; give {folder / 'suite.yaml'} "
            "a version label of its own (or move that archive away) and accept again"
        )
    if not history.is_dir():
        made.append(history)
    made.append(target)
    shutil.copytree(
        folder,
        target,
        ignore=lambda d, names: [n for n in names if n.startswith(".") or n == "__pycache__"],
    )
    return target


def _covered(folder: Path, path: Path, declared: list[str]) -> bool:
    return any(path in folder.glob(pattern) for pattern in declared)


@dataclass
class Accepted:
    """What ``accept`` did."""

    old_version: str
    new_version: str
    tasks: list[str]
    archive: Path
    warnings: list[str] = field(default_factory=list)
    badcases: list[str] = field(default_factory=list)


def accept(
    suite_dir: str | Path,
    ids: list[str] | None,
    *,
    at: str,
    version: str | None = None,
    message: str | None = None,
    force: bool = False,
    threshold: float = DEFAULT_NEAR,
) -> Accepted:
    """Move candidates (``ids``, or all pending with ``ids=None``) into the suite."""
    folder = Path(suite_dir)
    if not (folder / "suite.yaml").is_file():
        raise AssayError(f"{suite_dir}: not a suite folder (no suite.yaml)")
    suite = load_suite(folder)
    waiting = {c["task"].get("id"): c for c in pending(folder)}
    chosen = list(waiting) if ids is None else ids
    if not chosen:
        raise AssayError(
            f"no candidate waits in {folder / '.review'} (assay badcase promote ID --suite {folder})"
        )
    unknown = [i for i in chosen if i not in waiting]
    if unknown:
        known = ", ".join(waiting) or "none"
        raise AssayError(f"no candidate {unknown[0]!r} in {folder / '.review'}; waiting: {known}")
    existing = list(iter_instances(suite, 0))
    tasks = [Task.model_validate(waiting[i]["task"]) for i in chosen]
    warnings, exact = _duplicates(tasks, existing, threshold)
    if exact and not force:
        raise AssayError(f"{exact[0]}; pass --force to add it anyway")
    old = suite.version
    new = _new_version(folder, old, version)
    targets = _targets(folder, suite, tasks)
    suite_file = folder / "suite.yaml"
    changelog = folder / "CHANGELOG.md"
    before = suite_file.read_text(encoding="utf-8")
    log_before = changelog.read_text(encoding="utf-8") if changelog.exists() else None
    made: list[Path] = []  # folders made, removed on failure
    written: list[Path] = []
    try:
        archive = _archive(folder, old, made)
        _write_tasks(folder, tasks, targets, made, written)
        suite_file.write_text(set_version(before, new), encoding="utf-8")
        load_suite(folder)
        _changelog(folder, suite.name, new, at, [waiting[i] for i in chosen], message)
    except BaseException as exc:
        suite_file.write_text(before, encoding="utf-8")
        if log_before is None:
            changelog.unlink(missing_ok=True)
        else:
            changelog.write_text(log_before, encoding="utf-8")
        for path in written:
            path.unlink(missing_ok=True)
        for path in reversed(made):
            shutil.rmtree(path, ignore_errors=True)
        if isinstance(exc, SuiteError):
            paths = {str(t): str(waiting[task.id]["path"]) for task, t in zip(tasks, targets, strict=True)}
            raise SuiteError(_as_candidates(exc.problems, paths, folder, chosen)) from None
        if isinstance(exc, OSError):
            raise AssayError(
                f"{folder}: cannot accept the candidates ({exc.strerror or exc}); nothing was changed"
            ) from None
        raise
    for i in chosen:
        Path(waiting[i]["path"]).unlink()
    badcases = [
        str(waiting[i].get("candidate", {}).get("badcase")) for i in chosen if waiting[i].get("candidate")
    ]
    return Accepted(old, new, chosen, archive, warnings, badcases)


def _duplicates(tasks: list[Task], existing: list[Task], threshold: float) -> tuple[list[str], list[str]]:
    warnings: list[str] = []
    exact: list[str] = []
    for task in tasks:
        matches: list[Match] = near_duplicates(task, existing, threshold)
        for m in matches[:3]:
            (exact if m.exact else warnings).append(m.sentence(task.id))
    return warnings, exact


def _new_version(folder: Path, old: str, given: str | None) -> str:
    """The version to accept to (``given``, or the next after ``old``), checked: both
    version labels, a new one, not archived already."""
    suite_file = folder / "suite.yaml"
    problem = version_problem(old)
    if problem is not None:
        raise AssayError(f"{suite_file}: version: {problem}; set one there before accepting")
    new = given if given is not None else next_version(old)
    option = "--version" if given is not None else f"{suite_file}: the next version"
    problem = version_problem(new)
    if problem is not None:
        raise AssayError(f"{option}: {problem}")
    if new == old:
        raise AssayError(f"--version {new}: the suite is at version {old} already; give a new version")
    if (folder / HISTORY_DIR / f"v{new}").exists():
        raise AssayError(
            f"{option} {new}: version {new} is archived already in {folder / HISTORY_DIR / f'v{new}'}; "
            "give a new version"
        )
    return new


def _targets(folder: Path, suite: LoadedSuite, tasks: list[Task]) -> list[Path]:
    """Where each accepted task goes, checked before anything is written: a file name of
    its own in ``tasks/flowback`` that the suite reads and that does not exist yet."""
    targets = []
    for task in tasks:
        name = f"{task.id}.yaml"
        if Path(name).name != name or "\\" in name or task.id.startswith("."):
            raise AssayError(
                f"candidate {task.id!r}: a task id that names a file is needed ({name!r} is not one)"
            )
        path = folder / FLOWBACK_DIR / name
        if suite.task_files and not _covered(folder, path, suite.task_files):
            raise AssayError(
                f"{folder / 'suite.yaml'}: task_files does not include {FLOWBACK_DIR}/*.yaml; add it so "
                "accepted tasks are part of the suite"
            )
        if path.exists() or path.is_symlink():
            raise AssayError(
                f"candidate {task.id!r}: {path} exists already (accepted before?); nothing was changed"
            )
        targets.append(path)
    return targets


def _write_tasks(
    folder: Path, tasks: list[Task], targets: list[Path], made: list[Path], written: list[Path]
) -> None:
    """Write the tasks to their targets; the folders made go to ``made``, the files to ``written``."""
    missing = [p for p in (folder / "tasks", folder / FLOWBACK_DIR) if not p.exists()]
    (folder / FLOWBACK_DIR).mkdir(parents=True, exist_ok=True)
    made.extend(missing)
    for task, path in zip(tasks, targets, strict=True):
        data = task.model_dump(mode="json", exclude_defaults=True)
        written.append(path)
        path.write_text(
            yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8"
        )


def _as_candidates(
    problems: list[Problem], paths: dict[str, str], folder: Path, ids: list[str]
) -> list[Problem]:
    """The suite's load problems with the candidates' review files named instead of the
    task files written for them (removed again), and a last line saying so."""
    names = "|".join(re.escape(p) for p in sorted(paths, key=len, reverse=True))
    pattern = re.compile(rf"(?P<path>{names})(?::\d+)?")

    def moved(text: str) -> str:
        return pattern.sub(lambda m: paths[m["path"]], text)

    out = []
    for p in problems:
        if p.file in paths:
            out.append(
                Problem(paths[p.file], None, f"task.{p.field}" if p.field else "task", moved(p.message))
            )
        else:
            out.append(Problem(p.file, p.line, p.field, moved(p.message)))
    out.append(
        Problem(
            str(folder / "suite.yaml"),
            None,
            "",
            f"accepting {', '.join(ids)} would break the suite: nothing was changed",
        )
    )
    return out


def _changelog(
    folder: Path, name: str, version: str, at: str, candidates: list[dict[str, Any]], message: str | None
) -> None:
    path = folder / "CHANGELOG.md"
    text = path.read_text(encoding="utf-8") if path.exists() else f"# Changelog of suite {name}\n"
    lines = [f"\n## version {version} ({at})\n"]
    if message:
        lines.append(f"{message}\n\n")
    for c in candidates:
        head = c.get("candidate") or {}
        task = c["task"]
        origin = f" from badcase {head['badcase']}" if head.get("badcase") else ""
        what = f": {head['phenomenon']}" if head.get("phenomenon") else ""
        lines.append(f"- added `{task['id']}` ({task.get('split', 'regression')}){origin}{what}\n")
    path.write_text(text.rstrip("\n") + "\n" + "".join(lines), encoding="utf-8")


# --- diff ---------------------------------------------------------------------------------
def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict) and data:
        out: dict[str, Any] = {}
        for k, v in data.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(data, list) and data:
        out = {}
        for i, v in enumerate(data):
            out.update(_flat(v, f"{prefix}.{i}"))
        return out
    return {prefix: data}


def changed_fields(old: Task, new: Task) -> list[str]:
    """Dotted paths of the fields that differ (metadata's folder and seeds ignored)."""
    skip = {"metadata"}
    a = _flat(old.model_dump(mode="json", exclude=skip))
    b = _flat(new.model_dump(mode="json", exclude=skip))
    return sorted(k for k in set(a) | set(b) if a.get(k, ...) != b.get(k, ...))


def _side(suite: LoadedSuite, where: str) -> dict[str, Any]:
    return {"source": where, "name": suite.name, "version": suite.version, "hash": suite.hash}


def _load(source: str | Path) -> LoadedSuite:
    """A suite as ``assay run`` takes it (folder, file, built-in name; its errors name
    what was given), or an archived version ``FOLDER@VERSION``."""
    if "@" in str(source) and not Path(source).exists():
        return load_suite(suite_folder(source))
    return load_suite(source)


def diff_suites(old_source: str | Path, new_source: str | Path, seed: int = 0) -> dict[str, Any]:
    """Tasks added, removed and changed (by field, with each task's hash) between two
    suite versions, instantiated at ``seed`` (schema ``assay.suite-diff/1``)."""
    old, new = _load(old_source), _load(new_source)
    a = {t.id: t for t in iter_instances(old, seed)}
    b = {t.id: t for t in iter_instances(new, seed)}
    changed = []
    for task_id in sorted(set(a) & set(b)):
        if a[task_id].input_hash() != b[task_id].input_hash() or changed_fields(a[task_id], b[task_id]):
            fields = changed_fields(a[task_id], b[task_id])
            changed.append(
                {
                    "id": task_id,
                    "old_hash": a[task_id].input_hash(),
                    "new_hash": b[task_id].input_hash(),
                    "fields": fields,
                }
            )
    return {
        "schema": "assay.suite-diff/1",
        "seed": seed,
        "old": _side(old, str(old_source)),
        "new": _side(new, str(new_source)),
        "added": [{"id": i, "hash": b[i].input_hash(), "split": b[i].split} for i in sorted(set(b) - set(a))],
        "removed": [
            {"id": i, "hash": a[i].input_hash(), "split": a[i].split} for i in sorted(set(a) - set(b))
        ],
        "changed": changed,
        "unchanged": len(set(a) & set(b)) - len(changed),
    }
