"""The fake server's model behaviour: seeded TTFT, token pacing, sliding-window rate limit."""

from __future__ import annotations

import http.client
import json
import time
from typing import Any

import pytest
from tests.support.fake_llm_server import FakeLLMServer, LatencyProfile, Reply, word_tokens


def post(server: FakeLLMServer, body: dict[str, Any]) -> tuple[int, dict[str, str], list[tuple[float, str]]]:
    """One raw request; the status, headers and (arrival time, line) of every SSE line."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    started = time.perf_counter()
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    lines = []
    while line := resp.fp.readline():
        if line.strip():
            lines.append((time.perf_counter() - started, line.decode().strip()))
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, lines


def ask(n: int, stream: bool = True) -> dict[str, Any]:
    return {
        "model": "m",
        "messages": [{"role": "user", "content": "count"}],
        "max_tokens": n,
        "stream": stream,
    }


def counting(request: dict[str, Any]) -> Reply:
    return Reply(text=" ".join(str(i) for i in range(1, int(request["max_tokens"]) + 1)))


def test_word_tokens() -> None:
    assert word_tokens("1 22  3") == ["1", " 22", "  3"]
    assert "".join(word_tokens(" a b ")) == " a b "


def test_token_rate_paces_the_stream_and_auto_usage_counts_tokens() -> None:
    with FakeLLMServer(counting, tokens_per_s=100) as server:
        status, _, lines = post(server, {**ask(41), "stream_options": {"include_usage": True}})
    assert status == 200
    content = [(t, json.loads(x[6:])) for t, x in lines if '"content": "' in x and '"content": ""' not in x]
    assert len(content) == 41
    span = content[-1][0] - content[0][0]
    assert span == pytest.approx(0.4, abs=0.06)  # 40 gaps at 10 ms, scheduled against the clock
    usage = json.loads(lines[-2][1][6:])["usage"]
    assert usage["completion_tokens"] == 41


def test_latency_profile_is_seeded_and_bounded() -> None:
    def draws(seed: int) -> list[float]:
        with FakeLLMServer(counting, latency=LatencyProfile(0.01, 0.005, seed)) as server:
            for _ in range(5):
                post(server, ask(1, stream=False))
            return list(server.ttfts)

    first = draws(3)
    assert first == draws(3) and first != draws(4)
    assert all(0.005 <= t <= 0.015 for t in first)


def test_rate_limit_is_a_sliding_window_with_exact_retry_after() -> None:
    with FakeLLMServer(counting, rate_limit_rpm=120, rate_limit_window_s=1.0) as server:
        assert post(server, ask(1, stream=False))[0] == 200
        assert post(server, ask(1, stream=False))[0] == 200
        status, headers, _ = post(server, ask(1, stream=False))
        assert status == 429
        wait_ms = int(headers["retry-after-ms"])
        assert 0 < wait_ms <= 1000 and headers["retry-after"] == "1"
        time.sleep(wait_ms / 1000 + 0.02)
        assert post(server, ask(1, stream=False))[0] == 200
        assert server.rate_limited == 1 and len(server.admitted_at) == 3
        assert server.faults == ["429"]


def test_bad_server_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="stream_usage"):
        FakeLLMServer(stream_usage="sometimes")
    with pytest.raises(ValueError, match="tokens_per_s"):
        FakeLLMServer(tokens_per_s=0)
