"""``LLMModel``: a provider adapter plus pricing, cache, cassettes, limits, retries and
metering — the :class:`~assay.llm.ChatModel` that ``get_model`` returns."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from assay.core.hashing import canonical_json, stable_hash
from assay.core.messages import Message, ToolSpec
from assay.errors import AssayError

from .cache import ResponseCache
from .cassette import Cassette, current_cassette
from .deadline import CallState, TrialClock, current_clock, tracked
from .errors import AdapterError, ModelRequestRejected, ModelUnavailable
from .limits import Clock, Limiter, LimitSettings, shared_limiter
from .media import keyed_request
from .meter import CallRecord, CallSource, current_meter, current_role
from .pricing import Pricing, PricingTable, default_pricing
from .provider import Provider
from .retry import Failure, RetryPolicy, classify
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
        request_timeout_s: float | None = None,
    ):
        self.provider = provider
        self.request_timeout_s = request_timeout_s
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
        waited = 0.0
        if hit is not None:
            completion = dataclasses.replace(hit, cached=True, retries=0)
            source: CallSource = "cache"
        else:
            completion, waited = await self._call(request, rhash, config, role, started, prompt)
            source = "network"
            if self.cache is not None:
                self.cache.put(key, completion)
        if cassette is not None:
            cassette.record(rhash, completion, provider=self.provider.name, model=self.model, request=keyed)
        self._meter(role, completion, started, source, prompt, waited)
        return completion

    async def _call(
        self,
        request: dict[str, Any],
        rhash: str,
        config: GenerateConfig,
        role: str,
        started: float,
        prompt: _Prompt | None = None,
    ) -> tuple[Completion, float]:
        clock = current_clock()
        with tracked(clock, self.spec, role) as state:
            return await self._attempts(request, rhash, config, role, started, prompt, clock, state)

    async def _attempts(
        self,
        request: dict[str, Any],
        rhash: str,
        config: GenerateConfig,
        role: str,
        started: float,
        prompt: _Prompt | None,
        clock: TrialClock | None,
        state: CallState,
    ) -> tuple[Completion, float]:
        """Send ``request`` until it is answered or the retry policy (or the trial's
        time) gives up. Time lost to the endpoint's failures and to the rate limits
        pushes the trial's deadline back (``clock``): it is the model's, not the agent's."""
        limiter = self._limiter_now()
        estimate = len(canonical_json(request)) // 4
        retries = 0
        waited = 0.0
        while True:
            queued = time.monotonic()
            state.state = "queued"
            async with limiter.slot(estimate):
                lost = time.monotonic() - queued
                if clock is not None:
                    clock.extend(lost)
                waited += lost
                timeout, capped = self._timeout(config, clock)
                state.state, state.attempts = "requesting", state.attempts + 1
                t0 = time.perf_counter()
                try:
                    if capped and timeout is not None and timeout <= 0:
                        raise TimeoutError("no time left in the trial for a request")
                    raw = await self.provider.send(request, stream=config.stream, timeout=timeout)
                    latency = time.perf_counter() - t0
                    failure = None
                except Exception as exc:
                    failure = classify(exc)
                    out_of_time = failure is not None and capped and failure.timed_out
                    if failure is None or not self._retryable(failure, retries) or out_of_time:
                        self._fail(role, rhash, started, retries, _said(exc, failure), prompt, waited)
                        final = self._final_error(exc, failure, retries, timeout if out_of_time else None)
                        if final is exc:
                            raise
                        raise final from exc
                    state.last_error = failure.message
            if failure is None:
                break
            # The failed attempt and the wait before the next are the endpoint's time.
            delay = self.retry.delay(retries, failure.retry_after)
            lost = (time.perf_counter() - t0) + delay
            waited += lost
            if clock is not None:
                clock.extend(lost)
            state.state = "waiting"
            await self.retry.sleep(delay)
            retries += 1
        limiter.settle(estimate, raw.usage.total_tokens if raw.usage else None)
        return self._completion(raw, rhash, retries, latency), waited

    def _retryable(self, failure: Failure, retries: int) -> bool:
        return failure.retryable and retries < self.retry.max_retries

    def _final_error(
        self, exc: Exception, failure: Failure | None, retries: int, out_of_time: float | None
    ) -> Exception:
        """What a request that will not be tried again raises: an unclassified exception
        is the adapter's (an AssayError as it is), a classified one the endpoint's."""
        if failure is not None:
            return self._give_up(failure, retries, out_of_time)
        if isinstance(exc, AssayError):
            return exc
        return AdapterError(
            f"{self.spec} at {self.provider.endpoint}: the {self.provider.name} adapter "
            f"failed on the endpoint's answer: {type(exc).__name__}: {exc}"
        )

    def _completion(self, raw: RawResult, rhash: str, retries: int, latency: float) -> Completion:
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

    def _timeout(self, config: GenerateConfig, clock: TrialClock | None) -> tuple[float | None, bool]:
        """A request's timeout: the config's (capped by the model's ``timeout_s`` option),
        and no later than the trial's remaining time (then the flag is True)."""
        configured = config.timeout_s
        if self.request_timeout_s is not None:
            configured = (
                self.request_timeout_s if configured is None else min(configured, self.request_timeout_s)
            )
        if clock is None:
            return configured, False
        return clock.request_timeout(configured)

    def _give_up(self, failure: Failure, retries: int, cut_at: float | None) -> ModelUnavailable:
        attempts = retries + 1
        where = f"{self.spec} at {self.provider.endpoint}"
        if cut_at is not None:
            return ModelUnavailable(
                f"{where}: no answer within the trial's remaining {cut_at:.3g} s "
                f"(attempt {attempts}; {failure.message})",
                model=self.spec,
                attempts=attempts,
            )
        kind = ModelUnavailable if failure.retryable else ModelRequestRejected
        reason = "gave up" if failure.retryable else "request rejected"
        return kind(
            f"{where}: {reason} after {attempts} attempt(s): {failure.message}",
            model=self.spec,
            attempts=attempts,
            status_code=failure.status_code,
        )

    def _meter(
        self,
        role: str,
        c: Completion,
        started: float,
        source: CallSource,
        prompt: _Prompt | None = None,
        waited: float = 0.0,
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
                waited_s=waited,
            )
        )

    def _fail(
        self,
        role: str,
        rhash: str,
        started: float,
        retries: int,
        error: str,
        prompt: _Prompt | None = None,
        waited: float = 0.0,
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
                waited_s=waited,
            )
        )

    async def aclose(self) -> None:
        await self.provider.aclose()


def _said(exc: Exception, failure: Failure | None) -> str:
    """The error as recorded with the failed call."""
    return failure.message if failure is not None else f"{type(exc).__name__}: {exc}"
