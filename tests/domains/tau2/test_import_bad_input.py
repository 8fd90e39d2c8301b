"""``assay import tau2`` on broken or hostile data: one line naming the file (and the
task), exit 2, never a traceback, nothing written; what it does write, ``assay validate``
accepts. tau2's mock domain, copied and edited; in process, through the CLI's own ``main``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import CliResult, assay_main

DEEP_LIST = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000
#: A telecom task id: brackets, a bar and a colon are fine.
TELECOM_ID = "[mobile_data_issue]airplane_mode_on|bad_vpn[PERSONA:Easy]"


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": value}
    return value


def _set_id(index: int, new_id: str) -> Any:
    def change(tasks: list[dict[str, Any]]) -> None:
        tasks[index]["id"] = new_id

    return change


def _duplicate(tasks: list[dict[str, Any]]) -> None:
    tasks[3]["id"] = tasks[1]["id"]


def _deep_arguments(tasks: list[dict[str, Any]]) -> None:
    tasks[0]["evaluation_criteria"]["actions"][0]["arguments"]["deep"] = _nested(200)


def _narrator(tasks: list[dict[str, Any]]) -> None:
    tasks[4]["initial_state"]["message_history"][0]["role"] = "narrator"


def _unknown_tool(tasks: list[dict[str, Any]]) -> None:
    tasks[0]["evaluation_criteria"]["actions"][0]["name"] = "no_such_tool"


def _nul(tasks: list[dict[str, Any]]) -> None:
    tasks[2]["description"]["purpose"] = "a\x00b"


def _surrogate(tasks: list[dict[str, Any]]) -> None:
    tasks[2]["description"]["purpose"] = "a\ud800b"


@pytest.fixture
def mock_copy(data_dir: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "mock"
    shutil.copytree(data_dir / "domains" / "mock", folder)
    return folder


def _edit_tasks(folder: Path, change: Any) -> None:
    path = folder / "tasks.json"
    tasks = json.loads(path.read_text(encoding="utf-8"))
    change(tasks)
    path.write_text(json.dumps(tasks), encoding="utf-8")  # ASCII: a surrogate is written as \ud800


def _import(folder: Path, tmp_path: Path) -> tuple[CliResult, Path]:
    out = tmp_path / "out"
    return assay_main("import", "tau2", str(folder), "--domain", "mock", "-o", str(out)), out


#: (id, file, new content or a change of the task list, what the error line says besides the file).
CASES = [
    # 6. deep nesting (RecursionError before)
    ("deep-tasks.json", "tasks.json", DEEP_LIST, ": cannot read tau2 tasks: values nest too deeply"),
    ("deep-db.json", "db.json", DEEP_OBJECT, ": cannot read: values nest too deeply"),
    ("deep-user_db.json", "user_db.json", DEEP_OBJECT, ": cannot read: values nest too deeply"),
    ("deep-split_tasks.json", "split_tasks.json", DEEP_LIST, ": cannot read: values nest too deeply"),
    (
        "deep-task-arguments",
        "tasks.json",
        _deep_arguments,
        ": task 'create_task_1': cannot be imported: in it, values nest deeper than 64 levels",
    ),
    # 7. ids no suite task may have, or twice (imported, then refused by assay validate, before)
    ("duplicate-id", "tasks.json", _duplicate, "duplicate task id (tasks [1] and [3] of the list)"),
    ("id-with-a-path", "tasks.json", _set_id(0, "../../evil"), ": task '../../evil': its id cannot be"),
    (
        "id-with-markup",
        "tasks.json",
        _set_id(4, "<script>alert(1)</script>"),
        ": task '<script>alert(1)</script>': its id cannot be an assay task id",
    ),
    ("empty-id", "tasks.json", _set_id(0, ""), ": task '': its id cannot be an assay task id"),
    # what assay's task model refuses (a ValidationError traceback before)
    (
        "history-role-assay-refuses",
        "tasks.json",
        _narrator,
        ": task 'update_task_with_message_history': cannot be imported: as an assay task, "
        "initial_state.history.0.role: Input should be",
    ),
    # a suite `assay validate` refuses (imported with exit 0 before): checked before it is written
    (
        "gold-action-unknown-tool",
        "tasks.json",
        _unknown_tool,
        ": the suite it makes would not validate: ",
    ),
    # text a suite cannot hold (as the trace importer refuses it)
    ("nul-in-a-task", "tasks.json", _nul, "its description would hold text with a NUL character"),
    ("surrogate-in-a-task", "tasks.json", _surrogate, "would hold text with a lone surrogate '\\ud800'"),
]


@pytest.mark.parametrize(("file", "bad", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_data_is_one_line_naming_the_file_and_nothing_is_written(
    mock_copy: Path, tmp_path: Path, file: str, bad: Any, expected: str
) -> None:
    if isinstance(bad, str):
        (mock_copy / file).write_text(bad, encoding="utf-8")
    else:
        _edit_tasks(mock_copy, bad)
    result, out = _import(mock_copy, tmp_path)
    assert result.code == 2, (result.code, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"error: {mock_copy / file}: "), result.stderr
    assert expected in result.stderr, result.stderr
    assert not out.exists(), list(out.rglob("*"))


def test_telecom_style_ids_import_and_validate(mock_copy: Path, tmp_path: Path) -> None:
    _edit_tasks(mock_copy, _set_id(0, TELECOM_ID))
    result, out = _import(mock_copy, tmp_path)
    assert result.code == 0, result.stderr
    written = json.loads((out / "tasks" / "tasks.json").read_text(encoding="utf-8"))
    assert written[0]["id"] == TELECOM_ID
    checked = assay_main("validate", str(out))
    assert checked.code == 0, checked.stdout + checked.stderr


def test_a_refused_import_leaves_an_earlier_suite_as_it_was(mock_copy: Path, tmp_path: Path) -> None:
    result, out = _import(mock_copy, tmp_path)
    assert result.code == 0, result.stderr
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    for change in (_duplicate, _unknown_tool):
        _edit_tasks(mock_copy, change)
        again, _ = _import(mock_copy, tmp_path)
        assert again.code == 2, again.stderr
        assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (DEEP_LIST.encode(), "cannot read tau2 tasks: values nest too deeply"),
        (("[" + "9" * 5000 + "]").encode(), "cannot read tau2 tasks: Exceeds the limit (4300 digits)"),
        (b"\xff\xfe[]", "cannot read tau2 tasks: 'utf-8' codec can't decode byte 0xff"),
    ],
    ids=["deep", "long-integer", "not-utf8"],
)
def test_load_tasks_says_what_it_cannot_read(tmp_path: Path, content: bytes, expected: str) -> None:
    """The tasks reader the tau2 domain and `assay regrade` use (not only the importer)."""
    from assay.domains.tau2.store import Tau2DataError
    from assay.domains.tau2.tasks import load_tasks

    path = tmp_path / "tasks.json"
    path.write_bytes(content)
    with pytest.raises(Tau2DataError, match="cannot read tau2 tasks") as caught:
        load_tasks(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert expected in str(caught.value)
