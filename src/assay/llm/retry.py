"""Which failures are retried, and how long to wait: backoff with jitter, Retry-After."""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import MalformedResponse

RETRYABLE_STATUS = frozenset({408, 409, 429})
# Exception class names (anywhere in the MRO) that mean "the request did not get through".
_TRANSIENT_NAMES = frozenset(
    {
        "APITimeoutError",
        "APIConnectionError",
        "Timeout",
        "TimeoutException",
        "TransportError",
        "NetworkError",
        "RemoteProtocolError",
        "ServiceUnavailableError",
        "InternalServerError",
        "RateLimitError",
        "OverloadedError",
    }
)
_SDK_MODULES = ("openai", "anthropic", "litellm", "httpx", "httpx2", "httpcore", "httpcore2")


@dataclass(frozen=True, slots=True)
class Failure:
    """What a provider exception means for the retry loop."""

    retryable: bool
    status_code: int | None
    retry_after: float | None
    message: str
    timed_out: bool = False
    """The request got no answer within its timeout."""


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or HTTP date)."""
    if not headers:
        return None
    get = headers.get
    ms = get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def classify(exc: BaseException) -> Failure | None:
    """A :class:`Failure` for errors of the SDKs / transport, None for anything else
    (a bug, which must propagate as is)."""
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    retry_after = parse_retry_after(headers) if headers is not None else None
    should = headers.get("x-should-retry") if headers is not None else None
    names = {k.__name__ for k in type(exc).__mro__}
    module = type(exc).__module__.split(".")[0]
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, MalformedResponse):
        return Failure(True, None, None, f"malformed answer: {exc}")
    if isinstance(exc, json.JSONDecodeError):  # an HTTP 200 whose body is not JSON
        return Failure(True, None, None, f"malformed answer: the body is not valid JSON ({exc})")
    if status is not None:
        retryable = status in RETRYABLE_STATUS or status >= 500
        if should in ("true", "false"):
            retryable = should == "true"
        return Failure(retryable, status, retry_after, message)
    if names & _TRANSIENT_NAMES or isinstance(exc, (ConnectionError, TimeoutError)):
        timed_out = isinstance(exc, TimeoutError) or any("Timeout" in n for n in names)
        return Failure(True, None, retry_after, message, timed_out)
    if module in _SDK_MODULES:
        return Failure(False, None, None, message)
    return None


@dataclass
class RetryPolicy:
    """Bounded retries with exponential backoff and jitter.

    Wait before retry n (0-based): ``Retry-After`` when the server sent one (capped at
    ``max_retry_after_s``), else ``d/2 + U(0, d/2)`` with ``d = min(max_backoff_s,
    base_backoff_s * 2**n)``. ``rng`` and ``sleep`` are injectable for tests."""

    max_retries: int = 6
    base_backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0
    rng: random.Random = field(default_factory=random.Random)
    sleep: Any = asyncio.sleep

    def delay(self, retry_index: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_retry_after_s)
        d = min(self.max_backoff_s, self.base_backoff_s * (2**retry_index))
        return d / 2 + self.rng.uniform(0, d / 2)
