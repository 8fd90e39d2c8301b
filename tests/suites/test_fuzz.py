"""A seeded fuzz of suite files (tests/support/suite_fuzz.py): a few hundred mutated
copies of the retail suite and of a small suite with its own templates module go
through ``assay validate`` and, when it passes, ``assay run -k 1``. None may crash
(traceback), exit with an undocumented code, hang, or pass validation and then crash
the run. ``scripts/fuzz_suites.py`` runs thousands (docs/robustness.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.suite_fuzz import Result, fuzz, tally

pytestmark = pytest.mark.slow  # plain pytest leaves it out; pytest -m slow and CI run it

SEED = 20_000


def report(failed: list[Result]) -> str:
    parts = []
    for r in failed[:5]:
        step = r.run or r.validate
        parts.append(
            f"seed {r.case.seed} {r.case.base}: {r.outcome} {r.case.mutations}\n{step.output[-1500:]}"
        )
    return "\n\n".join(parts)


@pytest.mark.parametrize("base, n", [("small", 150), ("retail", 100)])
def test_fuzzed_suites_end_in_success_or_located_problems(base: str, n: int, tmp_path: Path) -> None:
    results = list(fuzz(n, [base], seed=SEED, workdir=tmp_path))
    failed = [r for r in results if r.failed]
    assert not failed, report(failed)
    outcomes = tally(results)
    assert sum(outcomes.values()) == n
    assert outcomes["problems"] >= n // 3  # the mutations do break suites...
    assert outcomes["run ok"] + outcomes["run problems"] >= 5  # ...and some still validate and run
    for r in results:  # bad input is reported as file:line problems, one per line
        if r.outcome == "problems":
            assert "problem(s)" in r.validate.output and "Traceback" not in r.validate.output


def test_the_same_seed_makes_the_same_cases() -> None:
    from tests.support.suite_fuzz import make_case

    assert make_case(7, "small")[0].mutations == make_case(7, "small")[0].mutations
    assert make_case(7, "small")[1] == make_case(7, "small")[1]
