"""Who a trial's end is charged to when a model endpoint is involved: the error category
of a failed model call, and the verdict on a time limit reached while one was in flight.

Model faults are never the agent's (docs/models.md, "Model faults"): a call that failed
for good, or a time limit that ran out while a call was requesting, retrying or
waiting, ends the trial as ``harness_error`` with root cause ``MODEL``.
"""

from __future__ import annotations

from ..core.results import Termination
from ..llm.deadline import TrialClock
from ..llm.errors import ModelRequestRejected, ModelUnavailable

#: Error categories of trials that ended because a model call failed (root cause MODEL).
MODEL_UNAVAILABLE = "model_unavailable"
MODEL_REJECTED = "model_rejected"
#: Statuses that reject one request, not the endpoint (a context too long, a bad field).
REQUEST_SPECIFIC = frozenset({400, 413, 422})


def model_category(exc: ModelUnavailable) -> str:
    """``model_rejected`` when the endpoint refused this one request (400, 413, 422),
    else ``model_unavailable`` (retries exhausted, no answer in time, key refused...)."""
    if isinstance(exc, ModelRequestRejected) and exc.status_code in REQUEST_SPECIFIC:
        return MODEL_REJECTED
    return MODEL_UNAVAILABLE


def time_limit_end(
    limit_s: float, clock: TrialClock | None
) -> tuple[Termination, str, str | None, str | None]:
    """(termination, error, root cause, category) of a trial its time limit ended: the
    agent's ``timeout``, unless a model call was in flight (then the model's)."""
    busy = clock.busy() if clock is not None else None
    if busy is None:
        return "timeout", f"trial exceeded {limit_s:g} s", None, None
    extra = f" (+{clock.extended_s:.3g} s lost to the model)" if clock and clock.extended_s else ""
    error = f"model unavailable: the trial's time limit ({limit_s:g} s{extra}) ran out waiting on the {busy}"
    return "harness_error", error, "MODEL", MODEL_UNAVAILABLE
