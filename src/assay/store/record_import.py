"""Reading a run record into a store (``assay import run FILE``): every line checked
before the run is kept, each problem named by ``file:line: field``.

A trial or attempt line is checked as the store keeps it: the fields of a
:class:`~assay.core.results.TrialResult` (its grades and transcript aside) with strict
types, in the ranges the store's columns hold (indexes and counts 32-bit, the seed
64-bit, numbers finite), a task of the header, one line per trial and attempt, JSON not
nested too deeply, text that is Unicode. The record's format and its export are in
:mod:`assay.store.record`.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Iterator
from dataclasses import MISSING, fields
from pathlib import Path
from types import NoneType, UnionType
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    create_model,
)
from sqlalchemy.exc import DataError

from ..core.results import RunInfo, TrialResult
from ..core.spec import run_id_problem
from ..errors import RecordError, ResumeError
from .codec import encode_record, encode_transcript, pack_line
from .record import RECORD_SCHEMA, EndLine, HeaderLine, TrialLine, _open
from .store import Store

_BATCH = 500
_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1

_Count = Annotated[StrictInt, Field(ge=0, le=_INT32_MAX)]
"""An index or count: an ``Integer`` column (32 bits on PostgreSQL)."""
_Int64 = Annotated[StrictInt, Field(ge=-_INT64_MAX - 1, le=_INT64_MAX)]
"""A seed: a ``BigInteger`` column (signed 64 bits)."""
_Finite = Annotated[StrictFloat, Field(allow_inf_nan=False)]


class _Usage(BaseModel):
    """One role's model usage in a trial (``TrialResult.usage[role]``)."""

    model_config = ConfigDict(extra="allow")

    calls: _Count | None = None
    input_tokens: _Count | None = None
    output_tokens: _Count | None = None
    cache_read_tokens: _Count | None = None
    cost_usd: _Finite | None = None
    retries: _Count | None = None
    cached_calls: _Count | None = None
    missing_usage: _Count | None = None


#: The strict type an import checks a value of each plain type of ``TrialResult`` with.
_STRICT: dict[Any, Any] = {
    str: StrictStr,
    int: _Count,
    float: _Finite,
    dict[str, float]: dict[StrictStr, _Finite],
}
#: Fields whose range is not their plain type's.
_FIELD: dict[str, Any] = {
    "seed": _Int64,
    "reward": Annotated[StrictInt, Field(ge=0, le=1)] | None,
    "usage": dict[StrictStr, _Usage],
}
#: TrialResult fields a record line carries beside ``trial``, not in it.
_BESIDE = ("grades", "transcript")


def _strict(hint: Any) -> Any:
    """The strict form of a field's type: ``X | None`` as ``strict(X) | None``; a type
    with no strict form (an enum, a model) as it is."""
    if get_origin(hint) in (Union, UnionType):
        args = get_args(hint)
        if NoneType in args and len(args) == 2:
            return _strict(next(a for a in args if a is not NoneType)) | None
    return _STRICT.get(hint, hint)


def _trial_record_model() -> type[BaseModel]:
    """The model of the ``trial`` of a trial or attempt line, made from the fields of
    :class:`~assay.core.results.TrialResult` (so a field added there is checked here):
    each with its strict type and its default."""
    hints = get_type_hints(TrialResult)
    spec: dict[str, Any] = {}
    for f in fields(TrialResult):
        if f.name in _BESIDE:
            continue
        kind = _FIELD.get(f.name, _strict(hints[f.name]))
        if f.default is not MISSING:
            spec[f.name] = (kind, f.default)
        elif f.default_factory is not MISSING:
            spec[f.name] = (kind, Field(default_factory=f.default_factory))
        else:
            spec[f.name] = (kind, ...)
    return create_model("TrialRecord", __config__=ConfigDict(extra="forbid"), **spec)


if TYPE_CHECKING:  # the same fields, as the type checker sees them
    _TrialRecord = TrialResult
else:
    _TrialRecord = _trial_record_model()


class _ImportedTrial(TrialLine):
    trial: _TrialRecord  # type: ignore[assignment]


class _ImportedAttempt(_ImportedTrial):
    kind: Literal["attempt"]  # type: ignore[assignment]
    attempt: Annotated[StrictInt, Field(ge=1, le=_INT32_MAX)]


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        with _open(path, "rt") as fh:
            for number, text in enumerate(fh, 1):
                if not text.strip():
                    continue
                try:
                    data = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise RecordError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
                except RecursionError:
                    raise RecordError(f"{path}:{number}: not valid JSON (nested too deeply)") from None
                except ValueError as exc:  # an integer of more than 4,300 digits
                    raise RecordError(f"{path}:{number}: not valid JSON ({exc})") from None
                if not isinstance(data, dict) or "kind" not in data:
                    raise RecordError(f"{path}:{number}: kind: each line must be an object with a 'kind'")
                if _SURROGATE.search(text):
                    _no_lone_surrogate(path, number, data)
                yield number, data
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:  # zlib: damaged gzip data
        raise RecordError(
            f"cannot read the run record {path}: {getattr(exc, 'strerror', None) or exc}"
        ) from None


#: A surrogate written as a JSON escape: the line may hold one unpaired (not Unicode text).
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _no_lone_surrogate(path: Path, number: int, data: Any) -> None:
    """RecordError naming a string of ``data`` (a key or a value) that holds an unpaired
    surrogate: neither the store nor a JSON writer can encode it."""
    todo: list[tuple[str, Any]] = [("", data)]
    while todo:
        where, value = todo.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                todo.append((f"{where}.{key}" if where else str(key), key))
                todo.append((f"{where}.{key}" if where else str(key), item))
        elif isinstance(value, list):
            todo.extend((f"{where}.{i}", item) for i, item in enumerate(value))
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise RecordError(
                    f"{path}:{number}: {where or 'line'}: not valid Unicode text (an unpaired surrogate)"
                ) from None


#: Pydantic's errors for a value that should be an object (their messages name a class).
_NOT_AN_OBJECT = frozenset({"model_type", "dataclass_type", "model_attributes_type"})


def _problem(path: Path, number: int, exc: Exception) -> RecordError:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "line"
        message = "Input should be an object" if first["type"] in _NOT_AN_OBJECT else first["msg"]
        return RecordError(f"{path}:{number}: {field}: {message}")
    return RecordError(f"{path}:{number}: {type(exc).__name__}: {exc}")


def import_run(store: Store, path: str | Path, run_id: str | None = None) -> RunInfo:
    """Read a run record into ``store`` (as ``run_id``, default: the recorded id). The
    file is checked whole (header, every line, end counts) before the run is kept: a
    bad file stores nothing."""
    problem = None if run_id is None else run_id_problem(run_id)
    if problem is not None:
        raise RecordError(f"--run-id: {problem}")
    source = Path(path)
    lines = _lines(source)
    number, header = _header(source, next(lines, None), check_run_id=run_id is None)
    info = header.run.model_copy(update={"run_id": run_id or header.run.run_id})
    if store.has_run(info.run_id):
        raise ResumeError(f"run {info.run_id} already exists in {store.url}; import it with --run-id NEW_ID")
    try:
        store.create_run(info.model_copy(update={"status": "running"}), header.tasks)
    except DataError as exc:  # e.g. text that PostgreSQL does not hold (a NUL character)
        raise RecordError(f"{source}:{number}: the store refused the header ({_first_line(exc)})") from None
    try:
        _import_body(store, info.run_id, source, lines, {t.task_id for t in header.tasks})
    except BaseException:
        store.delete_run(info.run_id)
        raise
    store.set_status(info.run_id, info.status)
    if info.status == "finished":  # keep the recorded finish time
        store.update_info(info)
    return store.get_run(info.run_id)


def _header(
    path: Path, first: tuple[int, dict[str, Any]] | None, check_run_id: bool
) -> tuple[int, HeaderLine]:
    """The header (and its line number), checked."""
    if first is None:
        raise RecordError(f"{path}: the file is empty, not a run record")
    number, data = first
    if data.get("kind") != "header":
        raise RecordError(f"{path}:{number}: kind: the first line of a run record is its header")
    if data.get("schema") != RECORD_SCHEMA:
        raise RecordError(
            f"{path}:{number}: schema: {data.get('schema')!r} is not a run record this assay reads "
            f"({RECORD_SCHEMA})"
        )
    try:
        header = HeaderLine.model_validate(data)
    except (ValidationError, TypeError) as exc:
        raise _problem(path, number, exc) from None
    problem = _header_problem(header, check_run_id)
    if problem is not None:
        raise RecordError(f"{path}:{number}: {problem}")
    return number, header


def _header_problem(header: HeaderLine, check_run_id: bool) -> str | None:
    """What in a well-formed header the store cannot keep (field: why), or None."""
    run = header.run
    problem = run_id_problem(run.run_id) if check_run_id else None
    if problem is not None:
        return f"run.run_id: {problem}; import it with --run-id NEW_ID"
    if not -_INT64_MAX - 1 <= run.seed <= _INT64_MAX:
        return f"run.seed: {run.seed} is not a 64-bit integer"
    if not 0 <= run.trials_per_task <= _INT32_MAX:
        return f"run.trials_per_task: {run.trials_per_task} is not a number of trials"
    seen: set[str] = set()
    for i, task in enumerate(header.tasks):
        if task.task_id in seen:
            return f"tasks.{i}.task_id: task {task.task_id!r} is listed twice"
        seen.add(task.task_id)
        if not -_INT32_MAX - 1 <= task.difficulty <= _INT32_MAX:
            return f"tasks.{i}.difficulty: {task.difficulty} is not a 32-bit integer"
    return None


#: The model an import checks each kind of line after the header with.
_BODY: dict[str, type[BaseModel]] = {"trial": _ImportedTrial, "attempt": _ImportedAttempt, "end": EndLine}


def _import_body(
    store: Store, run_id: str, path: Path, lines: Iterator[tuple[int, dict[str, Any]]], task_ids: set[str]
) -> None:
    batch: list[tuple[int, TrialResult]] = []
    attempts: list[tuple[str, int, int, bytes]] = []
    trials: dict[tuple[str, int], int] = {}  # (task id, trial index) -> line
    attempt_lines: dict[tuple[str, int, int], int] = {}  # (task id, trial index, attempt) -> line
    end: EndLine | None = None
    for number, data in lines:
        if end is not None:
            raise RecordError(f"{path}:{number}: kind: nothing may follow the end line")
        model = _BODY.get(data["kind"]) if isinstance(data["kind"], str) else None
        if model is None:
            raise RecordError(
                f"{path}:{number}: kind: {str(data['kind'])[:40]!r} is not a line kind after the header "
                "(trial, attempt or end)"
            )
        try:
            line = model.model_validate(data)
        except ValidationError as exc:
            raise _problem(path, number, exc) from None
        if isinstance(line, EndLine):
            end = line
            continue
        assert isinstance(line, _ImportedTrial)  # the other models of _BODY
        _check_trial(path, number, line, task_ids)
        result = _result_of(data, line, run_id)
        if isinstance(line, _ImportedAttempt):
            key3 = (*result.key, line.attempt)
            if key3 in attempt_lines:
                raise RecordError(
                    f"{path}:{number}: attempt: attempt {line.attempt} of task {result.task_id!r} trial "
                    f"{result.trial_index} is already on line {attempt_lines[key3]}"
                )
            attempt_lines[key3] = number
            attempts.append((*result.key, line.attempt, _packed(path, number, result)))
            continue
        if result.key in trials:
            raise RecordError(
                f"{path}:{number}: trial.trial_index: trial {result.trial_index} of task {result.task_id!r} "
                f"is already on line {trials[result.key]}"
            )
        trials[result.key] = number
        batch.append((number, result))
        if len(batch) >= _BATCH:
            _write(store, path, batch)
            batch = []
    _write(store, path, batch)
    store.add_attempts(run_id, attempts)
    if end is None or end.trials != len(trials) or end.attempts != len(attempts):
        raise RecordError(
            f"{path}: the record is truncated or altered: its end line "
            f"{'is missing' if end is None else f'counts {end.trials} trials and {end.attempts} attempts'}, "
            f"the file holds {len(trials)} trials and {len(attempts)} attempts"
        )


def _check_trial(path: Path, number: int, line: _ImportedTrial, task_ids: set[str]) -> None:
    """What the line's model does not say: its task is one of the header's, its grades'
    scores and confidences are finite, and the model calls of its transcript (its ``llm``
    spans) have numbers for their timings."""
    if line.trial.task_id not in task_ids:
        raise RecordError(
            f"{path}:{number}: trial.task_id: task {line.trial.task_id[:200]!r} is not one of the "
            "header's tasks"
        )
    numbers = [
        (f"grades.{i}.{name}", getattr(grade, name))
        for i, grade in enumerate(line.grades)
        for name in ("score", "confidence")
    ]
    for i, span in enumerate(line.transcript.spans if line.transcript is not None else ()):
        if span.kind == "llm":
            timings = ("latency_s", "ttft_s")
            numbers += [(f"transcript.spans.{i}.attributes.{n}", span.attributes.get(n)) for n in timings]
    for field, value in numbers:
        if value is not None and not (
            isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        ):
            raise RecordError(f"{path}:{number}: {field}: {str(value)[:40]!r} is not a finite number")


def _result_of(data: dict[str, Any], line: _ImportedTrial, run_id: str) -> TrialResult:
    """The trial of a checked line, as :func:`~assay.store.codec.trial_from_line` reads
    it (from the line's own values; its grades and transcript as checked)."""
    record = {name: value for name, value in data["trial"].items() if name != "outcome"}
    result = TrialResult(**record, grades=line.grades)
    result.outcome, result.transcript, result.run_id = line.trial.outcome, line.transcript, run_id
    return result


def _packed(path: Path, number: int, result: TrialResult) -> bytes:
    """An attempt as the store keeps it (a packed trial line)."""
    try:
        return pack_line(result, result.transcript)
    except (ValueError, RecursionError) as exc:
        found = _unstorable(path, number, result)
        why = _first_line(exc)
        raise found or RecordError(f"{path}:{number}: attempt: cannot be stored ({why})") from None


def _write(store: Store, path: Path, batch: list[tuple[int, TrialResult]]) -> None:
    """Store a batch of trials; a trial the store cannot keep is named by its line."""
    if not batch:
        return
    results = [result for _, result in batch]
    try:
        written = store.write_trials(results)
    except (ValueError, RecursionError, DataError) as exc:
        found = next((e for n, r in batch if (e := _unstorable(path, n, r)) is not None), None)
        raise found or RecordError(
            f"{path}:{batch[0][0]}: the store refused the trials of lines {batch[0][0]} to {batch[-1][0]} "
            f"({_first_line(exc)})"
        ) from None
    if written != len(results):  # the store skips a trial it cannot keep (a constraint failed)
        kept = store.completed_keys(results[0].run_id)
        number = next(n for n, r in batch if r.key not in kept)
        raise RecordError(f"{path}:{number}: trial: the store could not keep this trial")


def _unstorable(path: Path, number: int, result: TrialResult) -> RecordError | None:
    """The error naming the part of a trial that the store cannot encode (nested too
    deeply, text that is not Unicode...), or None."""
    field = "trial"
    try:
        encode_record(result)
        field = "transcript"
        if result.transcript is not None:
            encode_transcript(result.transcript)
    except (ValueError, RecursionError) as exc:
        return RecordError(f"{path}:{number}: {field}: cannot be stored ({_first_line(exc)})")
    return None


def _first_line(exc: BaseException) -> str:
    """The first line of an error's message (a database error's own, without the SQL)."""
    cause = getattr(exc, "orig", None) or exc
    return (str(cause).splitlines() or [type(cause).__name__])[0][:200]
