"""p-value adjustment against statsmodels.multipletests; family-wise error."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from assay.stats import adjust_pvalues, familywise_error_rate

P_SETS = [
    [0.01, 0.04, 0.03, 0.2, 0.5, 0.001],
    [0.05],
    [0.02, 0.02, 0.02, 0.9],
    [0.0, 1.0, 0.5],
    list(np.random.default_rng(0).uniform(size=40)),
]


@pytest.mark.parametrize("p_values", P_SETS)
@pytest.mark.parametrize(
    ("ours", "theirs"),
    [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh"), ("fdr_bh", "fdr_bh")],
)
def test_matches_statsmodels(p_values: list[float], ours: str, theirs: str) -> None:
    expected = multipletests(p_values, method=theirs)[1]
    assert adjust_pvalues(p_values, ours) == pytest.approx(list(expected), abs=1e-14)


def test_holm_by_hand() -> None:
    # sorted .01 .02 .04 with m = 3: 3·.01 = .03, 2·.02 = .04, 1·.04 = .04 (monotone)
    assert adjust_pvalues([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])


def test_empty_and_errors() -> None:
    assert adjust_pvalues([]) == []
    with pytest.raises(ValueError, match="method"):
        adjust_pvalues([0.1], "sidak")
    with pytest.raises(ValueError, match="probabilities"):
        adjust_pvalues([0.1, 1.2])


def test_familywise_error_seed_number() -> None:
    # seed: six comparisons at .05 → 1 - .95^6 ≈ 26%
    assert familywise_error_rate(0.05, 6) == pytest.approx(1 - 0.95**6)
    assert round(familywise_error_rate(0.05, 6), 2) == 0.26
    assert familywise_error_rate(0.05, 1) == pytest.approx(0.05)
    assert familywise_error_rate(0.05, 0) == 0.0
    with pytest.raises(ValueError):
        familywise_error_rate(0.05, -1)
