"""Elo and Bradley–Terry; BT cross-checked against choix."""

from __future__ import annotations

import math

import choix
import numpy as np
import pytest

from assay.stats import bradley_terry, elo_online, expected_win_rate


def _simulate(n_models: int, n_battles: int, seed: int, tie_rate: float = 0.1) -> list:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, n_models)
    names = [f"m{i}" for i in range(n_models)]
    battles = []
    for _ in range(n_battles):
        i, j = rng.choice(n_models, 2, replace=False)
        p = 1 / (1 + np.exp(-(strength[i] - strength[j])))
        u = rng.random()
        winner = "tie" if u < tie_rate else ("a" if u < tie_rate + (1 - tie_rate) * p else "b")
        battles.append((names[i], names[j], winner))
    return battles


def _choix_ratings(
    battles: list, scale: float = 400, base: float = 10, init: float = 1000
) -> dict[str, float]:
    names = sorted({m for a, b, _ in battles for m in (a, b)})
    index = {m: i for i, m in enumerate(names)}
    data = []
    # ties as half a win each way: double every battle so counts stay integers
    for a, b, w in battles:
        ia, ib = index[a], index[b]
        if w == "a":
            data += [(ia, ib), (ia, ib)]
        elif w == "b":
            data += [(ib, ia), (ib, ia)]
        else:
            data += [(ia, ib), (ib, ia)]
    theta = choix.ilsr_pairwise(len(names), data, alpha=0.0, tol=1e-14, max_iter=100_000)
    theta = theta - theta.mean()
    return {m: init + scale * theta[i] / math.log(base) for m, i in index.items()}


@pytest.mark.parametrize(("n_models", "n_battles", "seed"), [(3, 60, 0), (5, 500, 1), (8, 2000, 2)])
def test_bradley_terry_matches_choix(n_models: int, n_battles: int, seed: int) -> None:
    battles = _simulate(n_models, n_battles, seed)
    ours = bradley_terry(battles)
    ref = _choix_ratings(battles)
    assert set(ours) == set(ref)
    for model in ours:
        assert ours[model] == pytest.approx(ref[model], abs=1e-4)
    assert np.mean(list(ours.values())) == pytest.approx(1000.0)


def test_bradley_terry_scale_base_and_anchor() -> None:
    battles = _simulate(4, 300, 3)
    elo = bradley_terry(battles)
    natural = bradley_terry(battles, scale=1.0, base=math.e, init=0.0)
    for model in elo:
        assert elo[model] - 1000 == pytest.approx(natural[model] * 400 / math.log(10))


def test_bradley_terry_hand_value() -> None:
    # A beats B 3 times out of 4: MLE P(A beats B) = 3/4 → gap = 400·log10(3) = 190.85
    ratings = bradley_terry([("A", "B", "a")] * 3 + [("A", "B", "b")])
    assert ratings["A"] - ratings["B"] == pytest.approx(400 * math.log10(3))
    assert ratings["A"] + ratings["B"] == pytest.approx(2000)
    # two ties and one win each way is an even record
    even = bradley_terry([("A", "B", "tie"), ("A", "B", "tie"), ("A", "B", "a"), ("B", "A", "a")])
    assert even["A"] == pytest.approx(1000) and even["B"] == pytest.approx(1000)
    # ties count as half wins: 1 win + 2 ties of 3 games = 2/3 → gap 400·log10(2)
    half = bradley_terry([("A", "B", "a"), ("A", "B", "tie"), ("B", "A", "tie")])
    assert half["A"] - half["B"] == pytest.approx(400 * math.log10(2))


def test_bradley_terry_is_order_independent_unlike_elo() -> None:
    battles = _simulate(4, 200, 4)
    shuffled = list(reversed(battles))
    bt1, bt2 = bradley_terry(battles), bradley_terry(shuffled)
    for model in bt1:
        assert bt1[model] == pytest.approx(bt2[model], abs=1e-8)
    e1, e2 = elo_online(battles), elo_online(shuffled)
    assert any(abs(e1[m] - e2[m]) > 1e-6 for m in e1)


def test_bradley_terry_rejects_undefeated_and_disconnected() -> None:
    with pytest.raises(ValueError, match=r"\['A'\] never lost"):
        bradley_terry([("A", "B", "a"), ("B", "C", "a"), ("C", "B", "a")])
    with pytest.raises(ValueError, match="never played"):
        bradley_terry([("A", "B", "a"), ("B", "A", "a"), ("C", "D", "a"), ("D", "C", "a")])
    with pytest.raises(ValueError, match="no battles"):
        bradley_terry([])
    with pytest.raises(ValueError, match="winner"):
        bradley_terry([("A", "B", "draw")])
    with pytest.raises(ValueError, match="itself"):
        bradley_terry([("A", "A", "a")])


def test_bradley_terry_prior_keeps_undefeated_finite() -> None:
    ratings = bradley_terry([("A", "B", "a")] * 5, prior=0.5)
    assert math.isfinite(ratings["A"]) and ratings["A"] > ratings["B"]
    # the prior shrinks gaps towards zero
    battles = [("A", "B", "a")] * 3 + [("A", "B", "b")]
    assert (
        bradley_terry(battles, prior=1.0)["A"]
        < bradley_terry(battles, prior=0.1)["A"]
        < bradley_terry(battles)["A"]
    )


def test_expected_win_rate() -> None:
    # 1 / (1 + 10^(-200/400)) = 0.7597
    assert expected_win_rate(1200, 1000) == pytest.approx(1 / (1 + 10**-0.5))
    assert round(expected_win_rate(1200, 1000), 2) == 0.76
    assert expected_win_rate(1000, 1000) == 0.5
    assert expected_win_rate(1000, 1200) == pytest.approx(1 - expected_win_rate(1200, 1000))


def test_elo_online_hand_values() -> None:
    # first battle between new models: E = .5, A wins: ±k·.5 = ±2
    ratings = elo_online([("A", "B", "a")])
    assert ratings == {"A": 1002.0, "B": 998.0}
    # then a tie: E_A = 1/(1+10^(-4/400)) = .50576; Δ = 4·(.5 - .50576) = -.02303
    ratings = elo_online([("A", "B", "a"), ("B", "A", "tie")])
    e_a = 1 / (1 + 10 ** (-4 / 400))
    assert ratings["A"] == pytest.approx(1002.0 + 4 * (0.5 - e_a))
    assert sum(ratings.values()) == pytest.approx(2000.0)  # zero-sum
    assert elo_online([]) == {}
    continued = elo_online([("A", "C", "b")], start={"A": 1100.0})
    assert continued["C"] > 1000.0 and continued["A"] < 1100.0


def test_elo_converges_towards_bt_with_many_battles() -> None:
    battles = _simulate(3, 3000, 5, tie_rate=0.0)
    bt = bradley_terry(battles)
    elo = elo_online(battles, k=2)
    order_bt = sorted(bt, key=bt.__getitem__)
    order_elo = sorted(elo, key=elo.__getitem__)
    assert order_bt == order_elo
