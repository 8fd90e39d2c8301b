"""Retries, backoff, Retry-After, timeouts, dead endpoints and rate limits."""

from __future__ import annotations

import asyncio
import random
import threading

import pytest
from tests.support.fake_llm_server import FakeLLMServer, Fault, Reply

from assay.core.messages import Message
from assay.errors import HarnessError
from assay.llm import (
    GenerateConfig,
    Meter,
    ModelRequestRejected,
    ModelUnavailable,
    RetryPolicy,
    TokenBucket,
    get_model,
    parse_retry_after,
    use_meter,
)

MSG = [Message("user", "hello")]


def fast_model(server: FakeLLMServer, sleeps, provider: str = "openai", **options):
    url = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    options.setdefault("jitter_seed", 1)
    return get_model(f"{provider}:m", base_url=url, sleep=sleeps, **options)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_429_retry_after_is_honoured(server: FakeLLMServer, sleeps, provider: str) -> None:
    server.schedule(Fault("429", retry_after=7), Fault("429", retry_after=3))
    meter = Meter()
    with use_meter(meter):
        c = await fast_model(server, sleeps, provider).complete(MSG, [], GenerateConfig())
    assert c.text == "echo: hello"
    assert sleeps.delays == [7.0, 3.0]  # exactly what the server asked for
    assert c.retries == 2 and server.request_count == 3
    assert meter.records[0].retries == 2 and meter.totals().retries == 2


async def test_500_backoff_is_exponential_with_seeded_jitter(server: FakeLLMServer, sleeps) -> None:
    server.schedule("500", "503", "500")
    c = await fast_model(server, sleeps, backoff_base_s=1.0).complete(MSG, [], GenerateConfig())
    assert c.retries == 3
    # retry n waits in [d/2, d] with d = 2**n
    for n, delay in enumerate(sleeps.delays):
        assert 2**n / 2 <= delay <= 2**n
    again = RetryPolicy(base_backoff_s=1.0, rng=random.Random(1))
    assert sleeps.delays == [again.delay(n, None) for n in range(3)]


async def test_timeouts_and_dropped_connections_are_retried(server: FakeLLMServer, sleeps) -> None:
    server.schedule(Fault("slow", slow_s=2.0), "drop")
    model = fast_model(server, sleeps)
    c = await model.complete(MSG, [], GenerateConfig(timeout_s=0.2))
    assert c.text == "echo: hello" and c.retries == 2
    assert server.faults == ["slow", "drop"] and server.request_count == 3


async def test_endpoint_down_raises_model_unavailable(server: FakeLLMServer, sleeps) -> None:
    server.down = True
    meter = Meter()
    with use_meter(meter), pytest.raises(ModelUnavailable) as exc:
        await fast_model(server, sleeps, max_retries=3).complete(MSG, [], GenerateConfig())
    err = exc.value
    assert isinstance(err, HarnessError) and not isinstance(err, ModelRequestRejected)
    assert err.attempts == 4 and err.status_code == 503
    assert server.request_count == 4 and len(sleeps.delays) == 3
    (rec,) = meter.records
    assert rec.error is not None and rec.retries == 3 and rec.usage is None and rec.cost_usd is None
    assert meter.totals().errors == 1


async def test_connection_refused_raises_model_unavailable(sleeps) -> None:
    with FakeLLMServer() as s:
        url = s.openai_base_url
    model = get_model("openai:m", base_url=url, sleep=sleeps, max_retries=2)
    with pytest.raises(ModelUnavailable, match="gave up after 3 attempt"):
        await model.complete(MSG, [], GenerateConfig(timeout_s=2))


async def test_client_errors_are_not_retried(server: FakeLLMServer, sleeps) -> None:
    server.schedule("400")
    meter = Meter()
    with use_meter(meter), pytest.raises(ModelRequestRejected) as exc:
        await fast_model(server, sleeps).complete(MSG, [], GenerateConfig())
    assert exc.value.status_code == 400 and exc.value.attempts == 1
    assert isinstance(exc.value, ModelUnavailable)
    assert sleeps.delays == [] and server.request_count == 1
    assert meter.records[0].error is not None


async def test_twenty_percent_transient_failures_all_succeed(sleeps) -> None:
    with FakeLLMServer(fault_rate=0.2, fault_seed=3, fault_kinds=["429", "500", "drop"]) as server:
        model = fast_model(server, sleeps, max_retries=6)
        meter = Meter()
        # No timing in the faults: with a "slow" fault and a short timeout, an answer merely
        # slow on a loaded machine was retried too (31 retries for 11 faults once, under
        # xdist); the slow fault's timeout and retry are pinned by the scheduled test above.
        config = GenerateConfig(timeout_s=10.0)
        with use_meter(meter):
            results = await asyncio.gather(
                *(model.complete([Message("user", f"q{i}")], [], config) for i in range(40))
            )
    assert [r.text for r in results] == [f"echo: q{i}" for i in range(40)]
    totals = meter.totals()
    assert totals.errors == 0 and totals.calls == 40
    assert len(server.faults) > 0
    assert totals.retries == len(server.faults) == sum(r.retries for r in results)
    assert server.request_count == 40 + len(server.faults)
    assert set(server.faults) == {"429", "500", "drop"}


async def test_concurrency_limit(server: FakeLLMServer) -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def handler(req):
        import time

        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return Reply(text="ok")

    server.handler = handler
    model = get_model("openai:m", base_url=server.openai_base_url, max_concurrency=2)
    await asyncio.gather(*(model.complete([Message("user", str(i))], [], GenerateConfig()) for i in range(6)))
    assert state["peak"] == 2


async def test_token_bucket_waits_for_refill() -> None:
    clock = {"t": 0.0}
    waits: list[float] = []

    async def sleep(s: float) -> None:
        waits.append(s)
        clock["t"] += s

    bucket = TokenBucket(60, 60.0, clock=lambda: clock["t"], sleep=sleep)  # 1 unit / s
    for _ in range(60):
        assert await bucket.acquire(1) == 0.0
    assert await bucket.acquire(1) == pytest.approx(1.0)
    bucket.debit(10)  # usage was bigger than estimated
    assert await bucket.acquire(5) == pytest.approx(15.0)
    assert waits == pytest.approx([1.0, 15.0])


async def test_rpm_limit_through_the_model(server: FakeLLMServer, sleeps) -> None:
    model = fast_model(server, sleeps, rpm=2, clock=sleeps.clock)
    for i in range(3):
        await model.complete([Message("user", str(i))], [], GenerateConfig())
    assert len(sleeps.delays) == 1 and 25 < sleeps.delays[0] <= 30  # waited for the 3rd slot


def test_parse_retry_after() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == 10.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    assert RetryPolicy(max_retry_after_s=5).delay(0, 600) == 5
