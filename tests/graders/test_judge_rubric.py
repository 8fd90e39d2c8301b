"""Rubrics as data: the seed's user-memory rubric, aggregation rules, the version hash,
located errors, and the judge graders of the built-in retail suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.toydomain import DOMAIN

from assay.core import GraderSpec, Task
from assay.graders import GraderFileError, check_grader_spec, load_rubric, parse_rubric
from assay.runner import run_async
from assay.suites import instantiate, load_suite

ROOT = Path(__file__).parents[2]
MEMORY = ROOT / "examples" / "rubrics" / "user_memory.yaml"
LEVELS = {"4_excellent": "a", "3_good": "b", "2_pass": "c", "1_fail": "d"}


def test_the_seed_user_memory_rubric() -> None:
    r = load_rubric(MEMORY)
    assert [d.name for d in r.dimensions] == [
        "factual_correctness",
        "information_completeness",
        "reasoning_correctness",
        "hallucination",
    ]
    assert [d.weight for d in r.dimensions] == ["essential", "important", "important", "veto"]
    assert r.scale == [1, 2, 3, 4] and r.effective_pass_level == 2
    first = r.dimensions[0]
    assert {a.value: a.label for a in first.levels} == {4: "excellent", 3: "good", 2: "pass", 1: "fail"}
    assert "Dr. Chen" in first.levels[0].description and len(first.examples) == 3
    assert len(r.edge_cases) == 2 and "which daughter" in r.edge_cases[0]
    text = r.render()
    assert "VETO item" in text and "4 excellent: Answers Dr. Chen" in text
    assert text.index("Edge cases:") > text.index("hallucination") and "which daughter" in text


@pytest.mark.parametrize(
    ("levels", "score", "passed"),
    [
        ({"factual_correctness": 4, "information_completeness": 4, "reasoning_correctness": 4}, 1.0, True),
        ({"factual_correctness": 2, "information_completeness": 2, "reasoning_correctness": 2}, 1 / 3, True),
        ({"factual_correctness": 1, "information_completeness": 4, "reasoning_correctness": 4}, 4 / 7, False),
        ({"factual_correctness": 4, "information_completeness": 1, "reasoning_correctness": 1}, 3 / 7, True),
    ],
)
def test_aggregation(levels: dict[str, int], score: float, passed: bool) -> None:
    r = load_rubric(MEMORY)
    agg = r.aggregate({**levels, "hallucination": "pass"})
    assert agg.score == pytest.approx(score) and agg.passed is passed
    vetoed = r.aggregate({**levels, "hallucination": "fail"})
    assert vetoed.score == 0.0 and not vetoed.passed and vetoed.vetoes == ["hallucination"]


def test_hash_is_the_version_identity() -> None:
    data = {"name": "x", "dimensions": [{"name": "a", "weight": "essential", "scoring": LEVELS}]}
    one, same = parse_rubric(data), parse_rubric({"rubric": data})
    changed = parse_rubric({**data, "dimensions": [{"name": "a", "weight": "important", "scoring": LEVELS}]})
    assert one.hash == same.hash != changed.hash


def test_errors_name_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "rubric:\n"
        "  dimensions:\n"
        "    - name: a\n"
        "      weight: essentail\n"
        "      scoring: {4_x: a, 1_y: b}\n"
        "    - name: v\n"
        "      weight: veto\n"
        "      scoring: {pass: x, maybe: y}\n"
        "    - name: b\n"
        "      scoring: {excellent: a}\n"
    )
    with pytest.raises(GraderFileError) as exc:
        load_rubric(path)
    lines = [str(p) for p in exc.value.problems]
    assert any(f"{path}:4: rubric.dimensions[0].weight:" in line for line in lines)
    assert any(f"{path}:6: rubric.dimensions[1]:" in line and "pass and fail" in line for line in lines)
    assert any(":9: rubric.dimensions[2]:" in line and "must start with its number" in line for line in lines)
    path.write_text("dimensions: [\n")
    with pytest.raises(GraderFileError, match="YAML syntax error"):
        load_rubric(path)


def test_mixed_scales_and_duplicate_names_are_rejected() -> None:
    with pytest.raises(GraderFileError, match="same levels"):
        parse_rubric(
            {"dimensions": [{"name": "a", "scoring": LEVELS}, {"name": "b", "scoring": {"1": "x", "0": "y"}}]}
        )
    with pytest.raises(GraderFileError, match="unique"):
        parse_rubric({"dimensions": [{"name": "a", "scoring": LEVELS}, {"name": "a", "scoring": LEVELS}]})


def test_validate_reports_rubric_problems_with_their_location(tmp_path: Path) -> None:
    task = Task(id="t")
    missing = GraderSpec.model_validate({"judge": "nowhere/rubric.yaml"})
    problems = check_grader_spec(missing, DOMAIN, task)
    assert problems and problems[0][0] == ("rubric",) and "file not found" in problems[0][1]
    (tmp_path / "r.yaml").write_text("dimensions: [{name: a, scoring: {4: x}}]\n")
    short = GraderSpec.model_validate({"judge": str(tmp_path / "r.yaml")})
    assert "at least two numbered levels" in check_grader_spec(short, DOMAIN, task)[0][1]
    assert check_grader_spec(GraderSpec.model_validate({"judge": str(MEMORY)}), DOMAIN, task) == []


def test_relative_rubrics_are_found_in_the_suite_folder(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "m.yaml").write_text(MEMORY.read_text())
    monkeypatch.chdir(ROOT)
    task = Task(id="t", metadata={"suite_dir": str(tmp_path)})
    assert load_rubric("rubrics/m.yaml", task).name == "user-memory"


@pytest.mark.parametrize("ref", ["../outside.yaml", "ABSOLUTE", "rubrics/link.yaml"])
def test_a_suite_rubric_outside_its_folder_is_refused(tmp_path: Path, ref: str) -> None:
    """The suite's hash covers its folder only: a rubric read from elsewhere could change
    and leave the hash (and every comparison that trusts it) the same."""
    suite = tmp_path / "suite"
    (suite / "rubrics").mkdir(parents=True)
    outside = tmp_path / "outside.yaml"
    outside.write_text(MEMORY.read_text())
    (suite / "rubrics" / "link.yaml").symlink_to(outside)
    ref = str(outside) if ref == "ABSOLUTE" else ref
    task = Task(id="t", metadata={"suite_dir": str(suite)})
    problems = check_grader_spec(GraderSpec.model_validate({"judge": ref}), DOMAIN, task)
    assert problems and problems[0][0] == ("rubric",)
    assert f"is outside the suite folder {suite} (the suite's hash would not cover it)" in problems[0][1]
    with pytest.raises(GraderFileError, match="outside the suite folder"):
        load_rubric(ref, task)


def test_shipped_rubrics_and_tasks_without_a_suite_folder(tmp_path: Path, monkeypatch) -> None:
    """assay's own rubrics (versioned with assay) may be named from any suite; a task
    built in code (no suite folder) reads relative paths from the working directory."""
    from assay.graders.rag_generation import FAITHFULNESS_RUBRIC

    in_suite = Task(id="t", metadata={"suite_dir": str(tmp_path)})
    assert load_rubric(str(FAITHFULNESS_RUBRIC), in_suite).name
    (tmp_path / "here.yaml").write_text(MEMORY.read_text())
    monkeypatch.chdir(tmp_path)
    assert load_rubric("here.yaml", Task(id="t")).name == "user-memory"
    with pytest.raises(GraderFileError, match="file not found"):
        load_rubric("here.yaml", Task(id="t", metadata={"suite_dir": str(tmp_path / "elsewhere")}))


async def test_retail_judges_are_non_gating_and_skipped_without_a_judge_model() -> None:
    suite = load_suite("retail")  # `assay validate retail` loads the rubric from the suite folder
    judged = [t for t in instantiate(suite, 0) if any(g.kind == "judge" for g in t.graders)]
    assert len(judged) >= 3
    for task in judged:
        spec = next(g for g in task.graders if g.kind == "judge")
        assert spec.gating is False and spec.label == "explanation"
    run = await run_async(suite, agent="builtin:retail-careful", trials=1, task_ids=[t.id for t in judged])
    summary = run.summary().to_dict()
    assert summary["graders"]["explanation"]["skipped"] == len(judged)
    grades = [g for r in run.results for g in r.grades if g.grader == "explanation"]
    assert all(g.skipped and g.reason == "no judge model configured (--judge)" for g in grades)
    assert all(r.reward == 1 for r in run.results)  # a skipped non-gating judge changes no reward


async def test_retail_judges_grade_a_run_and_are_metered_as_judge() -> None:
    import json

    from tests.support.fake_llm_server import FakeLLMServer

    reply = json.dumps(
        {
            "dimensions": {
                "policy_citation": {"score": 4, "reason": "cites the rule"},
                "outcome_clarity": {"score": 3, "reason": "no refund id"},
                "tone": {"score": 4, "reason": "polite"},
                "invented_facts": {"score": "pass", "reason": "all from tools"},
                "false_promise": {"score": "pass", "reason": "none"},
            },
            "verdict": "pass",
            "reason": "clear and correct",
        }
    )
    suite = load_suite("retail")
    with FakeLLMServer(lambda _request: reply) as srv:
        run = await run_async(
            suite,
            agent="builtin:retail-careful",
            trials=1,
            task_ids=["static-15-day-old-approved"],
            judges=["openai:retail-judge"],
            judge_options={"base_url": srv.openai_base_url, "api_key": "x"},
        )
    (result,) = run.results
    grade = next(g for g in result.grades if g.grader == "explanation")
    assert grade.passed is True and not grade.skipped and grade.judge_model == "openai:retail-judge"
    assert grade.version.startswith("judge-prompt/1+retail-explanation@")
    assert result.usage["judge"]["calls"] == 1  # judge calls are metered under their own role
    assert run.summary().to_dict()["graders"]["explanation"]["passed"] == 1
