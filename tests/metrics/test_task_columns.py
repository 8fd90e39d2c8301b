"""The task table's columns built with numpy equal the per-task Python they replace."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np

from assay.metrics.summary import _counts_by_task, reward_list


def test_reward_list_is_int_or_none_per_trial() -> None:
    values = reward_list(np.array([1.0, np.nan, 0.0, 1.0]))
    assert values == [1, None, 0, 1]
    assert [type(v) for v in values] == [int, type(None), int, int]
    assert reward_list(np.array([])) == []


def test_counts_by_task_equal_a_counter_per_task_keys_in_first_appearance_order() -> None:
    rng = random.Random(5)
    for _ in range(50):
        sizes = [rng.randint(0, 12) for _ in range(rng.randint(1, 30))]
        task = np.repeat(np.arange(len(sizes)), sizes)
        values = [rng.choice(["user_stop", "transfer", "harness_error", None]) for _ in range(task.size)]
        got = _counts_by_task(task, values, len(sizes))
        bounds = np.cumsum([0, *sizes]).tolist()
        want = [dict(Counter(values[bounds[t] : bounds[t + 1]])) for t in range(len(sizes))]
        assert got == want
        assert [list(d) for d in got] == [list(d) for d in want]  # same key order


def test_counts_by_task_of_many_or_other_values_equal_a_counter_per_task() -> None:
    """Beyond 64 distinct strings, or values that are not strings, the other coding."""
    rng = random.Random(7)
    for choices in ([f"v{i}" for i in range(100)], [1, 2.0, "x", None, (1, 2)]):
        sizes = [rng.randint(0, 40) for _ in range(25)]
        task = np.repeat(np.arange(len(sizes)), sizes)
        values = [rng.choice(choices) for _ in range(task.size)]
        got = _counts_by_task(task, values, len(sizes))
        bounds = np.cumsum([0, *sizes]).tolist()
        want = [dict(Counter(values[bounds[t] : bounds[t + 1]])) for t in range(len(sizes))]
        assert got == want and [list(d) for d in got] == [list(d) for d in want]
