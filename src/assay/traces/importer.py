"""``assay import traces``: recorded conversations become candidate tasks of a replay
suite (docs/traces.md).

Each conversation becomes a task with a :class:`~assay.core.task.Replay`: the scripted
user says the recorded user lines, the replay environment serves the recorded tool
outputs. A conversation recorded by assay itself (its traces carry the suite, the run
seed and the task id) is matched to the task it came from when that suite can be loaded
(a built-in one, or ``suite=`` given): the task keeps its world (initial state, time),
graders and reference, and the suite's live domain follows the conversation, so a
replay is graded as the recorded trial was. Other conversations are graded by the
``replay`` grader alone (the recorded calls made, in order). Content is redacted before
it is written, unless asked otherwise.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from ..agents.specs import agent_factory
from ..core.sources import ProblemError, check_text
from ..core.task import GraderSpec, RecordedCall, Replay, Task, UserScenario
from ..errors import AssayError, SpecError
from ..redact import Redactor
from .conversations import conversations_of_spans
from .readers import Conversation, TraceFileError, error_line, read_records

TASKS_FILE = "tasks.jsonl"


@dataclass
class ImportOptions:
    match: Literal["exact", "name"] = "exact"
    ignore_arguments: list[str] = field(default_factory=list)
    unrecorded: Literal["error", "live"] = "error"
    suite: str | None = None
    """The suite the conversations were recorded on (default: the one their traces name)."""
    name: str | None = None
    redact: bool | Redactor = True


@dataclass
class ImportReport:
    suite_file: Path
    tasks: int
    matched: int
    """Tasks matched to the suite task they were recorded from."""
    redacted_values: int
    redacted_kinds: dict[str, int]
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "suite": str(self.suite_file),
            "tasks": self.tasks,
            "matched_to_suite_tasks": self.matched,
            "redacted_values": self.redacted_values,
            "redacted_kinds": self.redacted_kinds,
            "notes": self.notes,
        }


def read_conversations(paths: list[Path], notes: list[str] | None = None) -> list[Conversation]:
    """The conversations of the files, in file order (traces first, then JSONL lines);
    annotations join their trace whichever file they are in (those naming a span or
    trace of none of the files are counted in ``notes``)."""
    return [conv for _, conv in conversations_by_file(paths, notes)]


def conversations_by_file(
    paths: list[Path], notes: list[str] | None = None
) -> list[tuple[Path, Conversation]]:
    """:func:`read_conversations`, each with the file it came from."""
    files = [read_records(path) for path in paths]
    owner = {s.span_id: s.trace_id for f in files for s in f.spans}
    annotations = [a for f in files for a in f.annotations]
    traces = set(owner.values())
    lost = [a for a in annotations if (a.trace_id or owner.get(a.span_id or "")) not in traces]
    if lost and notes is not None:
        notes.append(f"{len(lost)} annotation(s) name a span or trace that is in none of the files: left out")
    out: list[tuple[Path, Conversation]] = []
    for path, f in zip(paths, files, strict=True):
        try:
            traced = conversations_of_spans(f.spans, annotations, owner)
        except RecursionError:
            raise TraceFileError(f"{path}: values nest too deeply to read") from None
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise TraceFileError(f"{path}: a trace cannot be read: {error_line(exc)}") from None
        for conv in traced:
            conv.origin = conv.origin or f"{path}: trace {conv.source.get('trace_id') or conv.id!r}"
            out.append((path, conv))
        out.extend((path, conv) for conv in f.conversations)
    return out


def redact_conversation(conv: Conversation, redactor: Redactor, kinds: Counter[str]) -> Conversation:
    """The conversation with secrets and personal data replaced, one set of pseudonyms
    for the whole conversation (the same email in a user line and a tool argument gets
    the same pseudonym, so recorded calls still match)."""
    session = redactor.session()
    data = {
        "user_turns": conv.user_turns,
        "calls": [c.model_dump(mode="json") for c in conv.calls],
    }
    out = session.redact(data)
    kinds.update(session.counts)
    return Conversation(
        conv.id,
        list(out["user_turns"]),
        [RecordedCall.model_validate(c) for c in out["calls"]],
        conv.tools,
        conv.source,
        origin=conv.origin,
    )  # messages and verdicts are not part of a replay task: left out, not copied unredacted


_ID = re.compile(r"[^A-Za-z0-9_.-]+")


def _safe(text: str) -> str:
    """``text`` as a task id (:data:`assay.suites.checks.SAFE_ID`): runs of other
    characters become ``-``; it starts with a letter, digit or ``_``."""
    return _ID.sub("-", text).lstrip(".-").rstrip("-")


def _task_id(conv: Conversation, taken: set[str]) -> str:
    src = conv.source
    base = str(src.get("task_id") or conv.id or src.get("trace_id") or "conversation")
    base = _safe(base)[:120] or "conversation"
    if src.get("task_id") is None and src.get("trace_id") and base == src["trace_id"]:
        base = f"trace-{base[:16]}"
    suffix = _safe(str(src.get("trial", "")))[:20] or str(len(taken))
    candidate = base if base not in taken else f"{base}-{suffix}"
    n = 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    taken.add(candidate)
    return candidate


def conversation_task_ids(conversations: list[Conversation]) -> list[str]:
    """The task id each conversation gets in the suite ``import_traces`` writes (unique,
    in order), so a badcase of a conversation names the task that replays it."""
    taken: set[str] = set()
    return [_task_id(conv, taken) for conv in conversations]


def _suite_tasks(
    conversations: list[Conversation], options: ImportOptions, notes: list[str]
) -> tuple[Any, dict[tuple[str, str], Task]]:
    """The suite the conversations were recorded on, and its tasks by (run seed, id)."""
    from ..suites.instantiate import instantiate
    from ..suites.loader import load_suite

    names = {str(c.source["suite"]) for c in conversations if c.source.get("suite")}
    source = options.suite or (next(iter(names)) if len(names) == 1 else None)
    if source is None:
        if len(names) > 1:
            notes.append(f"the traces come from several suites ({', '.join(sorted(names))}): give --suite")
        return None, {}
    try:
        suite = load_suite(source)
    except AssayError as exc:
        notes.append(f"suite {source!r} could not be loaded ({exc}): conversations graded by replay alone")
        return None, {}
    hashes = {str(c.source["suite_hash"]) for c in conversations if c.source.get("suite_hash")}
    if hashes and suite.hash not in hashes:
        notes.append(
            f"suite {suite.name} has changed since the recording "
            f"(hash {suite.hash} not {', '.join(sorted(hashes))})"
        )
    tasks: dict[tuple[str, str], Task] = {}
    for seed in sorted({str(c.source.get("run_seed", "0")) for c in conversations}):
        try:
            number = int(seed)
        except ValueError:
            notes.append(
                f"run seed {seed[:40]!r} is not a whole number: its conversations graded by replay alone"
            )
            continue
        for task in instantiate(suite, number):
            tasks[(seed, task.id)] = task
    return suite, tasks


def _replay(conv: Conversation, options: ImportOptions) -> Replay:
    source = {k: v for k, v in conv.source.items() if k not in ("suite_hash",)}
    return Replay(
        user_turns=conv.user_turns,
        calls=conv.calls,
        tools=conv.tools,
        match=options.match,
        ignore_arguments=list(options.ignore_arguments),
        unrecorded=options.unrecorded,
        source=source,
    )


def _description(conv: Conversation) -> str:
    return f"recorded conversation {conv.source.get('trace_id') or conv.id}"


def conversation_task(conv: Conversation, task_id: str, base: Task | None, options: ImportOptions) -> Task:
    """The replay task of a conversation (over ``base``, the task it was recorded from)."""
    replay = _replay(conv, options)
    description = _description(conv)
    if base is not None:
        graders = [*base.graders, GraderSpec(kind="replay", gating=False)]
        return base.model_copy(
            update={"id": task_id, "replay": replay, "graders": graders, "description": description}
        )
    opening = conv.user_turns[0] if conv.user_turns else UserScenario().opening
    return Task(
        id=task_id,
        description=description,
        user=UserScenario(opening=opening),
        graders=[GraderSpec(kind="replay")],
        replay=replay,
        tags=["replay"],
    )


def import_traces(paths: list[Path], out_dir: Path, options: ImportOptions | None = None) -> ImportReport:
    """Write the replay suite of the conversations in ``paths`` to ``out_dir``
    (``suite.yaml`` and ``tasks.jsonl``)."""
    options = options or ImportOptions()
    conversations = read_conversations(paths)
    if not conversations:
        raise AssayError(
            f"no conversation found in {', '.join(map(str, paths))} (no user message, no tool call)"
        )
    for conv in conversations:
        check_conversation(conv)
    notes: list[str] = []
    kinds: Counter[str] = Counter()
    if options.redact is not False:
        redactor = options.redact if isinstance(options.redact, Redactor) else Redactor()
        conversations = [redact_conversation(c, redactor, kinds) for c in conversations]
    suite, originals = _suite_tasks(conversations, options, notes)
    tasks: list[Task] = []
    matched = 0
    for conv, task_id in zip(conversations, conversation_task_ids(conversations), strict=True):
        key = (str(conv.source.get("run_seed", "0")), str(conv.source.get("task_id")))
        base = originals.get(key)
        if (
            base is not None
            and conv.source.get("task_hash")
            and base.input_hash() != conv.source["task_hash"]
        ):
            notes.append(f"task {key[1]} has changed since the recording: graded by replay alone")
            base = None
        matched += base is not None
        tasks.append(conversation_task(conv, task_id, base, options))
    lines = [_task_line(conv, task) for conv, task in zip(conversations, tasks, strict=True)]
    suite_file = out_dir / "suite.yaml"
    header = yaml.safe_dump(_suite_yaml(options, suite, paths, conversations, notes), sort_keys=False)
    partial = out_dir / f".{TASKS_FILE}.partial"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        partial.write_text("".join(lines), encoding="utf-8")
        os.replace(partial, out_dir / TASKS_FILE)
        suite_file.write_text(header, encoding="utf-8")
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise AssayError(f"cannot write the replay suite to {out_dir}: {exc.strerror or exc}") from None
    return ImportReport(
        suite_file, len(tasks), matched, sum(kinds.values()), dict(sorted(kinds.items())), notes
    )


def check_conversation(conv: Conversation) -> None:
    """Refuse (:class:`TraceFileError`, naming the conversation) what the task of ``conv``
    could not hold, as the suite loader checks it: text with a NUL or a lone surrogate,
    values nested too deeply. Checked before anything else handles the conversation."""
    calls = [{"name": c.name, "arguments": c.arguments, "output": c.output} for c in conv.calls]
    replay = {"user_turns": conv.user_turns, "calls": calls, "tools": conv.tools, "source": conv.source}
    _check_task_data(conv, {"description": _description(conv), "replay": replay})


def _check_task_data(conv: Conversation, data: dict[str, Any]) -> None:
    try:
        check_text(data, "", None)
    except ProblemError as exc:
        problem = exc.problems[0]
        where = ": ".join(x for x in (conv.origin, f"conversation {conv.id!r}" if conv.id else "") if x)
        what = f"its task's {problem.field} would hold" if problem.field else "in its task,"
        raise TraceFileError(
            f"{where}: cannot be imported: {what} {problem.message}, which a suite cannot hold"
        ) from None


def _task_line(conv: Conversation, task: Task) -> str:
    """The line of ``tasks.jsonl`` of a conversation's task (checked as the suite loader
    will check it)."""
    data = _task_json(task)
    _check_task_data(conv, data)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"


def _task_json(task: Task) -> dict[str, Any]:
    data = task.model_dump(mode="json", exclude_defaults=True)
    data["initial_state"] = task.initial_state.model_dump(mode="json")  # its seed even when 0
    return data


def _runnable_agent(spec: str, notes: list[str]) -> str | None:
    """The agent the traces name, if assay can run it without importing code: a spec such
    as ``builtin:retail-careful`` or ``openai:gpt-4o`` (as assay's own exports record it).
    Another application's name for its agent (``support-bot``), or a ``python:`` spec (code
    a trace file should not make assay import), is left out with a note."""
    if spec.partition(":")[0] != "python":
        try:
            agent_factory(spec)
            return spec
        except SpecError:
            pass
    notes.append(
        f"the traces name their agent {spec!r}, not an agent assay runs without importing code: "
        "give --agent when you replay"
    )
    return None


def _suite_yaml(
    options: ImportOptions,
    suite: Any,
    paths: list[Path],
    conversations: list[Conversation],
    notes: list[str],
) -> dict[str, Any]:
    agents = Counter(str(c.source["agent"]) for c in conversations if c.source.get("agent"))
    defaults: dict[str, Any] = {"trials": 1, "user": "scripted"}
    named = _runnable_agent(agents.most_common(1)[0][0], notes) if agents else None
    if named is not None:
        defaults["agent"] = named
    elif suite is not None and suite.defaults.agent:
        defaults["agent"] = suite.defaults.agent
    if suite is not None:
        defaults["limits"] = suite.defaults.limits.model_dump(mode="json", exclude_defaults=True)
        defaults["data_seed"] = suite.defaults.data_seed
        defaults["timezone"] = suite.defaults.timezone
    name = options.name or (
        f"{suite.name}-replay" if suite is not None else f"replay-{paths[0].stem.split('.')[0]}"
    )
    data: dict[str, Any] = {
        "name": name,
        "version": "1",
        "domain": suite.domain if suite is not None else None,
        "description": (
            f"Recorded conversations imported from {', '.join(p.name for p in paths)} (assay import traces)."
        ),
        "defaults": defaults,
        "task_files": [TASKS_FILE],
    }
    if data["domain"] is None:
        del data["domain"]
    return data
