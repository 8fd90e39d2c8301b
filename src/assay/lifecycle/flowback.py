"""Flow-back: a badcase becomes a candidate regression task in the suite's review area.

``promote`` takes the concrete task the badcase's first trial ran (the run's suite at
the run's seed: user scenario, initial state, graders, reference), makes it a static
regression task, redacts it (one redaction session, so the pseudonyms of its records,
known facts, graders and reference agree) and writes it to ``SUITE/.review/ID.yaml``
with a header naming the badcase. The review area is a dot-folder: it is not part of
the suite's hash, so a pending candidate changes nothing a run sees. ``assay suite
accept`` (:mod:`.versions`) moves reviewed candidates in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..core.task import Task
from ..errors import AssayError
from ..redact import Redactor
from ..suites.instantiate import iter_instances
from ..suites.loaded import LoadedSuite
from ..suites.loader import load_suite
from .badcase import Badcase
from .duplicates import DEFAULT_NEAR, Match, near_duplicates

REVIEW_DIR = ".review"
SCHEMA = "assay.candidate/1"


def review_dir(suite_dir: Path) -> Path:
    return suite_dir / REVIEW_DIR


def source_task(case: Badcase) -> Task:
    """The concrete task the badcase's first trial ran (its run's suite and seed)."""
    if not case.source.trials:
        raise AssayError(f"badcase {case.badcase_id} names no trial to promote (source {case.source.kind})")
    first = case.source.trials[0]
    where = case.suite.get("source") or case.suite.get("name")
    if not where:
        raise AssayError(f"badcase {case.badcase_id} does not say which suite its trials ran")
    suite = load_suite(where)
    seed = int(case.suite.get("seed", 0))
    for task in iter_instances(suite, seed):
        if task.id == first.task_id:
            return task
    raise AssayError(
        f"badcase {case.badcase_id}: suite {where} (seed {seed}) has no task {first.task_id!r} any more"
    )


def candidate_task(
    case: Badcase, task: Task, suite: LoadedSuite | None, redactor: Redactor
) -> dict[str, Any]:
    """The regression task (as a dict, redacted) a badcase flows back as."""
    data = task.model_dump(mode="json", exclude_defaults=True)
    for key in ("template", "params", "instances"):
        data.pop(key, None)
    metadata = {k: v for k, v in data.pop("metadata", {}).items() if k not in ("suite_dir", "template_seed")}
    if suite is not None:
        data.setdefault("timezone", suite.defaults.timezone)
    data.update(
        id=f"{task.id}-{case.badcase_id}",
        split="regression",
        tags=sorted({*task.tags, "badcase", "flow-back"}),
        description=f"Flow-back of badcase {case.badcase_id}: {case.phenomenon}",
    )
    failing = [g for g in case.signature.get("graders", [])]
    metadata["badcase"] = {
        "id": case.badcase_id,
        "run_id": case.source.run_id,
        "source_task": task.id,
        "source_task_hash": task.input_hash(),
        "failing": failing,
    }
    data["metadata"] = metadata
    redacted = redactor.redact(data)
    return dict(redacted.value)


def write_candidate(
    suite_dir: Path, task: dict[str, Any], case: Badcase, matches: list[Match], at: str
) -> Path:
    folder = review_dir(suite_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task['id']}.yaml"
    header = {
        "schema": SCHEMA,
        "badcase": case.badcase_id,
        "phenomenon": case.phenomenon,
        "created_at": at,
        "near_duplicates": [m.to_dict() for m in matches],
        "review": "pending",
    }
    text = (
        "# A flow-back candidate: review it (the task below, redacted), then\n"
        f"#   assay suite accept {suite_dir} {task['id']}\n"
        + yaml.safe_dump({"candidate": header, "task": task}, sort_keys=False, allow_unicode=True, width=100)
    )
    path.write_text(text, encoding="utf-8")
    return path


def promote(
    case: Badcase,
    suite_dir: str | Path,
    *,
    at: str,
    threshold: float = DEFAULT_NEAR,
    redactor: Redactor | None = None,
) -> tuple[Path, dict[str, Any], list[Match]]:
    """Write the badcase's candidate task into ``suite_dir``'s review area; returns the
    file, the task and its near-duplicates among the suite's tasks and pending candidates."""
    folder = Path(suite_dir)
    if not (folder / "suite.yaml").is_file():
        raise AssayError(
            f"--suite {suite_dir}: not a suite folder (no suite.yaml); promote into a folder you own"
        )
    target = load_suite(folder)
    task = candidate_task(case, source_task(case), target, redactor or Redactor())
    concrete = Task.model_validate(task)
    if (review_dir(folder) / f"{concrete.id}.yaml").exists():
        raise AssayError(
            f"{review_dir(folder) / (concrete.id + '.yaml')} exists: "
            f"badcase {case.badcase_id} is already a candidate"
        )
    existing = [*iter_instances(target, 0), *(Task.model_validate(c["task"]) for c in pending(folder))]
    matches = near_duplicates(concrete, existing, threshold)
    return write_candidate(folder, task, case, matches, at), task, matches


def pending(suite_dir: Path) -> list[dict[str, Any]]:
    """The candidates waiting in the review area, by file name (with ``path``)."""
    folder = review_dir(suite_dir)
    out = []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise AssayError(f"{path}: not a readable candidate ({exc})") from None
        if not isinstance(data, dict) or "task" not in data:
            raise AssayError(f"{path}: a candidate file holds `candidate:` and `task:`")
        out.append({**data, "path": path})
    return out
