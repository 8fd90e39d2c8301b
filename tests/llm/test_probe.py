"""``assay.llm.probe`` against the loopback fake server: configured TTFT, token rate and
rate limit recovered within stated bounds; ceilings; errors by kind; availability."""

from __future__ import annotations

import statistics
import time
from typing import Any

import pytest
from tests.support.fake_llm_server import FakeLLMServer, Fault, LatencyProfile, Reply

from assay.llm import Pricing
from assay.llm.probe import ProbeConfig, ProbeConfigError, ProbeResult, run_probe

PRICE = Pricing(input_per_mtok=1.0, output_per_mtok=2.0)


def counting(request: dict[str, Any]) -> Reply:
    """Answers exactly ``max_tokens`` word tokens ("1 2 3 ..."), as a model told to count."""
    n = int(request.get("max_tokens") or 10)
    return Reply(text=" ".join(str(i) for i in range(1, n + 1)))


async def probe(server: FakeLLMServer, **fields: Any) -> ProbeResult:
    config = ProbeConfig.make(model="openai:fake", **fields)
    return await run_probe(config, base_url=server.openai_base_url, pricing=PRICE)


async def test_probe_recovers_ttft_token_rate_and_rate_limit() -> None:
    """Acceptance (issue 17): server at TTFT 200 ms ± 20, 50 tokens/s, 60 requests/minute.

    Bounds: TTFT p50 never below the median the server drew (uniform in [180, 220] ms from
    random.Random(1)) and no more than 10% above 200 ms once the loopback's own floor is
    taken off: the same probe against
    the same server with no latency, measured in this test (about 5 ms on a quiet machine,
    over 20 ms on a 2-core machine under three test workers, which put the raw p50 at 0.223
    once). The raw p50 stays within 25%. Output tokens/s p50 within 10% (the server paces
    tokens against the clock), the rate limit within 15%, and no more requests than the
    ceiling.
    The 60/min limit is enforced per 1-second window (one request per second), so it
    shows within seconds; 11-token answers (0.4 s) make concurrency 1 hit it already.
    Runtime about 6.5 s."""
    started = time.perf_counter()
    with FakeLLMServer(
        counting,
        latency=LatencyProfile(ttft_s=0.2, jitter_s=0.02, seed=1),
        tokens_per_s=50,
        rate_limit_rpm=60,
        rate_limit_window_s=1.0,
    ) as server:
        result = await probe(server, mode="ramp", max_tokens=11, step_s=5.0, max_requests=20)
        sent = server.request_count
        drawn = list(server.ttfts)
    elapsed = time.perf_counter() - started
    floor = await loopback_ttft()
    m, ramp = result.metrics, result.ramp
    assert ramp is not None and m.ttft_s is not None and m.output_tokens_per_s is not None
    # never earlier than served (the server's own draws: exact whatever the machine's load)
    assert m.ttft_s.p50.value >= statistics.median(drawn) - 0.005
    # no more than 10% late once the loopback's own floor is taken off; the floor is
    # measured apart, so it only bounds this side (a burst of load while it was measured
    # made it 33 ms against the 13 ms the probe paid, and a two-sided check failed)
    assert m.ttft_s.p50.value - floor <= 0.2 * 1.10, floor
    assert m.ttft_s.p50.value == pytest.approx(0.2, rel=0.25)
    assert m.output_tokens_per_s.p50.value == pytest.approx(50, rel=0.10)
    assert ramp.rate_limit_rpm == pytest.approx(60, rel=0.15)
    assert ramp.ended_by == "rate_limit" and ramp.first_429_concurrency == 1
    assert m.errors_by_kind == {"rate_limited": m.errors} and m.errors >= 3
    assert m.retry_after_s is not None and 0 < m.retry_after_s.max <= 1.0
    assert result.requests_sent == sent <= 20
    assert m.tokens_from_usage == m.ok and m.output_tokens == 11 * m.ok
    assert result.cost_usd is not None and result.cost_complete
    assert elapsed < 20


async def loopback_ttft() -> float:
    """The probe's p50 TTFT against the fake server with no latency: what the loopback,
    the server and the client add on this machine, now."""
    with FakeLLMServer(counting, latency=LatencyProfile(0.0, 0.0), tokens_per_s=50) as server:
        result = await probe(server, requests=15, max_tokens=3)
    assert result.metrics.ttft_s is not None
    return result.metrics.ttft_s.p50.value


@pytest.mark.slow
async def test_ramp_finds_where_429s_start() -> None:
    """Answers take ~0.4 s, so concurrency 1, 2, 4 offer ~150, 300, 600 requests/min
    against a limit of 420/min (7 per 1-second window): 429s start at 4, the served rate
    there estimates the limit (within 15%), and the clean levels serve their demand.
    Runtime about 6.5 s."""
    with FakeLLMServer(
        counting,
        latency=LatencyProfile(0.2, 0.0),
        tokens_per_s=50,
        rate_limit_rpm=420,
        rate_limit_window_s=1.0,
    ) as server:
        result = await probe(server, mode="ramp", max_tokens=11, step_s=2.0, max_requests=120)
    ramp = result.ramp
    assert ramp is not None
    assert [lv.concurrency for lv in ramp.levels] == [1, 2, 4]
    one, two, four = ramp.levels
    assert one.rate_limited == two.rate_limited == 0 and four.rate_limited > 0
    for level, demand in ((one, 150), (two, 300)):
        assert level.success_rpm == pytest.approx(demand, rel=0.15)
        assert level.demand_rpm == pytest.approx(demand, rel=0.15)
    assert ramp.first_429_concurrency == 4
    assert ramp.rate_limit_rpm == pytest.approx(420, rel=0.15)
    assert ramp.clean_rpm == two.success_rpm
    assert ramp.sustainable_tpm is not None and ramp.sustainable_rpm is not None
    assert ramp.sustainable_tpm > ramp.sustainable_rpm * 11  # input and output tokens


async def test_request_ceiling_stops_the_probe() -> None:
    with FakeLLMServer(counting) as server:
        result = await probe(server, requests=50, max_requests=5, max_tokens=3)
        assert server.request_count == 5
    assert result.stopped_by == "request_ceiling"
    assert result.requests_sent == 5 and result.metrics.requests == 4  # one warm-up
    assert result.stop_message is not None and "--max-requests" in result.stop_message


async def test_spend_ceiling_is_never_passed() -> None:
    price = Pricing(input_per_mtok=1000.0, output_per_mtok=1000.0)  # $0.001 a token
    config = ProbeConfig.make(model="openai:fake", requests=100, max_tokens=50, max_cost_usd=0.5)
    with FakeLLMServer(counting) as server:
        result = await run_probe(config, base_url=server.openai_base_url, pricing=price)
    assert result.stopped_by == "spend_ceiling"
    assert result.stop_message is not None and "--max-cost-usd" in result.stop_message
    # Each answer costs ~$0.07; a request is only sent while its worst case (every body
    # byte a token plus 50 output tokens, ~$0.2) still fits under the ceiling.
    assert result.cost_usd is not None and 0.5 - 0.25 < result.cost_usd <= 0.5
    assert 3 <= result.requests_sent < 100


async def test_unpriced_model_is_bounded_by_requests_and_says_so() -> None:
    config = ProbeConfig.make(model="openai:fake-unpriced", requests=3, max_tokens=3)
    with FakeLLMServer(counting) as server:
        result = await run_probe(config, base_url=server.openai_base_url)
    assert result.cost_usd is None and not result.priced
    assert any("--max-requests" in n for n in result.notes)


async def test_errors_by_kind_and_retry_after_is_respected() -> None:
    with FakeLLMServer(counting) as server:
        server.schedule(None, Fault("429", retry_after=0.3), "500", "drop")
        result = await probe(server, requests=6, max_tokens=3)
    m = result.metrics
    assert m.errors_by_kind == {"rate_limited": 1, "server_error": 1, "connection": 1}
    assert m.requests == 6 and m.ok == 3
    assert m.error_rate == pytest.approx(0.5) and m.error_rate_ci is not None
    counted = [s for s in result.samples if s.phase == "latency"]
    limited = next(i for i, s in enumerate(counted) if s.kind == "rate_limited")
    assert counted[limited].retry_after_s == pytest.approx(0.3)
    assert counted[limited + 1].at_s - counted[limited].at_s >= 0.3  # waited as asked


async def test_a_rejected_request_stops_the_probe() -> None:
    with FakeLLMServer(counting) as server:
        server.schedule("401")
        result = await probe(server, requests=10)
        assert server.request_count == 1
    assert result.stopped_by == "rejected" and "401" in (result.stop_message or "")


async def test_availability_lists_incidents() -> None:
    """10 checks 0.15 s apart (each takes a few ms, so they reach the server in order);
    checks 4-6 fail (503, dropped connection, 429): one incident from the 4th check to the
    7th. Runtime about 1.5 s."""
    with FakeLLMServer(counting) as server:
        server.schedule(None, None, None, "503", "drop", "429")
        result = await probe(server, mode="availability", interval_s=0.15, duration_s=1.5, max_tokens=2)
    a = result.availability
    assert a is not None and a.checks == 10 and a.up == 7
    assert a.uptime == pytest.approx(0.7) and a.uptime_ci is not None and a.uptime_ci[0] < 0.7
    (incident,) = a.incidents
    assert incident.failed_checks == 3
    assert incident.kinds == {"server_error": 1, "connection": 1, "rate_limited": 1}
    assert incident.started_at_s == pytest.approx(0.45, abs=0.1)
    assert incident.ended_at_s == pytest.approx(0.9, abs=0.1)
    assert a.downtime_s == pytest.approx(0.45, abs=0.1)


async def test_an_outage_at_the_end_is_an_open_incident() -> None:
    with FakeLLMServer(counting) as server:
        server.schedule(None, None, "503", "503")
        result = await probe(server, mode="availability", interval_s=0.15, duration_s=0.6, max_tokens=2)
    a = result.availability
    assert a is not None and a.checks == 4
    (incident,) = a.incidents
    assert incident.ended_at_s is None and incident.failed_checks == 2


async def test_usage_missing_counts_chunks_and_leaves_cost_unknown() -> None:
    with FakeLLMServer(counting, stream_usage="never", tokens_per_s=500) as server:
        result = await probe(server, requests=3, max_tokens=8)
    m = result.metrics
    assert m.ok == 3 and m.tokens_from_usage == 0
    assert m.output_tokens == 24  # one streamed chunk per word token
    assert result.cost_usd == 0 and not result.cost_complete
    assert any("no usage" in n for n in result.notes)


async def test_anthropic_endpoint_is_probed_too() -> None:
    """Bounds as in the OpenAI test above: TTFT never earlier than served and at most
    40 ms late once the loopback's floor is taken off; tokens paced at 50 a second over
    9-token answers (160 ms of streaming, so a 10 ms stall of the busy test machine moves
    the rate 6%, not the 25% it did at 200 a second, which failed a full run once). The
    200 ms TTFT keeps a rate taken over the whole answer (9 / 0.36 s) far outside."""
    with FakeLLMServer(counting, latency=LatencyProfile(0.2, 0.0), tokens_per_s=50) as server:
        config = ProbeConfig.make(model="anthropic:fake", requests=3, max_tokens=9)
        result = await run_probe(config, base_url=server.anthropic_base_url, pricing=PRICE)
    floor = await loopback_ttft()
    m = result.metrics
    assert m.ok == 3 and m.ttft_s is not None and m.output_tokens_per_s is not None
    assert m.ttft_s.p50.value >= 0.2 - 0.005
    assert m.ttft_s.p50.value - floor <= 0.2 + 0.04, floor
    assert m.output_tokens_per_s.p50.value == pytest.approx(50, rel=0.2)


def test_bad_settings_are_one_sentence_errors() -> None:
    with pytest.raises(ProbeConfigError, match="max_requests"):
        ProbeConfig.make(model="openai:x", max_requests=0)
    with pytest.raises(ProbeConfigError, match="ramp_start"):
        ProbeConfig.make(model="openai:x", ramp_start=8, max_concurrency=4)


async def test_model_options_the_probe_cannot_honour_are_refused() -> None:
    with pytest.raises(ProbeConfigError, match="cache"):
        await run_probe(ProbeConfig.make(model="openai:x"), cache=True)
