"""The box formulas: normalized badness, threshold loss and RMSLoss.

Every metric is first turned into a *normalized badness* where < 1 is inside the box,
1 is exactly at the threshold τ and > 1 is outside. A smooth penalty (squared softplus)
is near zero inside the box and grows roughly quadratically once outside. Per-trial
losses are summarised by RMSLoss, which rewards a low mean and a low spread.
"""

from __future__ import annotations

from typing import Literal, overload

import numpy as np
import numpy.typing as npt

Direction = Literal["lower", "higher"]
DIRECTION_ALIASES: dict[str, Direction] = {
    "lower": "lower",
    "lower_is_better": "lower",
    "higher": "higher",
    "higher_is_better": "higher",
}
FloatArray = npt.NDArray[np.float64]


def canonical_direction(direction: str) -> Direction:
    """``"lower"`` or ``"higher"`` (also accepts ``"lower_is_better"``/``"higher_is_better"``)."""
    try:
        return DIRECTION_ALIASES[direction]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown direction {direction!r}: use 'lower' (lower is better) or 'higher'"
        ) from None


@overload
def normalized_badness(x: float, tau: float, direction: str) -> float: ...
@overload
def normalized_badness(x: npt.ArrayLike, tau: float, direction: str) -> FloatArray | float: ...
def normalized_badness(x: npt.ArrayLike, tau: float, direction: str) -> FloatArray | float:
    """Scale a metric so that 1 is its threshold τ and larger is worse.

    - ``"lower"`` (lower is better: cost, latency, error rate): ``x / τ``.
    - ``"higher"`` (higher is better: accuracy, pass rate in [0, 1]): ``(1 - x) / (1 - τ)``.

    A cost of $0.15 against τ = $0.10 gives 1.5; an accuracy of 0.70 against τ = 0.80
    gives 0.30/0.20 = 1.5 as well: both are 50% beyond their limit. Scalars give floats,
    arrays give arrays.
    """
    d = canonical_direction(direction)
    tau = float(tau)
    if not np.isfinite(tau):
        raise ValueError(f"tau must be finite, got {tau}")
    arr = np.asarray(x, dtype=np.float64)
    if d == "lower":
        if tau <= 0:
            raise ValueError(f"tau must be > 0 for a lower-is-better metric, got {tau}")
        out = arr / tau
    else:
        if tau >= 1:
            raise ValueError(f"tau must be < 1 for a higher-is-better metric, got {tau}")
        out = (1.0 - arr) / (1.0 - tau)
    return float(out) if out.ndim == 0 else out


def softplus(z: npt.ArrayLike) -> FloatArray | float:
    """``log(1 + e^z)`` computed stably as ``logaddexp(0, z)`` (no overflow for large z)."""
    out = np.logaddexp(0.0, np.asarray(z, dtype=np.float64))
    return float(out) if out.ndim == 0 else out


@overload
def threshold_loss(x: float, k: float = 2.0) -> float: ...
@overload
def threshold_loss(x: npt.ArrayLike, k: float = 2.0) -> FloatArray | float: ...
def threshold_loss(x: npt.ArrayLike, k: float = 2.0) -> FloatArray | float:
    """Penalty of a normalized badness ``x``: ``softplus(k·(x - 1))²``.

    Smooth and differentiable; ≈ 0 well inside the box, ``(ln 2)² ≈ 0.48`` at the
    threshold, and ≈ ``(k·(x - 1))²`` far outside. The slope ``k`` sets how fast the
    penalty rises once the threshold is crossed (high for legal or privacy limits).
    Stable for any finite x: 1e6 gives a large finite value, -1e6 gives 0.
    """
    if not k > 0:
        raise ValueError(f"k must be positive, got {k}")
    z = float(k) * (np.asarray(x, dtype=np.float64) - 1.0)
    out = np.square(np.logaddexp(0.0, z))
    return float(out) if out.ndim == 0 else out


def rms_loss(losses: npt.ArrayLike) -> float:
    """RMSLoss over trials: ``sqrt(mean(y²))`` with ``y = log(1 + loss)``.

    Per-trial losses are right-skewed (roughly log-normal); ``log(1 + loss)`` makes them
    closer to normal, and the root mean square then satisfies
    ``RMS² = mean(y)² + var(y)`` (population variance): a configuration loses for a high
    typical loss *and* for a long tail. Two configurations with the same median are
    separated by their spread.
    """
    arr = np.asarray(losses, dtype=np.float64).reshape(-1)
    if arr.size == 0:
        raise ValueError("losses is empty; at least one trial is needed")
    if not np.all(np.isfinite(arr)):
        raise ValueError("losses contains NaN or infinite values")
    if np.any(arr < 0):
        raise ValueError("losses must be >= 0")
    y = np.log1p(arr)
    return float(np.sqrt(np.mean(y * y)))
