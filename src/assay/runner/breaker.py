"""The run's circuit breaker: a model endpoint that stays down stops the run.

Without it, every remaining trial would spend the whole retry budget on a dead endpoint
and end as a harness error. With it, ``after`` trials in a row that ended because a
model call failed (root cause MODEL, endpoint-wide: not a request the endpoint refused
on its own merits) stop the run: the trials not run stay missing, the run is marked
interrupted and ``assay run --resume RUN_ID`` continues it once the endpoint is back.
"""

from __future__ import annotations

from ..core.results import TrialResult
from ..errors import HarnessError
from .attribution import MODEL_REJECTED


class ModelEndpointDown(HarnessError):
    """The run stopped because its model endpoint stayed down (exit code 3)."""

    root_cause = "MODEL"


class Breaker:
    """Counts trials in a row that ended on a model failure; :meth:`see` raises
    :class:`ModelEndpointDown` when there are ``after`` of them (0 never trips).
    A trial that got through its model calls resets the count; one whose request the
    endpoint rejected (400, 413, 422) neither counts nor resets."""

    def __init__(self, after: int, run_id: str):
        self.after = after
        self.run_id = run_id
        self.in_a_row = 0
        self.last_error: str | None = None

    def see(self, result: TrialResult) -> None:
        if result.root_cause != "MODEL" or result.termination != "harness_error":
            self.in_a_row = 0
            return
        if result.error_category == MODEL_REJECTED:
            return
        self.in_a_row += 1
        self.last_error = result.outcome.error if result.outcome is not None else None
        if self.after and self.in_a_row >= self.after:
            raise ModelEndpointDown(
                f"the model endpoint failed in {self.in_a_row} trials in a row, so the run stopped "
                f"instead of spending the retry budget on every trial; last error: {self.last_error}. "
                f"Run {self.run_id} is marked interrupted: resume it once the endpoint is back with "
                f"`assay run --resume {self.run_id}`"
            )
