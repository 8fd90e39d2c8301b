"""The ``ChatModel`` protocol and ``get_model(spec, **options)``."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from assay.core.messages import Message, ToolSpec
from assay.errors import SpecError

from .cache import ResponseCache, open_cache
from .limits import LimitSettings
from .model import LLMModel
from .pricing import Pricing, PricingTable
from .retry import RetryPolicy
from .types import Completion, GenerateConfig

PROVIDERS = ("openai", "anthropic", "litellm")


@runtime_checkable
class ChatModel(Protocol):
    """Anything that answers a conversation: ``await model.complete(messages, tools,
    config)`` → :class:`Completion` (text and/or tool calls, usage, latency, cost)."""

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], config: GenerateConfig
    ) -> Completion: ...


_OPTIONS = {
    "base_url": "endpoint URL (else $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL)",
    "api_key": "API key (else $OPENAI_API_KEY / $ANTHROPIC_API_KEY)",
    "cache": "False (default), True (default path), a path or a ResponseCache",
    "cache_path": "path of the SQLite cache file (turns the cache on)",
    "cassette": "a Cassette (record/replay), else the one installed by use_cassette()",
    "pricing": "a Pricing, a PricingTable, or the path of a pricing YAML file",
    "role": "meter role for every call (else the one installed by use_meter())",
    "max_concurrency": "requests in flight to this endpoint",
    "rpm": "requests per minute",
    "tpm": "tokens per minute",
    "max_retries": "retries after the first attempt (default 6)",
    "backoff_base_s": "first backoff (default 0.5 s)",
    "backoff_max_s": "largest backoff (default 30 s)",
    "max_retry_after_s": "largest Retry-After honoured (default 120 s)",
    "timeout_s": "largest per-request timeout in seconds (caps the config's timeout_s, default 120)",
    "jitter_seed": "seed of the backoff jitter RNG",
    "rng": "a random.Random for the backoff jitter",
    "sleep": "async sleep function (tests)",
    "clock": "monotonic clock of the rate limiter (tests; goes with sleep)",
    "max_tokens_field": "openai: max_tokens or max_completion_tokens",
    "stream_usage": "openai: ask for usage in streams (default True)",
    "default_max_tokens": "anthropic: max_tokens when the config has none (default 4096)",
}


def parse_spec(spec: str) -> tuple[str, str]:
    """``"openai:gpt-4o"`` → ``("openai", "gpt-4o")``."""
    provider, sep, model = spec.partition(":")
    if not sep or not model:
        raise SpecError(
            f"model spec {spec!r}: expected PROVIDER:MODEL with PROVIDER one of "
            f"{', '.join(PROVIDERS)} (e.g. openai:gpt-4o-mini)"
        )
    if provider not in PROVIDERS:
        raise SpecError(
            f"model spec {spec!r}: unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}"
        )
    return provider, model


def _cache_of(cache: Any, cache_path: Any) -> ResponseCache | None:
    if isinstance(cache, ResponseCache):
        return cache
    if isinstance(cache, (str, Path)):
        return open_cache(cache)
    if cache_path is not None and cache is not False:
        return open_cache(cache_path)
    if cache is True:
        return open_cache()
    if cache in (None, False):
        return None
    raise SpecError(f"cache option: expected a bool, a path or a ResponseCache, not {cache!r}")


def _pricing_of(pricing: Any) -> Pricing | PricingTable | None:
    if pricing is None or isinstance(pricing, (Pricing, PricingTable)):
        return pricing
    if isinstance(pricing, (str, Path)):
        return PricingTable.load(pricing)
    raise SpecError(f"pricing option: expected a Pricing, PricingTable or path, not {pricing!r}")


def _positive(spec: str, name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise SpecError(f"model {spec!r}: option {name} must be a positive number of seconds, not {value!r}")
    return float(value)


#: Numeric options: (smallest value, whether it must be an integer, strictly above it).
_NUMBERS: dict[str, tuple[float, bool, bool]] = {
    "max_retries": (0, True, False),
    "backoff_base_s": (0, False, False),
    "backoff_max_s": (0, False, False),
    "max_retry_after_s": (0, False, False),
    "max_concurrency": (0, True, True),
    "rpm": (0, False, True),
    "tpm": (0, False, True),
}


def _check_numbers(spec: str, options: dict[str, Any]) -> None:
    """Numeric options must be numbers in range (a SpecError naming the option, not a
    TypeError in the middle of a trial)."""
    for name, (low, integer, strict) in _NUMBERS.items():
        value = options.get(name)
        if value is None:
            continue
        kind = int if integer else (int, float)
        ok = isinstance(value, kind) and not isinstance(value, bool)
        ok = ok and (value > low if strict else value >= low)
        if not ok:
            what = "an integer" if integer else "a number"
            bound = f"{'above' if strict else 'at least'} {low:g}"
            raise SpecError(f"model {spec!r}: option {name} must be {what} {bound}, not {value!r}")


def get_model(spec: str, **options: Any) -> LLMModel:
    """Build the chat model of ``spec`` (``openai:MODEL``, ``anthropic:MODEL``,
    ``litellm:MODEL``). Options are listed in ``docs/models.md``; unknown ones raise
    :class:`SpecError`. Nothing is contacted until the first call."""
    provider_name, model = parse_spec(spec)
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise SpecError(
            f"model {spec!r}: unknown option {unknown[0]!r}; known: {', '.join(sorted(_OPTIONS))}"
        )
    o = options
    base_url, api_key = o.get("base_url"), o.get("api_key")
    provider: Any
    if provider_name == "openai":
        from .openai_provider import OpenAIProvider

        extra = {k: o[k] for k in ("max_tokens_field", "stream_usage") if k in o}
        provider = OpenAIProvider(model, base_url=base_url, api_key=api_key, **extra)
    elif provider_name == "anthropic":
        from .anthropic_provider import DEFAULT_MAX_TOKENS, AnthropicProvider

        provider = AnthropicProvider(
            model,
            base_url=base_url,
            api_key=api_key,
            default_max_tokens=o.get("default_max_tokens", DEFAULT_MAX_TOKENS),
        )
    else:
        from .litellm_provider import LiteLLMProvider

        provider = LiteLLMProvider(model, base_url=base_url, api_key=api_key)

    _check_numbers(spec, o)
    rng = o.get("rng") or random.Random(o.get("jitter_seed"))
    retry = RetryPolicy(rng=rng)
    for field, opt in (
        ("max_retries", "max_retries"),
        ("base_backoff_s", "backoff_base_s"),
        ("max_backoff_s", "backoff_max_s"),
        ("max_retry_after_s", "max_retry_after_s"),
        ("sleep", "sleep"),
    ):
        if opt in o:
            setattr(retry, field, o[opt])
    limits = LimitSettings(o.get("max_concurrency"), o.get("rpm"), o.get("tpm"))
    return LLMModel(
        provider,
        pricing=_pricing_of(o.get("pricing")),
        cache=_cache_of(o.get("cache"), o.get("cache_path")),
        cassette=o.get("cassette"),
        role=o.get("role"),
        limits=limits,
        retry=retry,
        clock=o.get("clock"),
        request_timeout_s=_positive(spec, "timeout_s", o.get("timeout_s")),
    )


_SHARED: dict[str, LLMModel] = {}


def shared_model(spec: str, **options: Any) -> LLMModel:
    """``get_model`` memoised per (spec, options) in this process, so the trials of a
    run share one client, cache and set of rate limits per model."""
    from assay.core.hashing import stable_hash

    key = stable_hash({"spec": spec, "options": {k: repr(v) for k, v in sorted(options.items())}})
    model = _SHARED.get(key)
    if model is None:
        model = _SHARED[key] = get_model(spec, **options)
    return model
