"""The probe's ceilings: a request count and a spend, checked before every request."""

from __future__ import annotations

from assay.core.hashing import canonical_json

from ..pricing import Pricing
from ..types import Usage


def worst_case_cost(pricing: Pricing | None, request: object, max_tokens: int) -> float | None:
    """The most one request can cost: every byte of its JSON body counted as a prompt
    token (a token is at least one byte) plus a template allowance, and ``max_tokens``
    of output. None for an unpriced model."""
    if pricing is None:
        return None
    prompt = len(canonical_json(request).encode()) + 32
    return pricing.cost(Usage(prompt, max_tokens))


class Guard:
    """Admits requests while both ceilings hold. A request reserves its worst-case cost;
    when it ends, :meth:`settle` replaces the reservation by the real cost (or keeps the
    worst case when the answer carried no usage). Known spend therefore never passes
    ``max_cost_usd``. Single event loop: no await between check and update."""

    def __init__(self, max_requests: int, max_cost_usd: float, per_request: float | None):
        self.max_requests = max_requests
        self.max_cost_usd = max_cost_usd
        self.per_request = per_request
        self.sent = 0
        self.spent = 0.0
        self.charged_unknown = 0.0
        self.reserved = 0.0
        self.stopped_by: str | None = None
        self.message: str | None = None

    def admit(self) -> bool:
        if self.stopped_by is not None:
            return False
        if self.sent >= self.max_requests:
            self.stop(
                "request_ceiling",
                f"request ceiling reached: {self.sent} requests sent (raise --max-requests to go further)",
            )
            return False
        if self.per_request is not None:
            committed = self.spent + self.charged_unknown + self.reserved
            if committed + self.per_request > self.max_cost_usd:
                self.stop(
                    "spend_ceiling",
                    f"spend ceiling reached: ${committed:.4f} committed, the next request could "
                    f"cost up to ${self.per_request:.4f} and the ceiling is ${self.max_cost_usd:.4f} "
                    "(raise --max-cost-usd to go further)",
                )
                return False
        self.sent += 1
        if self.per_request is not None:
            self.reserved += self.per_request
        return True

    def settle(self, cost: float | None, *, answered: bool) -> None:
        """End a request: its real cost, or None (no usage: the worst case stays charged;
        no answer at all, e.g. a 429: nothing was spent)."""
        if self.per_request is None:
            return
        self.reserved -= self.per_request
        if cost is not None:
            self.spent += cost
        elif answered:
            self.charged_unknown += self.per_request

    def stop(self, reason: str, message: str) -> None:
        if self.stopped_by is None:
            self.stopped_by = reason
            self.message = message

    @property
    def stopped(self) -> bool:
        return self.stopped_by is not None
