"""Fixtures of the chat-layer tests: a fake server, no real sleeping, a clean env."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from tests.support.fake_llm_server import FakeLLMServer

_ENV = (
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_CUSTOM_HEADERS",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ASSAY_PRICING",
    "LITELLM_API_BASE",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as s:
        yield s


class Sleeps:
    """An injectable async sleep that records the delays and does not wait, and the
    matching clock (real monotonic time plus the time slept)."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(0)

    def clock(self) -> float:
        return time.monotonic() + sum(self.delays)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()
