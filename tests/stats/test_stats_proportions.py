"""Differences of rates with intervals; non-inferiority tests."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from statsmodels.stats import proportion as smp
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from assay.stats import (
    diff_proportions_paired,
    diff_proportions_unpaired,
    noninferiority_paired,
    noninferiority_unpaired,
    paired_counts,
)
from assay.stats.proportions import _restricted_mle_unpaired

UNPAIRED = [(30, 50, 35, 50), (45, 50, 48, 50), (0, 20, 3, 20), (20, 20, 19, 20), (5, 40, 9, 30)]


@pytest.mark.parametrize("counts", UNPAIRED)
@pytest.mark.parametrize(("ours", "theirs"), [("newcombe", "newcomb"), ("wald", "wald")])
def test_unpaired_interval_matches_statsmodels(
    counts: tuple[int, int, int, int], ours: str, theirs: str
) -> None:
    ci = diff_proportions_unpaired(*counts, method=ours)  # type: ignore[arg-type]
    low, high = confint_proportions_2indep(*counts, method=theirs)
    assert ci.estimate == pytest.approx(counts[0] / counts[1] - counts[2] / counts[3])
    assert ci.low == pytest.approx(low, abs=1e-12)
    assert ci.high == pytest.approx(high, abs=1e-12)


def _newcombe_paired_reference(n11: int, n10: int, n01: int, n00: int) -> tuple[float, float]:
    """Transliteration of R contingencytables::Newcombe_square_and_add_CI_paired_2x2,
    with statsmodels' Wilson intervals."""
    n = n11 + n10 + n01 + n00
    r1, r0, c1, c0 = n11 + n10, n01 + n00, n11 + n01, n10 + n00
    p1, p2 = r1 / n, c1 / n
    l1, u1 = proportion_confint(r1, n, method="wilson")
    l2, u2 = proportion_confint(c1, n, method="wilson")
    if 0 in (r1, r0, c1, c0):
        psi = 0.0
    else:
        a = n11 * n00 - n10 * n01
        psi = (a - n / 2) if a > n / 2 else (0.0 if a >= 0 else a)
        psi /= math.sqrt(r1 * r0 * c1 * c0)
    est = p1 - p2
    low = est - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * psi * (p1 - l1) * (u2 - p2))
    high = est + math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * psi * (p2 - l2) * (u1 - p1))
    return low, high


@pytest.mark.parametrize(
    "table", [(14, 5, 0, 22), (1, 1, 7, 12), (59, 6, 16, 80), (0, 3, 1, 10), (30, 0, 0, 10)]
)
def test_paired_newcombe_matches_reference(table: tuple[int, int, int, int]) -> None:
    ci = diff_proportions_paired(*table)
    low, high = _newcombe_paired_reference(*table)
    assert ci.low == pytest.approx(low, abs=1e-12)
    assert ci.high == pytest.approx(high, abs=1e-12)


def test_paired_newcombe_pinned_example() -> None:
    # the data of Altman et al. (2000) Table 6.2: 14 both, 5 only first, 0 only second,
    # 22 neither; values from the formula (and the R transliteration above)
    ci = diff_proportions_paired(14, 5, 0, 22)
    assert ci.estimate == pytest.approx(5 / 41)
    assert (round(ci.low, 3), round(ci.high, 3)) == (0.011, 0.226)


def test_paired_wald_hand_value() -> None:
    # n10=10, n01=5, n=100: d=.05, SE = sqrt(15 - 25/100)/100 = .03841
    ci = diff_proportions_paired(40, 10, 5, 45, method="wald")
    se = math.sqrt(15 - 0.25) / 100
    assert ci.low == pytest.approx(0.05 - 1.959963984540054 * se)
    assert ci.high == pytest.approx(0.05 + 1.959963984540054 * se)


def test_paired_newcombe_coverage() -> None:
    rng = np.random.default_rng(0)
    probs = np.array([0.55, 0.15, 0.05, 0.25])  # n11, n10, n01, n00 → true diff 0.10
    covered = 0
    runs = 1000
    for _ in range(runs):
        table = rng.multinomial(60, probs)
        n11, n10, n01, n00 = (int(v) for v in table)
        ci = diff_proportions_paired(n11, n10, n01, n00)
        covered += ci.low <= 0.10 <= ci.high
    assert covered / runs >= 0.92


def test_paired_counts() -> None:
    assert paired_counts([1, 1, 0, 0, 1], [1, 0, 1, 0, 0]) == (1, 2, 1, 1)
    assert paired_counts([True, False], [True, True]) == (1, 0, 1, 0)
    with pytest.raises(ValueError, match="0/1"):
        paired_counts([2, 1], [1, 1])


def test_difference_errors() -> None:
    with pytest.raises(ValueError, match="empty"):
        diff_proportions_paired(0, 0, 0, 0)
    with pytest.raises(ValueError, match="positive"):
        diff_proportions_unpaired(0, 0, 1, 2)
    with pytest.raises(ValueError, match="method"):
        diff_proportions_unpaired(1, 2, 1, 2, method="exact")  # type: ignore[arg-type]


@pytest.mark.parametrize("counts", UNPAIRED)
@pytest.mark.parametrize("margin", [0.05, 0.1, 0.2])
def test_restricted_mle_maximises_the_constrained_likelihood(
    counts: tuple[int, int, int, int], margin: float
) -> None:
    x1, n1, x2, n2 = counts
    d = -margin

    def nll(p2: float) -> float:
        p1 = p2 + d
        eps = 1e-300
        return -(
            x1 * math.log(max(p1, eps))
            + (n1 - x1) * math.log(max(1 - p1, eps))
            + x2 * math.log(max(p2, eps))
            + (n2 - x2) * math.log(max(1 - p2, eps))
        )

    ref = minimize_scalar(
        nll, bounds=(max(0, -d), min(1, 1 - d)), method="bounded", options={"xatol": 1e-12}
    ).x
    r1, r2 = _restricted_mle_unpaired(x1, n1, x2, n2, d)
    assert r2 == pytest.approx(ref, abs=1e-6)
    assert r1 - r2 == pytest.approx(d)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # statsmodels divides by zero at 100%
@pytest.mark.parametrize("counts", UNPAIRED)
def test_noninferiority_wald_matches_statsmodels(counts: tuple[int, int, int, int]) -> None:
    ours = noninferiority_unpaired(*counts, margin=0.1, method="wald")
    ref = smp.test_proportions_2indep(*counts, value=-0.1, method="wald", alternative="larger")
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("counts", UNPAIRED[:2] + UNPAIRED[3:])
@pytest.mark.parametrize("correction", [True, False])
def test_noninferiority_score_at_zero_margin_matches_statsmodels(
    counts: tuple[int, int, int, int], correction: bool
) -> None:
    ours = noninferiority_unpaired(*counts, margin=0.0, correction=correction)
    ref = smp.test_proportions_2indep(
        *counts, value=0, method="score", alternative="larger", correction=correction
    )
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10)


def test_noninferiority_score_uses_farrington_manning_variance() -> None:
    # statsmodels' formula with the (correct) restricted MLE plugged in
    x1, n1, x2, n2, margin = 30, 50, 35, 50, 0.1
    # 0.6 - 0.7 = -0.1 sits exactly on the margin: restricted MLE = observed, z = 0
    result = noninferiority_unpaired(x1, n1, x2, n2, margin, correction=False)
    assert result.statistic == pytest.approx(0.0, abs=1e-9)
    assert result.p_value == pytest.approx(0.5)
    x1, n1, x2, n2 = 45, 50, 44, 50
    r1, r2 = _restricted_mle_unpaired(x1, n1, x2, n2, -margin)
    var = r1 * (1 - r1) / n1 + r2 * (1 - r2) / n2
    z = (x1 / n1 - x2 / n2 + margin) / math.sqrt(var)
    fm = noninferiority_unpaired(x1, n1, x2, n2, margin, correction=False)
    mn = noninferiority_unpaired(x1, n1, x2, n2, margin, correction=True)
    assert fm.statistic == pytest.approx(z)
    assert mn.statistic == pytest.approx(z / math.sqrt(100 / 99))
    assert fm.p_value < 0.05  # 0.90 vs 0.88: not worse by 10 points


def test_noninferiority_unpaired_type_one_error() -> None:
    rng = np.random.default_rng(1)
    runs, n = 2000, 150
    p2 = 0.7
    p1 = p2 - 0.1  # exactly on the margin: H0 true
    x1 = rng.binomial(n, p1, size=runs)
    x2 = rng.binomial(n, p2, size=runs)
    rejections = sum(
        noninferiority_unpaired(int(a), n, int(b), n, 0.1).p_value <= 0.05
        for a, b in zip(x1, x2, strict=True)
    )
    assert rejections / runs <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)


def test_noninferiority_paired_reduces_to_mcnemar_z_at_zero_margin() -> None:
    result = noninferiority_paired(10, 5, 100, 0.0)
    assert result.statistic == pytest.approx((10 - 5) / math.sqrt(15))


@pytest.mark.parametrize(
    ("n10", "n01", "n", "margin"),
    [(10, 5, 100, 0.05), (3, 12, 60, 0.1), (20, 2, 50, 0.2), (0, 7, 30, 0.05)],
)
def test_noninferiority_paired_restricted_mle(n10: int, n01: int, n: int, margin: float) -> None:
    d = -margin

    def nll(q: float) -> float:
        eps = 1e-300
        return -(
            n10 * math.log(max(q + d, eps))
            + n01 * math.log(max(q, eps))
            + (n - n10 - n01) * math.log(max(1 - 2 * q - d, eps))
        )

    q = minimize_scalar(nll, bounds=(-d, (1 - d) / 2), method="bounded", options={"xatol": 1e-13}).x
    z = (n10 - n01 - n * d) / math.sqrt(n * (2 * q + d - d * d))
    assert noninferiority_paired(n10, n01, n, margin).statistic == pytest.approx(z, rel=1e-6)


def test_noninferiority_paired_type_one_error() -> None:
    rng = np.random.default_rng(2)
    runs, n = 2000, 200
    probs = [0.6, 0.05, 0.15, 0.2]  # p_cand - p_base = 0.05 - 0.15 = -0.10 = -margin
    rejections = 0
    for _ in range(runs):
        _, n10, n01, _ = rng.multinomial(n, probs)
        rejections += noninferiority_paired(int(n10), int(n01), n, 0.1).p_value <= 0.05
    assert rejections / runs <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)


def test_noninferiority_errors() -> None:
    with pytest.raises(ValueError, match="margin"):
        noninferiority_unpaired(1, 2, 1, 2, margin=-0.1)
    with pytest.raises(ValueError, match="n >= n10"):
        noninferiority_paired(5, 6, 10, 0.1)
    with pytest.raises(ValueError, match="method"):
        noninferiority_unpaired(1, 2, 1, 2, 0.1, method="exact")  # type: ignore[arg-type]
