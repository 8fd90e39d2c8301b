"""The ``tests`` grader: FAIL_TO_PASS / PASS_TO_PASS over pytest node ids and scripts,
run for real in the sandbox against a workspace given as a state's ``files`` table."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from assay.core import GraderSpec, Message, Outcome, Task, Transcript
from assay.envs import NO_DOMAIN, Database
from assay.envs.sandbox import FILE_KEY, FILES_TABLE, SandboxUnavailable, runner
from assay.envs.sandbox.bwrap import find_bwrap
from assay.graders import build_grader
from assay.graders.registry import check_grader_spec, grade_trial
from assay.graders.tests import extract_code

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed")

CALC_BUGGY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
CALC_FIXED = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = (
    "from calc import add, mul\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_add_zero():\n    assert add(0, 0) == 0\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)
TASK = Task(id="t")


def state(files: dict[str, str]) -> Any:
    db = Database({FILES_TABLE: FILE_KEY})
    for path, content in files.items():
        db.insert(FILES_TABLE, {"path": path, "content": content})
    return db.snapshot()


def grade(params: dict[str, Any], files: dict[str, str] | None = None, answers: list[str] = ()) -> Any:
    grader = build_grader(GraderSpec(kind="tests", params=params), NO_DOMAIN)
    transcript = Transcript([Message("assistant", a) for a in answers])
    outcome = Outcome("user_stop", final_state=state(files or {}))
    return asyncio.run(grade_trial([grader], TASK, transcript, outcome))[0]


PARAMS = {
    "fail_to_pass": ["tests/test_calc.py::test_add"],
    "pass_to_pass": ["tests/test_calc.py::test_add_zero", "tests/test_calc.py::test_mul"],
    "timeout_s": 30,
}


def test_all_pass_after_the_fix() -> None:
    result = grade(PARAMS, {"calc.py": CALC_FIXED, "tests/test_calc.py": TESTS})
    assert result.passed is True and result.score == 1.0
    assert result.reason == "1/1 FAIL_TO_PASS now pass; 2/2 PASS_TO_PASS still pass"
    assert result.metrics["fail_to_pass_passed"] == 1 and result.metrics["pass_to_pass_total"] == 2


def test_unfixed_bug_gets_partial_credit_and_no_reward() -> None:
    result = grade(PARAMS, {"calc.py": CALC_BUGGY, "tests/test_calc.py": TESTS})
    assert result.passed is False and result.category == "tests_failed"
    assert result.score == pytest.approx(2 / 3)
    assert "still failing: tests/test_calc.py::test_add (failed)" in result.reason


def test_a_change_that_breaks_a_passing_test_is_reported() -> None:
    broken = CALC_FIXED.replace("return a * b", "return a ** b")
    result = grade(PARAMS, {"calc.py": broken, "tests/test_calc.py": TESTS})
    assert result.passed is False and result.category == "broke_tests"
    assert "broken: tests/test_calc.py::test_mul (failed)" in result.reason
    assert result.metrics["pass_to_pass_passed"] == 1


def test_missing_ids_files_and_scripts() -> None:
    params = {
        "fail_to_pass": ["tests/test_calc.py", "tests/test_calc.py::test_nope", {"script": "check.py"}],
        "pass_to_pass": [{"script": "missing.py", "name": "smoke"}],
        "files": {"check.py": "from calc import add\nassert add(1, 1) == 2, 'add is wrong'\n"},
    }
    fixed = grade(params, {"calc.py": CALC_FIXED, "tests/test_calc.py": TESTS})
    assert fixed.metrics["tests_passed"] == 2 and fixed.metrics["tests_total"] == 4
    assert "tests/test_calc.py::test_nope (not found)" in fixed.reason and "smoke (not found)" in fixed.reason
    buggy = grade(params, {"calc.py": CALC_BUGGY, "tests/test_calc.py": TESTS})
    assert buggy.metrics["tests_passed"] == 0
    assert "1/3 not passed" in buggy.reason and "AssertionError: add is wrong" in buggy.reason


def test_hidden_files_replace_the_agents_own() -> None:
    cheating = "".join(f"def {name}():\n    pass\n\n\n" for name in ("test_add", "test_add_zero", "test_mul"))
    params = {**PARAMS, "files": {"tests/test_calc.py": TESTS}}
    result = grade(params, {"calc.py": CALC_BUGGY, "tests/test_calc.py": cheating})
    assert result.passed is False


def test_answer_is_written_after_the_prefix() -> None:
    params = {
        "answer": {"path": "solution.py", "prefix": 'def double(x):\n    """Twice x."""\n'},
        "files": {"check.py": "from solution import double\nassert double(4) == 8\n"},
        "fail_to_pass": [{"script": "check.py"}],
    }
    body = "Here you go:\n```python\n    return 2 * x\n```\nIt doubles."
    assert grade(params, answers=["thinking...", body]).passed is True
    full = "```python\ndef double(x):\n    return x + x\n```"
    assert grade(params, answers=[full]).passed is True
    wrong = "```python\n    return x\n```"
    assert grade(params, answers=[wrong]).passed is False
    silent = grade(params, answers=[])
    assert silent.passed is False and silent.category == "no_answer"


def test_timeouts_are_the_agents_failure() -> None:
    params = {
        "files": {"check.py": "import solution\n"},
        "answer": {"path": "solution.py"},
        "fail_to_pass": [{"script": "check.py"}],
        "timeout_s": 1,
    }
    result = grade(params, answers=["```python\nwhile True:\n    pass\n```"])
    assert result.passed is False and result.category == "timeout" and "timed out" in result.reason


def test_extract_code_prefers_the_last_answer_with_a_python_block() -> None:
    assert extract_code(["```python\na = 1\n```", "No code here."]) == "a = 1\n"
    assert extract_code(["```\nx\n```\n```py\ny\n```"]) == "y\n"
    assert extract_code(["    return 1\n"]) == "    return 1\n"
    assert extract_code(["```python\nunterminated"]) == "unterminated"
    assert extract_code([]) is None


def test_a_sandbox_that_cannot_run_raises_a_harness_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "find_bwrap", lambda: None)
    monkeypatch.delenv(runner.UNSAFE_ENV, raising=False)
    with pytest.raises(SandboxUnavailable):
        grade(PARAMS, {"calc.py": CALC_FIXED, "tests/test_calc.py": TESTS})


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "list at least one test"),
        ({"fail_to_pass": ["/etc/passwd"]}, "not a pytest node id"),
        ({"fail_to_pass": [{"script": "../x.py"}]}, "inside the workspace"),
        ({"fail_to_pass": ["a"], "files": {"/abs.py": ""}}, "relative path"),
        ({"fail_to_pass": ["a"], "surprise": 1}, "unknown field"),
    ],
)
def test_bad_params_are_reported(params: dict[str, Any], message: str) -> None:
    problems = check_grader_spec(GraderSpec(kind="tests", params=params), NO_DOMAIN, TASK)
    assert problems and any(message in text for _, text in problems), problems
