"""Errors of the chat layer and what the orchestrator does with them."""

from __future__ import annotations

from assay.errors import AssayError, HarnessError


class ModelUnavailable(HarnessError):
    """A model call failed for good: retries exhausted on 429/5xx/timeouts/connection
    errors, or the endpoint refused it. Never the agent's fault: the orchestrator ends the
    trial with termination ``harness_error``."""

    def __init__(
        self,
        message: str,
        *,
        model: str = "",
        attempts: int = 0,
        status_code: int | None = None,
    ):
        super().__init__(message)
        self.model = model
        self.attempts = attempts
        self.status_code = status_code


class ModelRequestRejected(ModelUnavailable):
    """The endpoint answered with a non-retryable error (400, 401, 404, ...); not retried.
    ``status_code`` tells which; a 400 may be a context-length overflow."""


class UnsupportedInput(ModelRequestRejected):
    """The provider's wire format cannot carry a part of the request (audio for the
    Anthropic Messages API, an image type it does not take, media on a non-user
    message). Raised before anything is sent; ``modality`` names what was refused."""

    def __init__(self, message: str, *, model: str = "", modality: str = ""):
        super().__init__(message, model=model)
        self.modality = modality


class BudgetExceeded(Exception):
    """A trial spent more tokens or money than its limit (termination ``budget``)."""

    def __init__(self, kind: str, limit: float, used: float):
        self.kind = kind
        self.limit = limit
        self.used = used
        unit = "USD" if kind == "cost" else "tokens"
        super().__init__(f"{kind} budget exceeded: used {used:g} {unit}, limit {limit:g} {unit}")


class CassetteMiss(AssayError):
    """Replay met a request that the cassette does not hold (the run differs from the
    recorded one): record the cassette again."""


class CassetteError(AssayError):
    """A cassette file that cannot be read."""
