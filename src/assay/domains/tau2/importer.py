"""``assay import tau2 PATH --domain NAME -o DIR``: a tau2-bench domain as an assay suite.

The suite folder holds ``suite.yaml``, ``tasks/tasks.json`` and ``data/`` (a copy of the
domain's database files and policy, with tau2's license). Its domain is the port
(``domain: {factory: assay.domains.tau2:suite_domain, options: {domain: NAME}, data:
[data]}``) reading that copy, so the suite's hash covers the data. Each tau2 task becomes
an assay task:

- ``initial_state``: ``data`` ← ``initialization_data`` (``{agent, user}``), ``actions`` ←
  ``initialization_actions`` (``env_type`` → ``requestor``), ``history`` ←
  ``message_history``; ``user_tools`` as tau2 gives them;
- ``reference.actions`` ← the gold actions (``requestor``, ``compare_args``); the user's
  own gold actions are also the scripted user's ``user.actions``;
- ``user``: tau2's user scenario (``instructions``: tau2's text; ``goal``: the reason for
  the call); the agent speaks first with tau2's greeting (suite defaults);
- graders from the evaluation criteria, gating when their component is in the reward
  basis, reported (non-gating) otherwise: DB → ``state: gold`` (name ``db``),
  ENV_ASSERTION → ``env_assert`` (``env_assertions``), COMMUNICATE → ``communicate`` in
  tau2 mode, ACTION → ``actions`` with tau2's rule, NL_ASSERTION → a ``judge`` with one
  veto item per assertion (``nl_assertions``; skipped without ``--judge``);
- ``split``: tau2's ``train`` → ``regression``, ``test`` → ``holdout`` (others: regression);
- banking_knowledge: the task's ``required_documents`` as the gold of a non-gating
  ``retrieval`` grader on ``KB_search`` (the retrieval metrics, reported; the reward is
  tau2's). ``--domain banking_knowledge-rag`` writes the retrieval-only suite instead
  (:func:`.banking_knowledge.import_banking_knowledge`: the customer's request, retrieval
  and citation graders, no account tools).
"""

from __future__ import annotations

import importlib
import json
import shutil
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ...core.sources import ProblemError, check_text
from ...core.task import Task as AssayTask
from ...suites.checks import SAFE_ID
from .loader import find_domain_folder, load_domain
from .specs import DOMAINS as PORTED
from .store import Tau2DataError
from .tasks import Action, EnvAssertion, Message, Task, parse_task

#: tau2's first agent message (its orchestrator's default).
GREETING = "Hi! How can I help you today?"
#: tau2 split name -> assay split.
SPLITS = {"train": "regression", "test": "holdout"}
TASKS_FILE = "tasks/tasks.json"
DATA_DIR = "data"
#: The retrieval-only banking suite (written by its own importer).
BANKING_RAG = "banking_knowledge-rag"
#: Domains ``assay import tau2`` knows.
IMPORTABLE = (*PORTED, "telecom-workflow", BANKING_RAG)
#: The tool whose outputs the banking suite's retrieval grader reads.
RETRIEVAL_TOOLS = ["KB_search"]
_SKIP = {"tasks.json", "split_tasks.json"}


@dataclass
class ImportReport:
    """What an import wrote."""

    domain: str
    suite_file: Path
    tasks: int
    splits: dict[str, int] = field(default_factory=dict)
    graders: dict[str, int] = field(default_factory=dict)
    """Graders written, by name (gating or not)."""
    gating: dict[str, int] = field(default_factory=dict)
    data_files: list[str] = field(default_factory=list)


def _side(requestor: str) -> str:
    return "user" if requestor == "user" else "agent"


def _action(action: Action) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": action.name,
        "args": action.arguments,
        "requestor": _side(action.requestor),
    }
    if action.compare_args is not None:
        out["compare_args"] = action.compare_args
    return out


def message_items(messages: list[Message]) -> list[dict[str, Any]]:
    """tau2 messages as the items of a task's history and of a recorded conversation."""
    out = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content or ""}
        if m.tool_calls:
            item["tool_calls"] = [
                {"id": c.id, "name": c.name, "args": c.arguments, "requestor": _side(c.requestor)}
                for c in m.tool_calls
            ]
        if m.role == "tool":
            item["tool_call_id"] = m.id
            item["error"] = m.error
        out.append(item)
    return out


def _assertion(a: EnvAssertion) -> dict[str, Any]:
    out: dict[str, Any] = {"name": a.func_name, "args": a.arguments, "requestor": _side(a.env_type)}
    if not a.assert_value:
        out["expect"] = False
    if a.message:
        out["message"] = a.message
    return out


def _rubric(task_id: str, assertions: list[str]) -> dict[str, Any]:
    return {
        "name": "tau2-nl-assertions",
        "description": f"tau2 task {task_id}: every natural-language assertion must hold for the conversation.",
        "dimensions": [
            {
                "name": f"assertion_{i + 1}",
                "weight": "veto",
                "description": text,
                "scoring": {"pass": "The assertion holds for the conversation.", "fail": "It does not hold."},
            }
            for i, text in enumerate(assertions)
        ],
    }


def graders_of(task: Task) -> list[dict[str, Any]]:
    """The assay graders of a tau2 task's evaluation criteria (see the module docstring)."""
    criteria = task.evaluation_criteria
    if criteria is None:
        return []
    basis = set(criteria.reward_basis)
    graders: list[dict[str, Any]] = []
    if criteria.actions is None and criteria.env_assertions is None:
        # tau2 does not look at the database then (db_match is true): neither does the suite
        graders.append({"kind": "state", "name": "db", "params": {"gold": False}, "gating": "DB" in basis})
    else:
        graders.append({"kind": "state", "name": "db", "params": "gold", "gating": "DB" in basis})
    if criteria.env_assertions:
        graders.append(
            {
                "kind": "env_assert",
                "name": "env_assertions",
                "params": [_assertion(a) for a in criteria.env_assertions],
                "gating": "ENV_ASSERTION" in basis,
            }
        )
    if criteria.communicate_info:
        graders.append(
            {
                "kind": "communicate",
                "name": "communicate",
                "params": {"required": list(criteria.communicate_info), "mode": "tau2"},
                "gating": "COMMUNICATE" in basis,
            }
        )
    if criteria.actions:
        graders.append(
            {
                "kind": "actions",
                "name": "actions",
                "params": {"rule": "tau2", "required": [_action(a) for a in criteria.actions]},
                "gating": "ACTION" in basis,
            }
        )
    if task.required_documents:
        graders.append(
            {
                "kind": "retrieval",
                "name": "retrieval",
                "params": {"gold": list(task.required_documents), "tools": list(RETRIEVAL_TOOLS)},
                "gating": False,
            }
        )
    if "NL_ASSERTION" in basis and criteria.nl_assertions:
        graders.append(
            {
                "kind": "judge",
                "name": "nl_assertions",
                "params": {"rubric": _rubric(task.id, criteria.nl_assertions), "target": "transcript"},
                "gating": True,
            }
        )
    return graders


def convert_task(task: Task, split: str = "regression", domain: str | None = None) -> dict[str, Any]:
    """A tau2 task as an assay task (JSON-able; validated by :class:`assay.core.Task`).
    For banking_knowledge (a plain-text scenario full of directions to tau2's simulator,
    the stop token among them) the user's goal is the customer's request alone."""
    criteria = task.evaluation_criteria
    gold = list(criteria.actions or []) if criteria is not None else []
    scenario = task.user_scenario
    instructions = scenario.instructions if scenario is not None else ""
    goal = instructions.reason_for_call if not isinstance(instructions, str) else instructions
    if domain == "banking_knowledge" and isinstance(instructions, str):
        from .banking_knowledge import customer_request

        goal = customer_request(instructions)
    user: dict[str, Any] = {"opening": "", "goal": goal.strip(), "instructions": str(scenario or "")}
    user_actions = [_action(a) for a in gold if a.requestor == "user"]
    if user_actions:
        user["actions"] = user_actions
    out: dict[str, Any] = {"id": task.id, "split": split, "user": user}
    description = task.description.purpose if task.description is not None else None
    if description:
        out["description"] = description
    if task.id.startswith("[") and "]" in task.id:  # telecom: "[issue_kind]..."
        out["tags"] = [task.id[1 : task.id.index("]")]]
    initial: dict[str, Any] = {}
    state = task.initial_state
    if state is not None:
        data = state.initialization_data
        if data is not None:
            parts = {"agent": data.agent_data, "user": data.user_data}
            initial["data"] = {k: v for k, v in parts.items() if v is not None}
        if state.initialization_actions:
            initial["actions"] = [
                {"name": a.func_name, "args": a.arguments, "requestor": _side(a.env_type)}
                for a in state.initialization_actions
            ]
        if state.message_history:
            initial["history"] = message_items(state.message_history)
    if initial:
        out["initial_state"] = initial
    if task.user_tools is not None:
        out["user_tools"] = list(task.user_tools)
    out["graders"] = graders_of(task)
    if gold:
        out["reference"] = {"actions": [_action(a) for a in gold]}
    basis = list(criteria.reward_basis) if criteria is not None else []
    out["metadata"] = {"tau2": {"reward_basis": basis, **({"ticket": task.ticket} if task.ticket else {})}}
    AssayTask.model_validate(out)
    return out


def read_splits(folder: Path) -> dict[str, str]:
    """Task id -> assay split, from tau2's ``split_tasks.json`` (if any)."""
    path = folder / "split_tasks.json"
    if not path.is_file():
        return {}
    raw = _read_json(path, "cannot read")
    if not isinstance(raw, dict):
        raise Tau2DataError(f"{path}: expected a mapping of split names to task ids")
    out: dict[str, str] = {}
    for name, ids in raw.items():
        if name in SPLITS and isinstance(ids, list):
            out.update({str(i): SPLITS[name] for i in ids})
    return out


def _license(folder: Path) -> Path | None:
    for parent in [folder, *folder.parents][:6]:
        if (parent / "LICENSE").is_file():
            return parent / "LICENSE"
    return None


def _read_json(path: Path, what: str) -> Any:
    """A JSON file's content, or a :class:`Tau2DataError` naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise Tau2DataError(
            f"{path}: {what}: values nest too deeply (lists and objects inside one another)"
        ) from None
    except (OSError, ValueError) as exc:  # ValueError: bad JSON, not UTF-8, a number too long
        raise Tau2DataError(f"{path}: {what}: {exc}") from None


def _raw_tasks(folder: Path) -> list[Task]:
    """The tasks of the domain's ``tasks.json``, each with an id an assay suite can hold
    (:data:`assay.suites.checks.SAFE_ID`), no two alike."""
    path = folder / "tasks.json"
    raw = _read_json(path, "cannot read tau2 tasks")
    if isinstance(raw, dict) and "tasks" in raw:
        raw = raw["tasks"]
    if not isinstance(raw, list):
        raise Tau2DataError(f"{path}: expected a list of tasks")
    tasks = [parse_task(t, str(path)) for t in raw]
    first: dict[str, int] = {}
    for i, task in enumerate(tasks):
        if not SAFE_ID.fullmatch(task.id):
            raise Tau2DataError(
                f"{path}: task {task.id!r}: its id cannot be an assay task id (use letters, digits and "
                "_ . : - [ ] |, starting with a letter, digit, _ or [, at most 300 characters)"
            )
        if task.id in first:
            raise Tau2DataError(
                f"{path}: task {task.id!r}: duplicate task id (tasks [{first[task.id]}] and [{i}] of the list)"
            )
        first[task.id] = i
    return tasks


def _converted(path: Path, task: Task, split: str, domain: str) -> dict[str, Any]:
    """:func:`convert_task`, a task assay's model refuses as a :class:`Tau2DataError`."""
    try:
        return convert_task(task, split, domain)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise Tau2DataError(
            f"{path}: task {task.id!r}: cannot be imported: as an assay task, {where}: {first['msg']}"
        ) from None


def _check_converted(path: Path, converted: list[dict[str, Any]]) -> None:
    """Refuse a task the suite loader would refuse in ``tasks/tasks.json`` (text with a NUL
    or a lone surrogate, values nested too deeply), naming the tau2 task."""
    for i, task in enumerate(converted):
        try:
            check_text(task, str(path), None, (i,))  # (i,): the depth the loader counts
        except ProblemError as exc:
            problem = exc.problems[0]
            field = problem.field.removeprefix(f"[{i}]").lstrip(".")
            what = f"its {field} would hold" if field else "in it,"
            raise Tau2DataError(
                f"{path}: task {task['id']!r}: cannot be imported: {what} {problem.message}, "
                "which a suite cannot hold"
            ) from None


def suite_header(name: str, fingerprint: str, count: int) -> dict[str, Any]:
    base = name.removesuffix("-workflow")
    return {
        "name": f"tau2-{name}",
        "version": f"tau2-{fingerprint}",
        "description": (
            f"tau2-bench's {base} domain ({count} tasks, data fingerprint {fingerprint}), imported by "
            "`assay import tau2`; "
            "tools, policy and evaluation are assay's port of tau2 (docs/tau2.md). tau2-bench: "
            "Sierra Research, MIT license (data/LICENSE)."
        ),
        "canary": f"assay-canary GUID {uuid.uuid5(uuid.NAMESPACE_URL, f'tau2/{name}/{fingerprint}')}",
        "domain": {
            "factory": "assay.domains.tau2:suite_domain",
            "options": {"domain": name},
            "data": [DATA_DIR],
        },
        "defaults": {
            "trials": 4,
            "first_speaker": "agent",
            "greeting": GREETING,
            "limits": {"max_turns": 100, "max_tool_calls": 200, "timeout_s": 600},
        },
        "task_files": [TASKS_FILE],
    }


def import_tau2(data_dir: Path | str, domain: str, out_dir: Path | str) -> ImportReport:
    """Write tau2 domain ``domain`` of the data folder ``data_dir`` (tau2's ``data/tau2``,
    a checkout, or the domain folder) as an assay suite in ``out_dir``."""
    if domain == BANKING_RAG:
        return _banking_knowledge(data_dir, out_dir)
    if domain not in IMPORTABLE:
        raise Tau2DataError(f"--domain {domain!r}: tau2 domains are {', '.join(IMPORTABLE)}")
    folder = find_domain_folder(data_dir, domain)
    loaded = load_domain(domain, folder)  # the data must be valid before anything is written
    tasks = _raw_tasks(folder)
    out = Path(out_dir)
    suite_file = out / "suite.yaml"
    if suite_file.exists():
        existing = yaml.safe_load(suite_file.read_text(encoding="utf-8")) or {}
        if existing.get("name") != f"tau2-{domain}":
            raise Tau2DataError(
                f"{suite_file}: holds another suite ({existing.get('name')!r}); choose an empty folder"
            )
    splits = read_splits(folder)
    converted = [_converted(folder / "tasks.json", t, splits.get(t.id, "regression"), domain) for t in tasks]
    _check_converted(folder / "tasks.json", converted)
    with tempfile.TemporaryDirectory(prefix="assay-tau2-import-") as tmp:
        staged = Path(tmp) / out.name
        copied = _write_suite(staged, folder, loaded, domain, converted)
        _check_suite(staged, out, folder / "tasks.json")  # what `assay validate` would refuse: nothing
        _move_into(staged, out)
    report = ImportReport(domain, suite_file, len(converted), data_files=copied)
    for t in converted:
        report.splits[t["split"]] = report.splits.get(t["split"], 0) + 1
        for g in t["graders"]:
            report.graders[g["name"]] = report.graders.get(g["name"], 0) + 1
            if g["gating"]:
                report.gating[g["name"]] = report.gating.get(g["name"], 0) + 1
    return report


def _write_suite(
    out: Path, folder: Path, loaded: Any, domain: str, converted: list[dict[str, Any]]
) -> list[str]:
    """The suite's files in ``out``: its data (copied from tau2's folder), its tasks and
    its ``suite.yaml``; returns the data files copied."""
    data = out / DATA_DIR
    data.mkdir(parents=True)
    copied = []
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.name not in _SKIP and not path.name.startswith("tasks"):
            shutil.copyfile(path, data / path.name)
            copied.append(path.name)
        elif path.is_dir() and path.name in loaded.spec.data_dirs:  # banking: documents/, prompts/
            shutil.copytree(path, data / path.name)
            copied.append(f"{path.name}/")
    license_file = _license(folder)
    if license_file is not None:
        shutil.copyfile(license_file, data / "LICENSE")
    (out / "tasks").mkdir(parents=True, exist_ok=True)
    (out / TASKS_FILE).write_text(
        json.dumps(converted, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    header = suite_header(domain, loaded.fingerprint, len(converted))
    (out / "suite.yaml").write_text(
        yaml.safe_dump(header, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    return copied


def _check_suite(staged: Path, out: Path, source: Path) -> None:
    """Load the suite written in ``staged`` as ``assay validate`` does (every task made);
    a problem (a gold action naming a tool the domain lacks, an unknown assertion) is
    tau2's data's: :class:`Tau2DataError` naming ``source`` and the problem, as it would
    read in ``out``."""
    from ...errors import SuiteError
    from ...suites import load_suite
    from ...suites.instantiate import iter_instances

    try:
        for _ in iter_instances(load_suite(staged), 0):
            pass
    except SuiteError as exc:
        problem = str(exc.problems[0]).replace(str(staged), str(out))
        more = f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""
        raise Tau2DataError(f"{source}: the suite it makes would not validate: {problem}{more}") from None


def _move_into(staged: Path, out: Path) -> None:
    """Put the staged suite's files in ``out``, replacing an earlier import's (the data
    folder, the tasks file and ``suite.yaml``; other files of ``out`` are left alone)."""
    (out / "tasks").mkdir(parents=True, exist_ok=True)
    if (out / DATA_DIR).exists():
        shutil.rmtree(out / DATA_DIR)
    shutil.move(staged / DATA_DIR, out / DATA_DIR)  # across file systems too
    shutil.move(staged / TASKS_FILE, out / TASKS_FILE)
    shutil.move(staged / "suite.yaml", out / "suite.yaml")


def _banking_knowledge(data_dir: Path | str, out_dir: Path | str) -> Any:
    """Dispatch to the banking_knowledge importer when this assay has it."""
    try:
        module = importlib.import_module("assay.domains.tau2.banking_knowledge")
    except ModuleNotFoundError as exc:
        if exc.name != "assay.domains.tau2.banking_knowledge":
            raise
        raise Tau2DataError(
            "tau2 domain banking_knowledge cannot be imported by this assay yet "
            "(assay.domains.tau2.banking_knowledge is not installed)"
        ) from None
    return module.import_banking_knowledge(Path(data_dir), Path(out_dir))


__all__ = [
    "BANKING_RAG",
    "GREETING",
    "IMPORTABLE",
    "SPLITS",
    "ImportReport",
    "convert_task",
    "graders_of",
    "import_tau2",
    "read_splits",
]
