"""Model-like timing for the fake LLM server: a seeded time to first token and a
streamed token rate."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LatencyProfile:
    """Time to first token of every answer: uniform in ``ttft_s ± jitter_s``, drawn from a
    ``random.Random(seed)`` in the order requests arrive."""

    ttft_s: float
    jitter_s: float = 0.0
    seed: int = 0


_WORD_TOKEN = re.compile(r"\s*\S+|\s+")


def word_tokens(text: str) -> list[str]:
    """``"a bb c"`` → ``["a", " bb", " c"]``: the tokens streamed under ``tokens_per_s``."""
    return _WORD_TOKEN.findall(text)


class Pacer:
    """When the pieces of one answer go out: the first after the (sampled) time to first
    token, the next ones ``chunk_delay_s`` apart, or, under a token rate, at
    ``first + i / rate`` against the clock."""

    def __init__(self, wait: Any, first_delay_s: float, chunk_delay_s: float, rate: float | None):
        self._wait = wait
        self._first_delay = first_delay_s
        self._chunk_delay = chunk_delay_s
        self._rate = rate
        self._start: float | None = None
        self._sent = 0

    def first(self) -> None:
        self._wait(self._first_delay)
        self._start = time.perf_counter()

    def next(self) -> None:
        """Before every piece after the first."""
        self._sent += 1
        if self._rate is None or self._start is None:
            self._wait(self._chunk_delay)
            return
        self._wait(self._start + self._sent / self._rate - time.perf_counter())
