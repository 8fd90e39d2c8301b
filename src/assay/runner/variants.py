"""How a run's tasks differ from the suite's: perturbations (``--perturb``) and the probe
track (``--probe``), which re-checks each task's time-sensitive evidence at run time.

The probe track calls the user's probe function once per evidence record of the run's
tasks, before the first trial, and classifies each record:

- ``current``: the probe returns the frozen value; the task runs as written.
- ``stale``: the fact changed (content drift). A record with ``binds`` refreshes the
  task (the current value written at those paths) and the task runs against today's
  facts; without ``binds`` the task is not run. Either way the staleness is reported
  apart and never counted against the agent.
- ``probe_error``: the probe raised (a source down, a changed API): a tool or
  environment failure, not the agent's; the task is not run.

The checks are stored with the run, so a resumed run refreshes the same way without
probing again.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..core.hashing import stable_hash
from ..core.registry import import_object
from ..core.task import Evidence, Task
from ..envs.perturb import PerturbationPlan, perturb_task
from ..errors import SpecError

Probe = Callable[[Evidence, Task], Any]
TaskSource = Callable[[], Iterable[Task]]


def load_probe(spec: str) -> Probe:
    """The probe function ``spec`` names: ``package.module:function`` or
    ``path/to/file.py:function``."""
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise SpecError(f"--probe {spec!r}: write module:function or file.py:function")
    try:
        if target.endswith(".py"):
            path = Path(target)
            if not path.is_file():
                raise SpecError(f"--probe {spec!r}: no file {path}")
            name = f"assay_probe_{abs(hash(str(path.resolve())))}"
            module = sys.modules.get(name)
            if module is None:
                loaded = importlib.util.spec_from_file_location(name, path)
                if loaded is None or loaded.loader is None:
                    raise SpecError(f"--probe {spec!r}: cannot import {path}")
                module = importlib.util.module_from_spec(loaded)
                sys.modules[name] = module
                loaded.loader.exec_module(module)
            fn = getattr(module, attr)
        else:
            fn = import_object(f"{target}:{attr}")
    except SpecError:
        raise
    except Exception as exc:
        raise SpecError(f"--probe {spec!r}: cannot load it ({type(exc).__name__}: {exc})") from None
    if not callable(fn):
        raise SpecError(f"--probe {spec!r}: {attr} is not a function")
    return fn


def same_value(frozen: Any, current: Any) -> bool:
    """Equal as facts: numbers within 1e-9 (relative), text ignoring case and spaces."""
    if isinstance(frozen, (int, float)) and isinstance(current, (int, float)):
        return math.isclose(float(frozen), float(current), rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(frozen, str) and isinstance(current, str):
        return frozen.strip().casefold() == current.strip().casefold()
    return bool(frozen == current)


def _age_days(evidence: Evidence, now: datetime) -> float:
    retrieved = evidence.retrieved_at
    if retrieved.tzinfo is None:
        retrieved = retrieved.replace(tzinfo=timezone.utc)
    return round((now - retrieved).total_seconds() / 86400, 2)


def check_evidence(tasks: Iterable[Task], probe: Probe) -> list[dict[str, Any]]:
    """One check per evidence record of ``tasks`` (see the module docstring)."""
    checks = []
    for task in tasks:
        for evidence in task.evidence:
            now = datetime.now(timezone.utc)
            check: dict[str, Any] = {
                "task_id": task.id,
                "evidence_id": evidence.id,
                "source": evidence.source,
                "fact": evidence.fact,
                "frozen": evidence.value,
                "retrieved_at": evidence.retrieved_at.isoformat(),
                "checked_at": now.isoformat(timespec="seconds"),
                "age_days": _age_days(evidence, now),
                "binds": list(evidence.binds),
                "current": None,
                "error": None,
            }
            try:
                check["current"] = probe(evidence, task)
            except Exception as exc:  # the source, not the agent: reported apart
                check.update(status="probe_error", error=f"{type(exc).__name__}: {exc}", action="skipped")
                checks.append(check)
                continue
            if same_value(evidence.value, check["current"]):
                check.update(status="current", action="run")
            else:
                check.update(status="stale", action="refreshed" if evidence.binds else "skipped")
            checks.append(check)
    _whole_tasks(checks)
    return checks


def _whole_tasks(checks: list[dict[str, Any]]) -> None:
    """A task runs only when none of its records says skip."""
    skipped = {c["task_id"] for c in checks if c["action"] == "skipped"}
    for c in checks:
        if c["task_id"] in skipped and c["action"] != "skipped":
            c["action"] = "skipped (another record of the task)"


def _set_path(data: Any, path: str, frozen: Any, current: Any, task_id: str) -> None:
    parts = path.split(".")
    node = data
    for part in parts[:-1]:
        node = _step(node, part, path, task_id)
    last = parts[-1]
    old = _step(node, last, path, task_id)
    text = str(frozen)
    word = re.compile(rf"(?<!\w){re.escape(text)}(?!\w)")
    value: Any = current
    inside = isinstance(old, str) and old != text and bool(text) and word.search(old) is not None
    if inside and not isinstance(current, (dict, list)):  # the value inside a longer text: whole words
        value = word.sub(lambda _: str(current), old)
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def _step(node: Any, part: str, path: str, task_id: str) -> Any:
    try:
        return node[int(part)] if isinstance(node, list) else node[part]
    except (KeyError, IndexError, ValueError, TypeError):
        raise SpecError(
            f"task {task_id}: evidence binds {path!r}, which is not a field of the task"
        ) from None


def refreshed(task: Task, checks: Iterable[Mapping[str, Any]]) -> Task | None:
    """``task`` as the probe track runs it: unchanged, refreshed with current values,
    or None (not run: stale without binds, or the probe failed). ``checks`` may hold
    other tasks' checks too."""
    mine = [c for c in checks if c["task_id"] == task.id]
    if any(str(c["action"]).startswith("skipped") for c in mine):
        return None
    stale = [c for c in mine if c["action"] == "refreshed"]
    if not stale:
        return task
    data = task.model_dump(mode="json", exclude_defaults=True)
    for c in stale:
        for path in c["binds"]:
            _set_path(data, path, c["frozen"], c["current"], task.id)
        for record in data.get("evidence", []):
            if record.get("id") == c["evidence_id"]:
                record.update(value=c["current"], retrieved_at=c["checked_at"])
    data["metadata"] = {**data.get("metadata", {}), "probe": {"refreshed": [c["evidence_id"] for c in stale]}}
    fresh = Task.model_validate(data)
    fresh._input_hash = stable_hash({"task": task.input_hash(), "refreshed": [c["current"] for c in stale]})
    return fresh


def variant_source(
    source: TaskSource,
    perturbations: PerturbationPlan | None,
    run_seed: int,
    checks: list[dict[str, Any]] | None,
) -> TaskSource:
    """The run's tasks: refreshed by the probe track's ``checks`` (when given), then
    perturbed. ``source`` itself when there is nothing to change."""
    if not perturbations and checks is None:
        return source

    by_task: dict[str, list[dict[str, Any]]] = {}
    for check in checks or ():
        by_task.setdefault(check["task_id"], []).append(check)

    def tasks() -> Iterable[Task]:
        for task in source():
            current = task if checks is None else refreshed(task, by_task.get(task.id, []))
            if current is not None:
                yield perturb_task(current, perturbations, run_seed)

    return tasks
