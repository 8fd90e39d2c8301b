"""``assay import run FILE`` on corrupt records: one line naming the file, the line and
the field, exit code 2, no traceback, and no run left in the store. Each case starts from
a real exported run (two trials and a failed attempt) with one thing broken."""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import CliResult, assay_main

import assay
from assay.core.results import TrialResult
from assay.errors import RecordError
from assay.store import Store
from assay.store.record import export_run
from assay.store.record_import import import_run

Lines = list[dict[str, Any]]
TRIAL, ATTEMPT = 1, 3  # indexes in the record: header, two trials, an attempt, the end line
DEEP = 100_000


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Lines:
    """The lines of a retail run exported by ``export_run`` (what ``assay export`` calls):
    two trials and one earlier attempt of a retried trial."""
    folder = tmp_path_factory.mktemp("record")
    tasks = ["cancel-pending-1", "order-status-1"]
    run = assay.run("retail", trials=1, task_ids=tasks, store=str(folder / "s.db"), run_id="base")
    store = run.store
    first = store.load_results("base")[0]
    store.write_trials([replace(first, trial_index=1, reward=None, termination="harness_error")])
    assert store.retry_errors("base") == 1
    path = folder / "base.jsonl"
    assert export_run(store, "base", path) == {"trials": 2, "attempts": 1}
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["kind"] for line in lines] == ["header", "trial", "trial", "attempt", "end"]
    return lines


def _import(tmp_path: Path, lines: list[Any], *args: str) -> tuple[CliResult, Path, Path]:
    """Write the lines (objects, or text as it is) and import them into a new store."""
    path, store = tmp_path / "bad.jsonl", tmp_path / "s.db"
    text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    path.write_text("\n".join(text) + "\n")
    return assay_main("import", "run", str(path), "--store", str(store), *args), path, store


def _refused(result: CliResult, store: Path, where: str) -> None:
    """Exit 2, one line on stderr that holds ``where`` (file:line: field:), nothing stored."""
    assert result.code == 2, result
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert where in result.stderr, (where, result.stderr)
    assert Store(store).list_runs() == []


def _set(index: int, dotted: str, value: Any) -> Callable[[Lines], None]:
    """A change to the record: line ``index``'s field at ``dotted`` (``trial.reward``) set."""

    def change(lines: Lines) -> None:
        *parents, name = dotted.split(".")
        target: Any = lines[index]
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        target[name] = value

    return change


def _case(tmp_path: Path, record: Lines, change: Callable[[Lines], None], line: int, field: str) -> None:
    lines = copy.deepcopy(record)
    change(lines)
    result, path, store = _import(tmp_path, lines)
    _refused(result, store, f"{path}:{line}: {field}: ")


# 1. the attempt number of an attempt line
@pytest.mark.parametrize("value", ["abc", [1], float("inf"), 2**70, 0, -1, 1.0, True])
def test_an_attempt_number_that_is_not_one(value: Any, record: Lines, tmp_path: Path) -> None:
    _case(tmp_path, record, _set(ATTEMPT, "attempt", value), ATTEMPT + 1, "attempt")


# 2. integers the store's columns cannot hold (seeds: 64 bits; indexes: 32 bits on PostgreSQL)
@pytest.mark.parametrize(
    ("index", "field", "value"),
    [
        (TRIAL, "trial.trial_index", 2**63),
        (TRIAL, "trial.trial_index", 2**31),
        (TRIAL, "trial.trial_index", -1),
        (TRIAL, "trial.seed", 2**63),
        (TRIAL, "trial.seed", -(2**63) - 1),
        (ATTEMPT, "trial.seed", 2**64),
        (TRIAL, "trial.input_tokens", 2**63),
        (0, "run.seed", 2**63),
        (0, "run.seed", -(2**63) - 1),
        (0, "run.trials_per_task", 2**63),
    ],
)
def test_an_integer_too_large_for_the_store(
    index: int, field: str, value: Any, record: Lines, tmp_path: Path
) -> None:
    _case(tmp_path, record, _set(index, field, value), index + 1, field)


# 3. process metrics
@pytest.mark.parametrize(
    ("metrics", "field"),
    [
        ("x", "trial.metrics"),
        ([1.0], "trial.metrics"),
        ({"turns": "x"}, "trial.metrics.turns"),
        ({"turns": None}, "trial.metrics.turns"),
        ({"turns": float("nan")}, "trial.metrics.turns"),
        ({"turns": float("inf")}, "trial.metrics.turns"),
    ],
)
def test_metrics_that_are_not_finite_numbers_by_name(
    metrics: Any, field: str, record: Lines, tmp_path: Path
) -> None:
    _case(tmp_path, record, _set(TRIAL, "trial.metrics", metrics), TRIAL + 1, field)


# 4. nesting: deeper than the JSON reader goes, or than the store's serializer writes
def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("where", ["line", "outcome", "transcript", "attempt"])
def test_a_line_nested_too_deeply(where: str, record: Lines, tmp_path: Path) -> None:
    lines: list[Any] = copy.deepcopy(record)
    if where == "line":  # 100,000 levels: text, json.dumps could not write it
        lines[TRIAL] = '{"kind": "trial", "trial": ' + "[" * DEEP + "]" * DEEP + "}"
        expected = f":{TRIAL + 1}: not valid JSON (nested too deeply)"
    elif where == "outcome":  # readable, but deeper than the store writes its JSON
        lines[TRIAL]["trial"]["outcome"]["diff"] = [{"old": _nested(300)}]
        expected = f":{TRIAL + 1}: trial: cannot be stored"
    else:
        index = TRIAL if where == "transcript" else ATTEMPT
        lines[index]["transcript"] = {"spans": [{"id": 0, "kind": "trial", "name": "t", "start": 0.0}]}
        lines[index]["transcript"]["spans"][0]["attributes"] = {"x": _nested(300)}
        expected = f":{index + 1}: transcript: cannot be stored"
    result, path, store = _import(tmp_path, lines)
    _refused(result, store, f"{path}{expected}")


# 5. values of the wrong type or out of their range, and trials the record cannot hold
def _duplicate_trial(lines: Lines) -> None:
    lines.insert(TRIAL + 1, copy.deepcopy(lines[TRIAL]))
    lines[-1]["trials"] += 1  # the end line agrees: the store would keep one of the two


def _duplicate_attempt(lines: Lines) -> None:
    lines.insert(ATTEMPT + 1, copy.deepcopy(lines[ATTEMPT]))
    lines[-1]["attempts"] += 1


@pytest.mark.parametrize(
    ("change", "line", "field"),
    [
        (_set(TRIAL, "trial.reward", "lots"), TRIAL + 1, "trial.reward"),
        (_set(TRIAL, "trial.reward", float("nan")), TRIAL + 1, "trial.reward"),
        (_set(TRIAL, "trial.reward", 5), TRIAL + 1, "trial.reward"),
        (_set(TRIAL, "trial.task_id", 123), TRIAL + 1, "trial.task_id"),
        (_set(TRIAL, "trial.task_id", "no-such-task"), TRIAL + 1, "trial.task_id"),
        (_set(ATTEMPT, "trial.task_id", "no-such-task"), ATTEMPT + 1, "trial.task_id"),
        (_set(TRIAL, "trial.started_at", 12), TRIAL + 1, "trial.started_at"),
        (_set(TRIAL, "trial.ended_at", None), TRIAL + 1, "trial.ended_at"),
        (_set(TRIAL, "trial.termination", "gave_up"), TRIAL + 1, "trial.termination"),
        (_set(TRIAL, "trial.latency_s", float("inf")), TRIAL + 1, "trial.latency_s"),
        (_set(TRIAL, "trial.usage", {"agent": {"calls": "x"}}), TRIAL + 1, "trial.usage.agent.calls"),
        (_set(TRIAL, "trial.usage", {"agent": {"calls": 2**63}}), TRIAL + 1, "trial.usage.agent.calls"),
        (_set(TRIAL, "grades.0.score", float("nan")), TRIAL + 1, "grades.0.score"),
        (_set(TRIAL, "trial.task_id", "a\ud800"), TRIAL + 1, "trial.task_id"),
        (_set(TRIAL, "transcript.messages.0.content", "\udc00"), TRIAL + 1, "transcript.messages.0.content"),
        (_duplicate_trial, TRIAL + 2, "trial.trial_index"),
        (_duplicate_attempt, ATTEMPT + 2, "attempt"),
    ],
    ids=[
        "reward-str",
        "reward-nan",
        "reward-5",
        "task-int",
        "task-unknown",
        "attempt-task-unknown",
        "started-int",
        "ended-null",
        "termination",
        "latency-inf",
        "usage-str",
        "usage-2**63",
        "grade-score-nan",
        "task-lone-surrogate",
        "content-lone-surrogate",
        "duplicate-trial",
        "duplicate-attempt",
    ],
)
def test_a_value_the_store_would_not_keep_as_it_is(
    change: Callable[[Lines], None], line: int, field: str, record: Lines, tmp_path: Path
) -> None:
    _case(tmp_path, record, change, line, field)


def test_damaged_gzip_data(record: Lines, tmp_path: Path) -> None:
    path, store = tmp_path / "bad.jsonl.gz", tmp_path / "s.db"
    data = bytearray(gzip.compress("".join(json.dumps(line) + "\n" for line in record).encode()))
    data[10] = 0b111  # the first deflate block: final, of the reserved type 3 (zlib: "invalid block type")
    path.write_bytes(bytes(data))
    result = assay_main("import", "run", str(path), "--store", str(store))
    _refused(result, store, f"cannot read the run record {path}: ")


# 6. run ids
@pytest.mark.parametrize("run_id", ["../../etc/x", "", "<script>alert(1)</script>", "a b", "x" * 129])
def test_an_unsafe_run_id_in_the_header(run_id: str, record: Lines, tmp_path: Path) -> None:
    lines = copy.deepcopy(record)
    lines[0]["run"]["run_id"] = run_id
    result, path, store = _import(tmp_path, lines)
    _refused(result, store, f"{path}:1: run.run_id: run id {run_id!r}: use letters, digits and _ . : -")
    assert "import it with --run-id NEW_ID" in result.stderr
    again = assay_main("import", "run", str(path), "--store", str(store), "--run-id", "safe")
    assert again.code == 0, again  # the header's id is not used: the file imports


@pytest.mark.parametrize("run_id", ["../x", "", "<b>x</b>"])
def test_an_unsafe_run_id_given_to_the_import(run_id: str, record: Lines, tmp_path: Path) -> None:
    result, _, store = _import(tmp_path, record, "--run-id", run_id)
    _refused(result, store, f"--run-id: run id {run_id!r}: use letters, digits and _ . : -")


def test_records_that_assay_writes_still_import(record: Lines, tmp_path: Path) -> None:
    """The record as exported, with its attempt, imports whole; every field of a trial's
    record is one the import checks."""
    from assay.store.record_import import _TrialRecord

    result, _, store = _import(tmp_path, record)
    assert result.code == 0, result
    assert len(Store(store).completed_keys("base")) == 2 and Store(store).count_attempts("base") == 1
    recorded = {name for name in TrialResult.__dataclass_fields__ if name not in ("grades", "transcript")}
    assert set(_TrialRecord.model_fields) == recorded


def test_the_api_raises_the_same_located_error(record: Lines, tmp_path: Path) -> None:
    lines = copy.deepcopy(record)
    lines[TRIAL]["trial"]["seed"] = 2**64
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(RecordError, match=r"bad\.jsonl:2: trial\.seed: "):
        import_run(Store(tmp_path / "s.db"), path)
    assert Store(tmp_path / "s.db").list_runs() == []
