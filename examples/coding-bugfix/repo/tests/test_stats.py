import pytest

from textstats import mean, median, mode


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_median_odd():
    assert median([3, 1, 2]) == 2


def test_median_single():
    assert median([7]) == 7


def test_median_even():
    assert median([1, 2, 3, 4]) == 2.5


def test_median_two():
    assert median([10, 20]) == 15


def test_median_empty():
    with pytest.raises(ValueError):
        median([])


def test_mode_tie_takes_smallest():
    assert mode([3, 1, 3, 1, 2]) == 1
