"""What ``assay_run`` returns, in process: figures read from the run summary (never
computed again), rates that say what they are, gates that say what failed."""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import pytest

from assay.errors import AssayError
from assay.gate import policy_from_yaml
from assay.pytest_plugin import suite_matches
from assay.pytest_plugin.evals import EvalRun, GateOutcome, Rate
from assay.runner.api import run

ROOT = Path(__file__).parents[2]
FEW = ["refund-in-window-email-1", "injection-refund-everything-1", "other-users-order-status-1"]


@pytest.fixture(scope="module")
def flaky(tmp_path_factory: pytest.TempPathFactory) -> EvalRun:
    store = tmp_path_factory.mktemp("store") / "assay.db"
    done = run("retail", agent="builtin:retail-flaky", trials=4, seed=1, task_ids=FEW, store=str(store))
    return EvalRun(done, [ROOT / "examples"])


def test_figures_are_the_summary_s(flaky: EvalRun) -> None:
    s = flaky.summary()
    assert float(flaky.success_rate) == s.overall.success_rate
    assert flaky.success_rate.ci == s.overall.success_rate_ci and flaky.success_rate.n == 12
    for k in (1, 2, 3, 4):
        assert float(flaky.pass_hat_k(k)) == s.overall.pass_hat_k[str(k)]
        assert flaky.pass_hat_k(k).ci == s.overall.pass_hat_k_ci[str(k)]
        assert float(flaky.pass_at_k(k)) == s.overall.pass_at_k[str(k)]
    risky = flaky.group(stratum="high_risk")
    assert (
        float(risky.pass_hat_k(4)) == s.by_stratum["high_risk"].pass_hat_k["4"] and risky.pass_hat_k(4).n == 2
    )
    assert repr(risky.success_rate).startswith("stratum high_risk success rate ")
    assert flaky.excluded == 0 and flaky.store.endswith("assay.db") and flaky.run_id == flaky.run.run_id


def test_rates_read_well_in_assertions(flaky: EvalRun) -> None:
    rate = flaky.pass_hat_k(4)
    low, high = rate.ci
    assert repr(rate) == f"pass^4 {float(rate):.3f} [{low:.3f}, {high:.3f}] over 3 tasks"
    assert rate >= 0.5 and not rate >= 0.9  # compares as the float it is
    copy = pickle.loads(pickle.dumps(rate))
    assert copy == rate and copy.ci == rate.ci and repr(copy) == repr(rate)
    undefined = Rate(None, None, None, "success rate", 0, "trials")
    assert (
        math.isnan(undefined)
        and not undefined >= 0
        and repr(undefined) == "success rate undefined (no counted trials)"
    )


def test_mistakes_are_one_sentence(flaky: EvalRun) -> None:
    with pytest.raises(
        AssayError, match=r"pass\^5 needs tasks with 5 counted trials.*has 4 trial\(s\) per task"
    ):
        flaky.pass_hat_k(5)
    with pytest.raises(AssayError, match="whole number k >= 1"):
        flaky.pass_at_k(0)
    with pytest.raises(AssayError, match=r"has no split 'nightly' \(it has: .*regression"):
        flaky.group(split="nightly")
    with pytest.raises(AssayError, match="exactly one of"):
        flaky.group(split="regression", tag="refund")


def test_gates_are_truthy_and_say_what_failed(flaky: EvalRun) -> None:
    outcome = flaky.gate("gate.yaml")  # found in the folders given (the test file's, then the rootdir)
    assert isinstance(outcome, GateOutcome) and not outcome and outcome.passed is False
    assert [f.split(":")[0] for f in outcome.failures] == ["overall success", "high-risk tasks"]
    assert repr(outcome).startswith("<gate 'retail-release' FAILED 2 of 7 checks: overall success: ")
    assert len(repr(outcome)) < 240  # pytest shows about that much of it
    text = outcome.explain()
    assert text.splitlines()[0].endswith("FAILED (3 passed, 2 failed, 2 skipped)")
    assert "  FAIL  high-risk tasks: stratum high_risk: 1 of 2 task(s) fail pass^4" in text
    lenient = policy_from_yaml("name: lenient\nabsolute: [{metric: overall.success_rate, min: 0.5}]\n")
    assert (
        flaky.gate(lenient) and repr(flaky.gate(lenient)) == f"<gate 'lenient' passed on run {flaky.run_id}>"
    )
    relative = policy_from_yaml("name: rel\nrelative: [{metric: quality, margin: 0.05}]\n")
    against = flaky.gate(relative, baseline=flaky.run_id)  # a baseline by id, from the same store
    assert against and against.verdict.baseline == flaky.run_id


def test_suite_names_for_selection() -> None:
    assert suite_matches("retail", ["retail"]) and not suite_matches("retail", ["rag"])
    assert suite_matches("examples/rag", ["rag"]) and suite_matches("examples/rag/", ["examples/rag"])
    assert suite_matches("examples/rag/suite.yaml", ["rag"]) and not suite_matches(
        "examples/rag", ["examples"]
    )
