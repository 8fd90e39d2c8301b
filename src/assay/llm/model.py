"""``LLMModel``: a provider adapter plus pricing, cache, cassettes, limits, retries and
metering — the :class:`~assay.llm.ChatModel` that ``get_model`` returns."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from assay.core.hashing import canonical_json, stable_hash
from assay.core.messages import Message, ToolSpec

from .cache import ResponseCache
from .cassette import Cassette, current_cassette
from .errors import ModelRequestRejected, ModelUnavailable
from .limits import Clock, Limiter, LimitSettings, shared_limiter
from .media import keyed_request
from .meter import CallRecord, CallSource, current_meter, current_role
from .pricing import Pricing, PricingTable, default_pricing
from .provider import Provider
from .retry import RetryPolicy, classify
from .types import Completion, GenerateConfig, RawResult


def request_hash(provider: str, model: str, request: Any, config: GenerateConfig) -> str:
    """Identity of a request, endpoint excluded (cassettes replay on another endpoint).
    ``request`` is the keyed request (:func:`~assay.llm.media.keyed_request`): binary
    parts count by their content hash."""
    return stable_hash(
        {"provider": provider, "model": model, "request": request, "sampling": config.sampling()},
        32,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class _Prompt:
    """What a call's prompt snapshot is made of: its system prompt and tool definitions."""

    system: str | None
    tools: tuple[ToolSpec, ...]


class LLMModel:
    """A chat model behind a :class:`~assay.llm.provider.Provider`.

    Order of service for each call: cassette replay (no request) → cache hit (no
    request) → the endpoint, within the concurrency / rate limits, retried with backoff
    on 429, 5xx, timeouts and connection errors. Every call, failed or not, leaves a
    :class:`CallRecord` in the current meter; a call still failing raises
    :class:`ModelUnavailable`."""

    def __init__(
        self,
        provider: Provider,
        *,
        pricing: Pricing | PricingTable | None = None,
        cache: ResponseCache | None = None,
        cassette: Cassette | None = None,
        role: str | None = None,
        limits: LimitSettings | None = None,
        retry: RetryPolicy | None = None,
        limiter: Limiter | None = None,
        clock: Clock | None = None,
    ):
        self.provider = provider
        self.cache = cache
        self.cassette = cassette
        self.role = role
        self.limits = limits or LimitSettings()
        self.retry = retry or RetryPolicy()
        self._limiter = limiter
        self._clock: Clock = clock or time.monotonic
        if isinstance(pricing, Pricing):
            self.pricing: Pricing | None = pricing
        else:
            self.pricing = (pricing or default_pricing()).lookup(provider.model)

    @property
    def model(self) -> str:
        return self.provider.model

    @property
    def spec(self) -> str:
        return f"{self.provider.name}:{self.provider.model}"

    @property
    def modalities(self) -> frozenset[str]:
        """What the provider's wire format can carry: ``text``, ``image``, ``audio``."""
        return frozenset(getattr(self.provider, "modalities", ("text",)))

    def __repr__(self) -> str:
        return f"LLMModel({self.spec!r}, endpoint={self.provider.endpoint!r})"

    def _limiter_now(self) -> Limiter:
        if self._limiter is None:
            key = (self.provider.name, self.provider.endpoint, self.provider.model)
            return shared_limiter(key, self.limits, clock=self._clock, sleep=self.retry.sleep)
        return self._limiter

    def price(self, raw: RawResult) -> float | None:
        if raw.usage is None or self.pricing is None:
            return None
        return self.pricing.cost(raw.usage)

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = (),
        config: GenerateConfig | None = None,
    ) -> Completion:
        config = config or GenerateConfig()
        request = self.provider.build_request(messages, tools or (), config)
        keyed = keyed_request(request, messages)  # binary parts by content hash
        rhash = request_hash(self.provider.name, self.provider.model, keyed, config)
        role = self.role or current_role()
        started = time.time()
        cassette = self.cassette or current_cassette()
        prompt = _Prompt(next((m.content for m in messages if m.role == "system"), None), tuple(tools or ()))

        if cassette is not None and cassette.mode == "replay":
            completion = cassette.take(rhash, self.spec)
            self._meter(role, completion, started, "cassette", prompt)
            return completion

        key = stable_hash({"request": rhash, "endpoint": self.provider.endpoint}, 32)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            completion = dataclasses.replace(hit, cached=True, retries=0)
            source: CallSource = "cache"
        else:
            completion = await self._call(request, rhash, config, role, started, prompt)
            source = "network"
            if self.cache is not None:
                self.cache.put(key, completion)
        if cassette is not None:
            cassette.record(rhash, completion, provider=self.provider.name, model=self.model, request=keyed)
        self._meter(role, completion, started, source, prompt)
        return completion

    async def _call(
        self,
        request: dict[str, Any],
        rhash: str,
        config: GenerateConfig,
        role: str,
        started: float,
        prompt: _Prompt | None = None,
    ) -> Completion:
        limiter = self._limiter_now()
        estimate = len(canonical_json(request)) // 4
        retries = 0
        while True:
            async with limiter.slot(estimate):
                t0 = time.perf_counter()
                try:
                    raw = await self.provider.send(request, stream=config.stream, timeout=config.timeout_s)
                    latency = time.perf_counter() - t0
                    failure = None
                except Exception as exc:
                    failure = classify(exc)
                    if failure is None:
                        self._fail(role, rhash, started, retries, f"{type(exc).__name__}: {exc}", prompt)
                        raise
                    if not failure.retryable or retries >= self.retry.max_retries:
                        attempts = retries + 1
                        self._fail(role, rhash, started, retries, failure.message, prompt)
                        kind = ModelUnavailable if failure.retryable else ModelRequestRejected
                        reason = "gave up" if failure.retryable else "request rejected"
                        raise kind(
                            f"{self.spec} at {self.provider.endpoint}: {reason} after "
                            f"{attempts} attempt(s): {failure.message}",
                            model=self.spec,
                            attempts=attempts,
                            status_code=failure.status_code,
                        ) from exc
            if failure is None:
                break
            await self.retry.sleep(self.retry.delay(retries, failure.retry_after))
            retries += 1
        limiter.settle(estimate, raw.usage.total_tokens if raw.usage else None)
        return Completion(
            text=raw.text,
            tool_calls=raw.tool_calls,
            finish_reason=raw.finish_reason,
            usage=raw.usage,
            model=raw.model or self.model,
            latency_s=raw.latency_s if raw.latency_s is not None else latency,
            ttft_s=raw.ttft_s,
            cost_usd=self.price(raw),
            request_hash=rhash,
            cached=False,
            retries=retries,
            malformed=raw.malformed,
        )

    def _meter(
        self, role: str, c: Completion, started: float, source: CallSource, prompt: _Prompt | None = None
    ) -> None:
        meter = current_meter()
        if meter is None:
            return
        meter.record(
            CallRecord(
                role=role,
                model=self.spec,
                usage=c.usage,
                cost_usd=c.cost_usd,
                latency_s=c.latency_s,
                ttft_s=c.ttft_s,
                retries=c.retries if source == "network" else 0,
                cached=source != "network",
                started_at=started,
                ended_at=time.time(),
                source=source,
                request_hash=c.request_hash,
                system_prompt=prompt.system if prompt else None,
                tools=prompt.tools if prompt else (),
            )
        )

    def _fail(
        self, role: str, rhash: str, started: float, retries: int, error: str, prompt: _Prompt | None = None
    ) -> None:
        meter = current_meter()
        if meter is None:
            return
        meter.record(
            CallRecord(
                role=role,
                model=self.spec,
                usage=None,
                cost_usd=None,
                latency_s=None,
                ttft_s=None,
                retries=retries,
                cached=False,
                started_at=started,
                ended_at=time.time(),
                error=error,
                request_hash=rhash,
                system_prompt=prompt.system if prompt else None,
                tools=prompt.tools if prompt else (),
            )
        )

    async def aclose(self) -> None:
        await self.provider.aclose()
