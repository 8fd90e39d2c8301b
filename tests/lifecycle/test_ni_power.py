"""Sample sizes of the non-inferiority tests: at margin 0 they are the classic formulas
(statsmodels, Connor); with a margin the planned n gives the planned power when the
tests the gate uses are simulated (Farrington–Manning, Tango)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from assay.compare.planning import plan
from assay.errors import AssayError
from assay.stats import (
    noninferiority_paired,
    noninferiority_unpaired,
    power_noninferiority,
    power_noninferiority_paired,
    sample_size_mcnemar,
    sample_size_noninferiority,
    sample_size_noninferiority_paired,
)
from tests.support.cli import assay_main


@pytest.mark.parametrize(("p_ref", "p_new"), [(0.8, 0.85), (0.6, 0.7), (0.9, 0.93)])
def test_margin_zero_is_the_classic_one_sided_formula(p_ref: float, p_new: float) -> None:
    sp = pytest.importorskip("statsmodels.stats.proportion")
    n = sp.samplesize_proportions_2indep_onetail(p_new - p_ref, p_ref, 0.8, alpha=0.05, alternative="larger")
    assert sample_size_noninferiority(p_ref, p_new, 0.0) == int(np.ceil(n - 1e-9))
    psi = 0.2
    d = p_new - p_ref
    connor = sample_size_mcnemar(
        (psi + d) / 2, (psi - d) / 2, alpha=0.1, power=0.8
    )  # two-sided 0.1 = one-sided 0.05
    assert sample_size_noninferiority_paired(p_ref, p_new, 0.0, psi) == connor


def test_power_and_sample_size_agree() -> None:
    n = sample_size_noninferiority(0.85, 0.85, 0.05, power=0.9)
    assert power_noninferiority(0.85, 0.85, 0.05, n) >= 0.9 > power_noninferiority(0.85, 0.85, 0.05, n - 2)
    m = sample_size_noninferiority_paired(0.85, 0.85, 0.05, 0.1, power=0.9)
    assert (
        power_noninferiority_paired(0.85, 0.85, 0.05, 0.1, m)
        >= 0.9
        > power_noninferiority_paired(0.85, 0.85, 0.05, 0.1, m - 2)
    )
    with pytest.raises(ValueError, match="not above -margin"):
        sample_size_noninferiority(0.8, 0.7, 0.05)


def test_planned_n_gives_the_planned_power_in_simulation() -> None:
    rng = np.random.default_rng(0)
    sims = 3000
    p, margin = 0.8, 0.05
    n = sample_size_noninferiority(p, p, margin)
    x1 = rng.binomial(n, p, sims)
    x2 = rng.binomial(n, p, sims)
    hits = np.mean(
        [
            noninferiority_unpaired(int(a), n, int(b), n, margin, correction=False).p_value < 0.05
            for a, b in zip(x1, x2, strict=True)
        ]
    )
    assert abs(hits - 0.8) < 0.035
    psi = 0.12
    m = sample_size_noninferiority_paired(p, p, margin, psi)
    cells = rng.multinomial(m, [psi / 2, psi / 2, 1 - psi], sims)
    hits = np.mean([noninferiority_paired(int(c[0]), int(c[1]), m, margin).p_value < 0.05 for c in cells])
    assert abs(hits - 0.8) < 0.035
    # under H0 (worse by exactly the margin) the test rejects about alpha of the time
    q = p - margin
    x1 = rng.binomial(n, q, sims)
    x2 = rng.binomial(n, p, sims)
    size = np.mean(
        [
            noninferiority_unpaired(int(a), n, int(b), n, margin, correction=False).p_value < 0.05
            for a, b in zip(x1, x2, strict=True)
        ]
    )
    assert size < 0.07


def test_plan_command_for_a_guardrail() -> None:
    paired = plan(0.9, margin=0.05, paired=True, discordance=0.1)
    assert (
        paired.design == "noninferiority-paired"
        and paired.tasks_needed == sample_size_noninferiority_paired(0.9, 0.9, 0.05, 0.1)
    )
    unpaired = plan(0.9, margin=0.05, k=4, icc=0.5, suite_tasks=52)
    assert unpaired.trials_per_arm == sample_size_noninferiority(0.9, 0.9, 0.05)
    assert unpaired.tasks_needed == int(np.ceil(unpaired.trials_per_arm * 2.5 / 4 - 1e-9))
    assert any("power" in note for note in unpaired.notes)
    with pytest.raises(AssayError, match="loss beyond the margin"):
        plan(0.9, -0.06, margin=0.05)
    result = assay_main(
        "plan", "--baseline", "0.9", "--margin", "0.05", "--paired", "--discordance", "0.1", "--json"
    )
    doc = json.loads(result.stdout)
    assert (
        doc["design"] == "noninferiority-paired"
        and doc["margin"] == 0.05
        and doc["tasks_needed"] == paired.tasks_needed
    )
    text = " ".join(assay_main("plan", "--baseline", "0.9", "--margin", "0.05").stdout.split())
    assert "to show not worse than 90.0% by 5.0 pts" in text
