"""Suite loading, located validation errors, templates and the content hash."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from assay.errors import SuiteError
from assay.suites import instantiate, iter_specs, load_suite

GOOD = """\
name: bank
version: 2
domain: toy
canary: "assay-canary 1f0c3c52-1a4b-4e0e-9a37-6f6f0b0c1d2e"
defaults: {trials: 3, as_of: 2025-03-01T10:00:00, timezone: Europe/Paris}
tasks:
  - id: deposit
    template: deposit
    instances: 3
    stratum: edge
    tags: [deposit]
  - id: static
    split: holdout
    difficulty: 3
    initial_state: {records: {accounts: [{account_id: S1, owner: s, balance: 1}]}}
    user: {opening: "What is my balance? My account is S1."}
    graders:
      - communicate: ["1"]
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def test_good_suite_loads_and_instantiates(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, {"suite.yaml": GOOD}))
    assert (suite.name, suite.version, suite.defaults.trials) == ("bank", "2", 3)
    tasks = instantiate(suite, seed=0)
    assert [t.id for t in tasks] == ["deposit-1", "deposit-2", "deposit-3", "static"]
    assert {t.stratum for t in tasks[:3]} == {"edge"}
    assert tasks[3].split == "holdout" and tasks[3].difficulty == 3
    assert all(str(t.as_of) == "2025-03-01 10:00:00" and t.timezone == "Europe/Paris" for t in tasks)


def test_templates_change_with_seed_and_repeat_with_same_seed(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, {"suite.yaml": GOOD}))
    a, b, c = instantiate(suite, 0), instantiate(suite, 0), instantiate(suite, 1)
    assert [t.model_dump() for t in a] == [t.model_dump() for t in b]
    assert a[0].user.known != c[0].user.known
    assert a[0].initial_state.records != c[0].initial_state.records
    assert a[0].user.known != a[1].user.known  # instances differ from each other too
    assert a[3] == c[3]  # static tasks do not depend on the seed


def test_hash_is_content_identity(tmp_path: Path) -> None:
    one = load_suite(write(tmp_path / "a", {"suite.yaml": GOOD})).hash
    same = load_suite(write(tmp_path / "b", {"suite.yaml": GOOD})).hash
    other = load_suite(
        write(tmp_path / "c", {"suite.yaml": GOOD.replace("instances: 3", "instances: 2")})
    ).hash
    assert one == same != other


def test_task_files_yaml_json_jsonl(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "suite.yaml": "name: files\ndomain: toy\n",
            "tasks/a.yaml": "- id: a1\n  user: {opening: hi}\n- id: a2\n",
            "tasks/b.json": json.dumps({"tasks": [{"id": "b1"}]}),
            "tasks/c.jsonl": '{"id": "c1"}\n\n{"id": "c2", "stratum": "adversarial"}\n',
        },
    )
    suite = load_suite(root)
    assert [t.id for t in iter_specs(suite)] == ["a1", "a2", "b1", "c1", "c2"]
    assert [t.id for t in suite.tasks] == ["a1", "a2", "b1"]  # JSONL tasks are streamed, not kept
    assert [t.stratum for t in instantiate(suite)][-1] == "adversarial"


BAD_SUITE = """\
name: broken
domain: toy
tasks:
  - id: ok
  - id: unknown-field
    colour: blue
  - id: wrong-type
    difficulty: hard
  - id: bad-tool
    graders:
      - actions:
          required: [get_balance, withdraw]
"""
BAD_TASKS = """\
- id: fine
- id: broken
  user: {opening: "unterminated
"""


def test_validate_reports_every_problem_located(tmp_path: Path) -> None:
    root = write(tmp_path, {"suite.yaml": BAD_SUITE, "tasks/more.yaml": BAD_TASKS})
    with pytest.raises(SuiteError) as exc:
        load_suite(root)
    lines = [str(p) for p in exc.value.problems]
    suite_file, task_file = root / "suite.yaml", root / "tasks/more.yaml"
    assert f"{suite_file}:6: tasks[1].colour: unknown field" in lines
    assert any(line.startswith(f"{suite_file}:8: tasks[2].difficulty: ") for line in lines)
    assert any(line.startswith(f"{task_file}:4: ") and "YAML syntax error" in line for line in lines)
    bad_tool = [line for line in lines if "withdraw" in line]
    assert len(bad_tool) == 1
    assert bad_tool[0].startswith(
        f"{suite_file}:12: tasks[3].graders[0].actions.required[1]: unknown tool 'withdraw'"
    )
    assert len(lines) == 4


def test_validate_cli_prints_one_line_per_problem_and_exits_2(tmp_path: Path) -> None:
    root = write(tmp_path, {"suite.yaml": BAD_SUITE, "tasks/more.yaml": BAD_TASKS})
    proc = subprocess.run(
        [sys.executable, "-m", "assay", "validate", str(root)], capture_output=True, text=True, env=_env()
    )
    assert proc.returncode == 2
    out = proc.stdout.strip().splitlines()
    assert len(out) == 4 and all(line.startswith(str(root)) for line in out)
    assert "Traceback" not in proc.stderr + proc.stdout


def _env() -> dict[str, str]:
    import os

    # the toy domain comes from the tests package: make it importable in the child
    return {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), "ASSAY_PLUGINS": "tests.toydomain"}


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"suite.yaml": "name: x\ndomain: nowhere\n"}, "domain: unknown domain 'nowhere'"),
        (
            {"suite.yaml": "name: x\ndomain: toy\ntasks:\n  - {id: a, template: nope}\n"},
            "tasks[0].template: unknown template 'nope'",
        ),
        ({"suite.yaml": "name: x\ntasks:\n  - {id: a}\n  - {id: a}\n"}, "duplicate task id 'a'"),
        (
            {"suite.yaml": "name: x\ntasks:\n  - {id: a, graders: [{vibes: 1}]}\n"},
            "unknown grader kind 'vibes'",
        ),
        ({"suite.yaml": "- just a list\n"}, "must be a mapping"),
        ({"suite.yaml": "name: x\nname: y\n"}, "duplicate key"),
        (
            {"suite.yaml": "name: x\ntasks:\n  - {id: a, graders: [{text: {exact: a, regex: b}}]}\n"},
            "choose one of exact",
        ),
    ],
)
def test_other_problems(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    with pytest.raises(SuiteError) as exc:
        load_suite(write(tmp_path, files))
    assert any(expected in str(p) for p in exc.value.problems), exc.value.problems


def test_missing_source() -> None:
    with pytest.raises(SuiteError, match="not a built-in suite"):
        load_suite("/no/such/suite")


def test_hash_covers_rubrics_and_other_suite_files_but_not_stores(tmp_path: Path) -> None:
    root = write(tmp_path, {"suite.yaml": GOOD, "rubrics/r.yaml": "dimensions: []\n"})
    before = load_suite(root).hash
    (root / "assay.db").write_bytes(b"not part of the suite")
    assert load_suite(root).hash == before
    (root / "rubrics" / "r.yaml").write_text("dimensions: [changed]\n")
    assert load_suite(root).hash != before
    assert instantiate(load_suite(root))[3].metadata["suite_dir"] == str(root)
