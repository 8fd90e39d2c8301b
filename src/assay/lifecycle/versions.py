"""Suite versions: accepting reviewed candidates (the version bumps, the changelog
grows, the previous version is archived) and diffing two versions task by task.

``accept`` copies the suite as it was to ``SUITE/.history/vOLD/`` (a dot-folder: not
part of the suite's hash), writes each accepted candidate to ``tasks/flowback/ID.yaml``,
checks that the suite still loads (else everything is rolled back), bumps ``version:``
in ``suite.yaml`` and appends an entry to ``CHANGELOG.md``. ``SUITE@OLD`` names an
archived version wherever a suite is expected by ``assay suite diff``.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..core.task import Task
from ..errors import AssayError, SuiteError
from ..suites.instantiate import iter_instances
from ..suites.loaded import LoadedSuite
from ..suites.loader import load_suite, resolve_source
from .duplicates import DEFAULT_NEAR, Match, near_duplicates
from .flowback import pending

HISTORY_DIR = ".history"
FLOWBACK_DIR = "tasks/flowback"
_VERSION_LINE = re.compile(r"^version:[ \t]*(?P<value>[^#\n]*?)[ \t]*(?P<comment>#.*)?$", re.MULTILINE)
_NAME_LINE = re.compile(r"^name:.*$", re.MULTILINE)


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
        folder = suite_folder(base) / HISTORY_DIR / f"v{version}"
        if not (folder / "suite.yaml").is_file():
            raise AssayError(
                f"{text}: no archived version {version} (archives are made by assay suite accept)"
            )
        return folder
    return resolve_source(source).parent


def _archive(folder: Path, version: str) -> Path:
    target = folder / HISTORY_DIR / f"v{version}"
    if not target.exists():
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
    new = version or next_version(old)
    archive = _archive(folder, old)
    written = _write_tasks(folder, suite, tasks)
    suite_file = folder / "suite.yaml"
    before = suite_file.read_text(encoding="utf-8")
    suite_file.write_text(set_version(before, new), encoding="utf-8")
    try:
        load_suite(folder)
    except SuiteError:
        suite_file.write_text(before, encoding="utf-8")
        for path in written:
            path.unlink()
        raise
    _changelog(folder, suite.name, new, at, [waiting[i] for i in chosen], message)
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


def _write_tasks(folder: Path, suite: LoadedSuite, tasks: list[Task]) -> list[Path]:
    target = folder / FLOWBACK_DIR
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for task in tasks:
        path = target / f"{task.id}.yaml"
        if suite.task_files and not _covered(folder, path, suite.task_files):
            raise AssayError(
                f"{folder / 'suite.yaml'}: task_files does not include {FLOWBACK_DIR}/*.yaml; add it so "
                "accepted tasks are part of the suite"
            )
        data = task.model_dump(mode="json", exclude_defaults=True)
        path.write_text(
            yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8"
        )
        written.append(path)
    return written


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


def diff_suites(old_source: str | Path, new_source: str | Path, seed: int = 0) -> dict[str, Any]:
    """Tasks added, removed and changed (by field, with each task's hash) between two
    suite versions, instantiated at ``seed`` (schema ``assay.suite-diff/1``)."""
    old, new = load_suite(suite_folder(old_source)), load_suite(suite_folder(new_source))
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
