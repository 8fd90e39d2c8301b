"""Ratings from pairwise battles: Elo (online) and Bradley–Terry (maximum likelihood).

A battle is ``(model_a, model_b, winner)`` with ``winner`` in ``{"a", "b", "tie"}``. Ratings
are on the Elo scale: a gap of ``scale`` points means odds of ``base`` to 1, so with the
defaults a 200-point gap gives an expected win rate of about 0.76.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

WINNERS = ("a", "b", "tie")


def parse_battles(battles: Iterable[Sequence[object]]) -> list[tuple[str, str, str]]:
    """Validate battles into ``(model_a, model_b, winner)`` tuples of strings."""
    out: list[tuple[str, str, str]] = []
    for i, battle in enumerate(battles):
        if len(battle) != 3:
            raise ValueError(f"battle {i} must be (model_a, model_b, winner), got {battle!r}")
        a, b, w = (str(v) for v in battle)
        if w not in WINNERS:
            raise ValueError(f"battle {i}: winner must be 'a', 'b' or 'tie', got {w!r}")
        if a == b:
            raise ValueError(f"battle {i}: a model cannot battle itself ({a!r})")
        out.append((a, b, w))
    return out


def expected_win_rate(r_a: float, r_b: float, scale: float = 400, base: float = 10) -> float:
    """Expected score of A against B: ``1 / (1 + base^((r_b - r_a)/scale))`` (1200 vs 1000 →
    ≈ 0.76). A tie counts as half a win."""
    return 1.0 / (1.0 + base ** ((r_b - r_a) / scale))


def elo_online(
    battles: Iterable[Sequence[object]],
    k: float = 4,
    scale: float = 400,
    base: float = 10,
    init: float = 1000,
    *,
    start: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Classic online Elo: update both ratings after each battle, in the given order.

    ``r_a += k·(S_a - E_a)`` and ``r_b -= k·(S_a - E_a)`` with ``S_a`` = 1, 0.5 or 0 and
    ``E_a`` = :func:`expected_win_rate`. New models start at ``init``. The result depends
    on the order of battles and, with a small ``k``, on how many there were; prefer
    :func:`bradley_terry` for a leaderboard of models that do not change over time.
    ``start`` continues from earlier ratings (models not in it start at ``init``).
    """
    ratings: dict[str, float] = dict(start) if start is not None else {}
    for a, b, w in parse_battles(battles):
        ra = ratings.setdefault(a, float(init))
        rb = ratings.setdefault(b, float(init))
        score = 1.0 if w == "a" else (0.0 if w == "b" else 0.5)
        delta = k * (score - expected_win_rate(ra, rb, scale, base))
        ratings[a] = ra + delta
        ratings[b] = rb - delta
    return ratings


def win_counts(
    battles: Sequence[tuple[str, str, str]], models: Sequence[str] | None = None
) -> tuple[list[str], npt.NDArray[np.float64]]:
    """Sorted model names and ``w[i, j]`` = wins of i over j (a tie adds 0.5 to each side)."""
    names = sorted({m for a, b, _ in battles for m in (a, b)}) if models is None else list(models)
    index = {m: i for i, m in enumerate(names)}
    wins = np.zeros((len(names), len(names)))
    for a, b, w in battles:
        i, j = index[a], index[b]
        if w == "a":
            wins[i, j] += 1.0
        elif w == "b":
            wins[j, i] += 1.0
        else:
            wins[i, j] += 0.5
            wins[j, i] += 0.5
    return names, wins


def _reach(adj: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    reach = adj | np.eye(adj.shape[0], dtype=bool)
    for _ in range(max(1, math.ceil(math.log2(max(adj.shape[0], 2)))) + 1):
        reach = reach | ((reach.astype(np.int64) @ reach.astype(np.int64)) > 0)
    return reach


def _check_identifiable(names: list[str], wins: npt.NDArray[np.float64]) -> None:
    """ValueError unless the 'beat or tied' graph is strongly connected (MLE exists)."""
    played = (wins + wins.T) > 0
    if not np.all(_reach(played)[0]):
        alone = [names[i] for i in np.flatnonzero(~_reach(played)[0])]
        raise ValueError(
            "Bradley-Terry ratings are not identifiable: models "
            f"{alone} never played (directly or indirectly) against {names[0]!r}; "
            "rate each connected group separately"
        )
    reach = _reach(wins > 0)
    for i in range(len(names)):
        group = reach[:, i] & reach[i, :]
        # a group that reaches outside itself but is never reached back never lost outside
        outside_beats_group = np.any(wins[np.ix_(~group, group)] > 0)
        if not outside_beats_group and not np.all(group):
            members = [names[j] for j in np.flatnonzero(group)]
            raise ValueError(
                "Bradley-Terry ratings are not identifiable: "
                f"{members} never lost or tied against the other models, so their "
                "maximum-likelihood ratings are infinite; add battles or pass prior > 0"
            )


def bradley_terry(
    battles: Iterable[Sequence[object]],
    scale: float = 400,
    base: float = 10,
    init: float = 1000,
    *,
    prior: float = 0.0,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> dict[str, float]:
    """Bradley–Terry ratings by maximum likelihood, on the Elo scale, mean anchored at ``init``.

    ``P(i beats j) = 1 / (1 + exp(θ_j - θ_i))``; a tie counts as half a win to each side.
    The log-likelihood ``Σ w_ij·log σ(θ_i - θ_j)`` is maximised by Newton's method with
    a backtracking line search (it is concave, so this converges to the unique MLE when it
    exists). Ratings are ``init + scale·(θ_i - mean θ)/ln(base)``, so the mean rating is
    ``init``. Unlike :func:`elo_online` the result does not depend on battle order.

    The MLE exists only if every group of models has lost or tied at least once against
    the rest; otherwise a ValueError names the undefeated group. ``prior > 0`` adds a
    Gaussian penalty ``prior/2·Σθ²`` (natural-log units) that keeps ratings finite.
    """
    parsed = parse_battles(battles)
    if not parsed:
        raise ValueError("no battles given; at least one battle is needed")
    if prior < 0:
        raise ValueError("prior must be >= 0")
    names, wins = win_counts(parsed)
    if prior == 0.0:
        _check_identifiable(names, wins)
    theta = _fit_log_strengths(wins, prior, tol, max_iter)
    theta = theta - theta.mean()
    return {m: float(init + scale * t / math.log(base)) for m, t in zip(names, theta, strict=True)}


def _neg_loglik(theta: npt.NDArray[np.float64], wins: npt.NDArray[np.float64], prior: float) -> float:
    diff = theta[:, None] - theta[None, :]
    return float(np.sum(wins * np.logaddexp(0.0, -diff)) + 0.5 * prior * np.sum(theta**2))


def _fit_log_strengths(
    wins: npt.NDArray[np.float64], prior: float, tol: float, max_iter: int
) -> npt.NDArray[np.float64]:
    n = wins.shape[0]
    games = wins + wins.T
    theta = np.zeros(n)
    f = _neg_loglik(theta, wins, prior)
    for _ in range(max_iter):
        p = 0.5 * (1.0 + np.tanh((theta[:, None] - theta[None, :]) / 2.0))  # P(i beats j)
        grad = -(wins.sum(axis=1) - np.sum(games * p, axis=1)) + prior * theta
        weights = games * p * p.T
        hess = np.diag(weights.sum(axis=1)) - weights + prior * np.eye(n)
        # the likelihood is flat along the all-ones direction; pin it with a rank-one term
        step = np.linalg.solve(hess + np.ones((n, n)) / n, -grad)
        t = 1.0
        while True:
            candidate = theta + t * step
            f_new = _neg_loglik(candidate, wins, prior)
            if f_new <= f + 1e-4 * t * float(grad @ step) or t < 1e-10:
                break
            t /= 2.0
        theta, f = candidate, f_new
        if float(np.max(np.abs(t * step))) < tol:
            return theta
    raise RuntimeError(
        f"Bradley-Terry fit did not converge in {max_iter} Newton steps; raise max_iter or pass prior > 0"
    )
