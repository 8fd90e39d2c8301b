"""Argument checks and small numeric helpers shared by the statistics modules (private)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

_STD_NORMAL = NormalDist()


def as_float_array(values: npt.ArrayLike, name: str, *, allow_empty: bool = False) -> FloatArray:
    """``values`` as a 1-D float array; ValueError if empty (unless allowed) or not finite."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} is empty; at least one value is needed")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def check_count(value: int, name: str) -> int:
    """A non-negative integer count (bools and floats with integral values are refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer count, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return int(value)


def check_confidence(confidence: float) -> float:
    """A confidence level strictly between 0 and 1."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {confidence}")
    return float(confidence)


def check_alpha(alpha: float, name: str = "alpha") -> float:
    """A probability strictly between 0 and 1 (alpha, beta, power)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"{name} must be between 0 and 1 (exclusive), got {alpha}")
    return float(alpha)


def check_probability(p: float, name: str) -> float:
    """A probability in [0, 1]."""
    if not (0.0 <= p <= 1.0) or math.isnan(p):
        raise ValueError(f"{name} must be a probability in [0, 1], got {p}")
    return float(p)


def z_quantile(q: float) -> float:
    """The standard normal quantile at ``q``."""
    return _STD_NORMAL.inv_cdf(q)


def z_two_sided(confidence: float) -> float:
    """The normal critical value of a two-sided interval with this confidence (1.96 at 0.95)."""
    return _STD_NORMAL.inv_cdf(1.0 - (1.0 - check_confidence(confidence)) / 2.0)


def normal_cdf(x: float) -> float:
    """The standard normal CDF."""
    return _STD_NORMAL.cdf(x)


def normal_sf(x: float) -> float:
    """The standard normal survival function, accurate in the upper tail."""
    return 0.5 * math.erfc(x / math.sqrt(2.0))


def rng_from(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A numpy Generator: the one given, or a fresh one seeded with ``seed``.

    ``None`` is refused on purpose: results must be reproducible, so callers pass a seed.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        raise ValueError("a seed (int) or numpy Generator is required for reproducible results")
    return np.random.default_rng(seed)
