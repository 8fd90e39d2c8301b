"""The ``judge`` grader against the fake OpenAI-compatible server with scripted judge
answers: aggregation, vetoes, retries, unknown, reference modes, panels, skips."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.fake_llm_replies import sequence, to_messages
from tests.support.fake_llm_server import FakeLLMServer
from tests.toydomain import DOMAIN

from assay.core import GraderSpec, Message, Outcome, Reference, Task, Transcript
from assay.graders import NO_JUDGE, GraderSettings, build_grader, load_rubric

ROOT = Path(__file__).parents[2]
MEMORY = str(ROOT / "examples" / "rubrics" / "user_memory.yaml")
DIMS = ("factual_correctness", "information_completeness", "reasoning_correctness")
TASK = Task(id="memory", user={"goal": "Who is my daughter's pediatrician?"})
TRANSCRIPT = Transcript(
    [Message("user", "Who is my daughter's pediatrician?"), Message("assistant", "Lily sees Dr. Chen.")]
)


def answer(
    levels: tuple[int, int, int] = (4, 4, 4), veto: str = "pass", verdict: str = "pass", **extra: Any
) -> str:
    dims: dict[str, Any] = {
        n: {"score": s, "reason": f"{n} is {s}"} for n, s in zip(DIMS, levels, strict=True)
    }
    dims["hallucination"] = {"score": veto, "reason": "traced" if veto == "pass" else "made up a visit date"}
    return json.dumps({"dimensions": dims, "verdict": verdict, "reason": "overall reason", **extra})


def grader(
    srv: FakeLLMServer, params: Any = None, judges: tuple[str, ...] = ("openai:judge-a",), **spec: Any
):
    settings = GraderSettings(judges, {"base_url": srv.openai_base_url, "api_key": "x"})
    raw = {"judge": params if params is not None else MEMORY, **spec}
    return build_grader(GraderSpec.model_validate(raw), DOMAIN, settings)


async def grade(g: Any, task: Task = TASK, transcript: Transcript = TRANSCRIPT):
    return await g.grade(task, transcript, Outcome("user_stop"))


async def test_no_judge_configured_is_a_visible_skip() -> None:
    g = build_grader(GraderSpec.model_validate({"judge": MEMORY}), DOMAIN, GraderSettings())
    result = await grade(g)
    assert result.skipped and result.passed is None and result.reason == NO_JUDGE


async def test_weighted_mean_and_provenance() -> None:
    with FakeLLMServer(sequence(answer((4, 3, 2)))) as srv:
        result = await grade(grader(srv))
    rubric = load_rubric(MEMORY)
    # essential weight 3, important 2 each; levels normalised over 1..4
    expected = (3 * 1 + 2 * (2 / 3) + 2 * (1 / 3)) / 7
    assert result.passed is True and result.score == pytest.approx(expected)
    assert result.judge_model == "openai:judge-a"
    assert result.version == f"judge-prompt/1+user-memory@{rubric.hash}"
    assert result.metrics["temperature"] == 0.0 and result.metrics["dim:reasoning_correctness"] == 2.0
    assert result.metrics["pass:hallucination"] == 1.0 and result.metrics["judge_calls"] == 1
    assert "reasoning_correctness 2" in result.reason and not result.needs_review


async def test_veto_zeroes_the_score_and_vetoes_the_trial_when_gating() -> None:
    with FakeLLMServer(sequence(answer(veto="fail", verdict="fail"))) as srv:
        gating = await grade(grader(srv))
        informative = await grade(grader(srv, gating=False, name="memory-judge"))  # cached answer
    assert gating.score == 0.0 and gating.passed is False and gating.veto is True
    assert gating.category == "veto:hallucination" and "made up a visit date" in gating.reason
    # a non-gating judge records the veto (score 0) but cannot veto the trial's reward
    assert informative.score == 0.0 and informative.passed is False and informative.veto is False


async def test_essential_dimension_gates_and_pitfalls_subtract() -> None:
    rubric = {
        "dimensions": [
            {"name": "correct", "weight": "essential", "levels": {"4": "a", "3": "b", "2": "c", "1": "d"}},
            {"name": "clear", "weight": "optional", "levels": {"4": "a", "3": "b", "2": "c", "1": "d"}},
            {
                "name": "stuffing",
                "weight": "pitfall",
                "penalty": 0.3,
                "levels": {"pass": "no", "fail": "yes"},
            },
        ]
    }

    def reply(correct: int, stuffing: str) -> str:
        dims = {"correct": {"score": correct}, "clear": {"score": 4}, "stuffing": {"score": stuffing}}
        return json.dumps({"dimensions": dims, "verdict": "pass", "reason": "r"})

    with FakeLLMServer(sequence(reply(1, "pass"), reply(4, "fail"))) as srv:
        g = grader(srv, {"rubric": rubric})
        low_essential = await grade(g)
        pitfall = await grade(g, TASK, Transcript([Message("assistant", "Dr. Chen! Dr. Chen! Dr. Chen!")]))
    assert low_essential.score == pytest.approx(1 / 4) and low_essential.passed is False
    assert low_essential.needs_review  # the judge said pass, the rubric rules say fail
    assert pitfall.score == pytest.approx(1.0 - 0.3) and pitfall.passed is True


async def test_malformed_answer_is_retried_once_with_the_problem_stated() -> None:
    seen: list[list[Message]] = []
    replies = iter(["Sure! The answer is great.", answer()])

    def handler(request: dict[str, Any]) -> str:
        seen.append(to_messages(request))
        return next(replies)

    with FakeLLMServer(handler) as srv:
        result = await grade(grader(srv))
    assert result.passed is True and result.metrics["judge_calls"] == 2
    retry = seen[1]
    assert retry[-2].role == "assistant" and retry[-2].content == "Sure! The answer is great."
    assert "could not be used" in retry[-1].content and "no JSON object" in retry[-1].content


async def test_malformed_twice_goes_to_review_as_a_grader_error() -> None:
    bad = json.dumps({"dimensions": {"factual_correctness": {"score": 9}}})
    with FakeLLMServer(sequence("not json", bad)) as srv:
        result = await grade(grader(srv))
        assert srv.request_count == 2
    assert result.passed is None and result.needs_review and not result.skipped
    assert result.category == "grader_error" and "malformed answer twice" in result.reason
    assert "score 9" in result.reason or "missing" in result.reason


async def test_unknown_routes_to_human_review_not_a_guess() -> None:
    reply = json.loads(answer())
    reply["dimensions"]["factual_correctness"]["score"] = "unknown"
    with FakeLLMServer(sequence(json.dumps(reply), answer(verdict="unknown"))) as srv:
        g = grader(srv)
        dim_unknown = await grade(g)
        verdict_unknown = await grade(g, TASK, Transcript([Message("assistant", "Maybe Dr. Chen?")]))
    for result in (dim_unknown, verdict_unknown):
        assert result.passed is None and result.score is None and result.needs_review
        assert result.category == "judge_unknown" and "unknown" in result.reason


async def test_fenced_json_and_numeric_strings_are_accepted() -> None:
    fenced = "```json\n" + answer((4, "3", 4.0)) + "\n```"  # type: ignore[arg-type]
    with FakeLLMServer(sequence(fenced)) as srv:
        result = await grade(grader(srv))
    assert result.passed is True and result.metrics["dim:information_completeness"] == 3


async def test_reference_based_and_reference_free_modes() -> None:
    prompts: list[str] = []

    def handler(request: dict[str, Any]) -> str:
        prompts.append(to_messages(request)[-1].content)
        return answer()

    task = TASK.model_copy(update={"reference": Reference(answer="Dr. Chen is Lily's pediatrician.")})
    with FakeLLMServer(handler) as srv:
        based = await grade(grader(srv, {"rubric": MEMORY, "mode": "auto"}), task)
        free = await grade(grader(srv, {"rubric": MEMORY, "mode": "free"}), task)
        missing = await grade(grader(srv, {"rubric": MEMORY, "mode": "reference"}), TASK)
    assert "[Reference answer]" in prompts[0] and "Dr. Chen is Lily's pediatrician." in prompts[0]
    assert "[Reference answer]" not in prompts[1]
    assert based.metrics["reference_based"] == 1.0 and free.metrics["reference_based"] == 0.0
    assert missing.skipped and "no reference answer" in missing.reason and len(prompts) == 2


async def test_no_output_to_judge_is_skipped() -> None:
    with FakeLLMServer(sequence()) as srv:
        result = await grade(grader(srv), TASK, Transcript([Message("user", "hi")]))
    assert result.skipped and "no output" in result.reason


def _panel_handler(by_model: dict[str, str]):
    def handler(request: dict[str, Any]) -> str:
        return by_model[request["model"]]

    return handler


async def test_panel_mean_agreement_and_disagreement_threshold() -> None:
    judges = ("openai:j1", "openai:j2", "openai:j3")
    close = {"j1": answer((4, 4, 4)), "j2": answer((4, 4, 3)), "j3": answer((4, 3, 4))}
    with FakeLLMServer(_panel_handler(close)) as srv:
        agreed = await grade(grader(srv, judges=judges))
    assert agreed.passed is True and not agreed.needs_review
    assert agreed.judge_model == "openai:j1,openai:j2,openai:j3"
    assert agreed.metrics["panel_agreement"] == 1.0 and agreed.metrics["judges"] == 3
    assert agreed.metrics["dim:information_completeness"] == pytest.approx(11 / 3)
    far = {"j1": answer((4, 4, 4)), "j2": answer((2, 1, 1), verdict="fail"), "j3": answer((4, 4, 4))}
    with FakeLLMServer(_panel_handler(far)) as srv:
        split = await grade(grader(srv, {"rubric": MEMORY, "disagreement": 0.25}, judges=judges))
    assert split.needs_review and "spread" in split.reason
    assert split.metrics["panel_spread"] > 0.25 and split.metrics["panel_agreement"] == pytest.approx(1 / 3)


async def test_panel_majority_and_veto_split() -> None:
    judges = ("openai:j1", "openai:j2", "openai:j3")
    replies = {"j1": answer(), "j2": answer(veto="fail", verdict="fail"), "j3": answer()}
    with FakeLLMServer(_panel_handler(replies)) as srv:
        result = await grade(grader(srv, {"rubric": MEMORY, "aggregate": "majority"}, judges=judges))
    # one judge of three fired the veto: no veto, but a human must look
    assert result.passed is True and not result.veto and result.needs_review
    assert "split on veto 'hallucination'" in result.reason
    assert result.metrics["pass:hallucination"] == pytest.approx(2 / 3)
    majority_veto = {"j1": answer(veto="fail"), "j2": answer(veto="fail"), "j3": answer()}
    with FakeLLMServer(_panel_handler(majority_veto)) as srv:
        vetoed = await grade(grader(srv, judges=judges))
    assert vetoed.veto and vetoed.score == 0.0 and vetoed.passed is False


async def test_a_broken_judge_in_a_panel_sends_the_grade_to_review() -> None:
    judges = ("openai:j1", "openai:j2")
    with FakeLLMServer(_panel_handler({"j1": answer(), "j2": "nope"})) as srv:
        result = await grade(grader(srv, judges=judges))
    assert result.passed is True and result.needs_review and result.metrics["judges_usable"] == 1


async def test_judges_use_the_response_cache_by_default(tmp_path: Path) -> None:
    with FakeLLMServer(sequence(answer())) as srv:
        first = await grade(grader(srv))
        second = await grade(grader(srv))  # same prompt: served from the on-disk cache
        assert srv.request_count == 1
    assert first.score == second.score
    assert any((tmp_path / "cache").iterdir())


def test_length_bias_warns_when_scores_track_length() -> None:
    from assay.graders import length_bias

    biased = length_bias([0.2, 0.4, 0.6, 0.8, 1.0], [10, 50, 80, 200, 400])
    assert biased.rho == pytest.approx(1.0) and biased.warning and "WARNING" in biased.message
    fair = length_bias([0.8, 0.2, 0.9, 0.1, 0.5], [10, 50, 80, 200, 400])
    assert not fair.warning
    assert length_bias([1.0, 1.0, 1.0], [1, 2, 3]).rho is None  # constant scores: not measurable


async def test_verbosity_probe_measures_what_padding_buys() -> None:
    import re

    from assay.graders import JudgeInput, judge_scorer, pad, verbosity_probe

    fenced = re.compile(r"<<<(UNTRUSTED-[0-9A-F]{12}) answer>>>\n(.*?)\n<<<END \1>>>", re.DOTALL)

    def length_loving_judge(request: dict[str, Any]) -> str:
        text = fenced.search(to_messages(request)[-1].content).group(2)  # type: ignore[union-attr]
        return answer((4, 4, 4)) if len(text) > 80 else answer((2, 2, 2))

    assert len(pad("short answer.", 2.0)) >= 3 * len("short answer.")
    with FakeLLMServer(length_loving_judge) as srv:
        from assay.llm import get_model

        model = get_model("openai:judge", base_url=srv.openai_base_url, api_key="x")
        scorer = judge_scorer(model, "openai:judge", load_rubric(MEMORY), JudgeInput("Who?", ""))
        probe = await verbosity_probe(scorer, ["Dr. Chen.", "Lily's doctor is Dr. Chen."], factor=3.0)
    assert probe.plain == [pytest.approx(1 / 3)] * 2 and probe.padded == [1.0, 1.0]
    assert probe.mean_shift == pytest.approx(2 / 3)
