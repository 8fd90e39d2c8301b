"""Checking a model spec before anything runs: its options, its credentials and, with a
short probe, that its endpoint answers.

A run calls this for every model it will use (agent, user, judges), so a missing key or
an endpoint that is not there fails at the start with the real cause, not trial by trial.
"""

from __future__ import annotations

import inspect
from typing import Any

from assay.errors import SpecError

from .errors import EndpointUnreachable, MalformedResponse
from .retry import classify
from .spec import get_model

#: Options that open files or carry objects; the check needs none of them.
_LEFT_OUT = ("cache", "cache_path", "cassette")
PROBE_TIMEOUT_S = 5.0


def endpoint_of(spec: str, options: dict[str, Any]) -> tuple[str, str]:
    """(provider, endpoint URL) of a model spec with its options (no request made)."""
    model = get_model(spec, **{k: v for k, v in options.items() if k not in _LEFT_OUT})
    return model.provider.name, model.provider.endpoint


async def check_model(
    spec: str, options: dict[str, Any], *, probe: bool = True, timeout_s: float | None = None
) -> None:
    """Raise :class:`SpecError` (exit 2) for bad options, a missing key or a key the
    endpoint refuses, and :class:`EndpointUnreachable` (exit 3) when the endpoint cannot
    be reached or does not answer within ``timeout_s`` (default: 5 s, or the model's
    ``timeout_s`` option when smaller). ``probe=False`` skips the request."""
    model = get_model(spec, **{k: v for k, v in options.items() if k not in _LEFT_OUT})
    provider = model.provider
    key = getattr(provider, "_key", None)
    if provider.name in ("openai", "anthropic") and callable(key):
        key()  # SpecError naming the variable to set when there is no key
    if not probe or provider.name not in ("openai", "anthropic"):
        return  # litellm reads its own settings per provider: nothing generic to probe
    limit = min(PROBE_TIMEOUT_S, model.request_timeout_s or PROBE_TIMEOUT_S)
    if timeout_s is not None:
        limit = timeout_s
    try:
        await _list_models(provider, limit)
    finally:
        await model.aclose()


async def _list_models(provider: Any, timeout_s: float) -> None:
    """``GET /models``: any HTTP answer but 401/403 shows the endpoint is there."""
    client = provider._clients.get()
    try:
        result = client.models.list(timeout=timeout_s)
        if inspect.isawaitable(result):
            await result
    except Exception as exc:
        if isinstance(exc, (ValueError, MalformedResponse)):  # it answered, if not with JSON
            return
        failure = classify(exc)
        if failure is None:
            raise
        where = f"{provider.name}:{provider.model} at {provider.endpoint}"
        if failure.status_code in (401, 403):
            raise SpecError(f"{where}: the endpoint refused the API key ({failure.message})") from None
        if failure.status_code is None:
            what = f"no answer within {timeout_s:g} s" if failure.timed_out else "cannot be reached"
            raise EndpointUnreachable(
                f"{where}: {what} ({failure.message}); is the server running? "
                "(--no-check-models skips this check)"
            ) from None
