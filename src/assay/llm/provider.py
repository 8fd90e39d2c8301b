"""The provider adapter protocol and helpers shared by the adapters."""

from __future__ import annotations

import asyncio
import functools
import inspect
import ssl
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

from assay.core.messages import Message, ToolSpec

from .types import GenerateConfig, RawResult


class Provider(Protocol):
    """Speaks one wire format. ``build_request`` is pure (its output is hashed for the
    cache and cassettes); ``send`` does one HTTP request, no retries, and raises the SDK's
    own exceptions (classified by :func:`assay.llm.retry.classify`)."""

    name: str
    model: str
    endpoint: str

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], config: GenerateConfig
    ) -> dict[str, Any]: ...

    async def send(self, request: dict[str, Any], *, stream: bool, timeout: float | None) -> RawResult: ...

    async def aclose(self) -> None: ...


StreamObserver = Callable[[float], None]
"""Called with the seconds since the request was sent, once per stream chunk that
carried generated tokens (text, reasoning or tool-call pieces)."""

_stream_observer: ContextVar[StreamObserver | None] = ContextVar("assay_llm_stream_observer", default=None)


@contextmanager
def observe_stream(callback: StreamObserver) -> Iterator[None]:
    """Within the block (and the tasks it starts), streaming adapters report the arrival
    time of every token-carrying chunk to ``callback``: the probe's inter-token timing."""
    token = _stream_observer.set(callback)
    try:
        yield
    finally:
        _stream_observer.reset(token)


def stream_observer() -> StreamObserver | None:
    """The observer installed by :func:`observe_stream`, if any."""
    return _stream_observer.get()


class StreamAccumulator(Protocol):
    """Collects a provider's stream chunks into one :class:`RawResult`."""

    def add(self, chunk: dict[str, Any]) -> bool:
        """Take one chunk; True when it carried generated tokens."""
        ...

    def result(self, ttft_s: float | None) -> RawResult: ...


async def read_stream(stream: Any, acc: StreamAccumulator, t0: float) -> RawResult:
    """Feed every chunk of an SDK's async ``stream`` to ``acc``, timing the first
    token-carrying chunk (TTFT, seconds since ``t0``) and reporting each such chunk to the
    observer of :func:`observe_stream`; the stream is closed whatever happens."""
    ttft: float | None = None
    observe = stream_observer()
    try:
        async for chunk in stream:
            if acc.add(as_dict(chunk)):
                at = time.perf_counter() - t0
                ttft = at if ttft is None else ttft
                if observe is not None:
                    observe(at)
    finally:
        close = getattr(stream, "close", None) or getattr(stream, "aclose", None)
        if close is not None:
            closed = close()
            if inspect.isawaitable(closed):
                await closed
    return acc.result(ttft)


def as_dict(obj: Any) -> dict[str, Any]:
    """A response object of any SDK (pydantic model, dict-like) as a plain dict."""
    if isinstance(obj, dict):
        return obj
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        try:
            return dict(dump(warnings=False))
        except TypeError:  # a model_dump without the pydantic v2 signature
            return dict(dump())
    to_dict = getattr(obj, "dict", None)
    if callable(to_dict):
        return dict(to_dict())
    return dict(vars(obj))


def split_known(func: Callable[..., Any], body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a request body into the keyword arguments ``func`` accepts and the rest
    (sent as ``extra_body``)."""
    params = set(inspect.signature(func).parameters)
    known = {k: v for k, v in body.items() if k in params}
    extra = {k: v for k, v in body.items() if k not in params}
    return known, extra


@functools.lru_cache(maxsize=1)
def shared_ssl_context() -> ssl.SSLContext:
    """The TLS context every SDK client of this process uses: httpx's default (certifi's
    certificates, or those ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` name when the first
    client is made), built once. Each client built its own, 20-25 ms apiece, per event
    loop and per model of a run (agent, user, judges)."""
    import httpx

    return httpx.create_ssl_context()


class PerLoopClients:
    """One SDK client per running event loop: an httpx client must not cross loops."""

    def __init__(self, factory: Callable[[], Any]):
        self._factory = factory
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def get(self) -> Any:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._factory()
        return client

    async def aclose(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        client = self._clients.pop(loop, None)
        close = getattr(client, "close", None)
        if close is not None:
            result = close()
            if inspect.isawaitable(result):
                await result
