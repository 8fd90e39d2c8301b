"""A fake LLM endpoint for tests: OpenAI chat completions and Anthropic messages.

Standard library only, on 127.0.0.1 (port 0 = a free port), served from a thread::

    with FakeLLMServer(handler=lambda req: "hello") as server:
        os.environ["OPENAI_BASE_URL"] = server.openai_base_url      # http://127.0.0.1:P/v1
        os.environ["ANTHROPIC_BASE_URL"] = server.anthropic_base_url  # http://127.0.0.1:P
        ...
        assert server.request_count == 1

Endpoints: ``POST /v1/chat/completions`` (JSON or SSE when ``"stream": true``, usage in the
stream when ``stream_options.include_usage``), ``POST /v1/messages`` (JSON or SSE),
``GET /v1/models``. Answers come from ``handler(request_json)``, which returns a
:class:`Reply`, a ``str`` (text reply) or a ``dict`` of :class:`Reply` fields; the server
renders it in the wire format of the endpoint that was called. :func:`to_messages` turns
either request format back into assay messages, so a scripted "brain" can be written once.

Faults: ``server.schedule("429", None, "500", ...)`` applies one fault per request in
order (None = serve normally); ``fault_rate``/``fault_seed``/``fault_kinds`` inject faults
at random (seeded); ``server.down = True`` answers every request with 503. Kinds: ``429``
(with ``Retry-After``), any other status code (``500``, ``503``, ``400``, ...), ``slow``
(sleeps ``slow_s`` before answering, for client timeouts) and ``drop`` (closes the
connection without an answer). Counters: ``request_count`` (every HTTP request, faulted or
not), ``served``, ``faults``, ``requests`` (path + JSON of each), ``bodies`` (the raw
bytes of each body, as the client sent them) and ``headers`` (lower-cased, of each).

Model behaviour (for ``assay probe``): ``latency=LatencyProfile(ttft_s, jitter_s, seed)`` adds a
seeded time to first token, drawn uniformly in ``ttft_s ± jitter_s``, to every answer;
``tokens_per_s`` streams the text one word token at a time at that rate (scheduled against
the clock, so it does not drift; auto usage then counts the streamed tokens);
``rate_limit_rpm`` (with ``rate_limit_window_s``, default 60) admits at most
``rpm × window / 60`` requests in any sliding window and answers the rest 429 with
``Retry-After`` (whole seconds) and ``retry-after-ms`` (exact); ``admitted_at`` and
``rate_limited`` count them.

Local-server styles (vLLM, Ollama, llama.cpp): ``stream_usage`` says where streamed usage
goes: ``"requested"`` (default: a last chunk with no choices when
``stream_options.include_usage``, as OpenAI, vLLM and Ollama), ``"last_chunk"`` (that chunk
always), ``"finish_chunk"`` (always, on the chunk carrying ``finish_reason``, as llama.cpp's
server) or ``"never"`` (no usage, streamed or not). ``tool_call_style="whole"`` sends each
tool call in one delta (as Ollama); ``tool_call_index=False`` leaves ``index`` out of
tool-call deltas.

Run standalone (an echo server for manual tries): ``python -m tests.support.fake_llm_server``.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .fake_llm_pacing import LatencyProfile, Pacer, word_tokens
from .fake_llm_replies import (
    FakeToolCall,
    FakeUsage,
    Handler,
    Reply,
    anthropic_usage,
    args_text,
    coerce,
    echo,
    last_user_text,
    openai_usage,
    pieces,
    sequence,
    to_messages,
    usage_of,
)

__all__ = [
    "FakeLLMServer",
    "FakeToolCall",
    "FakeUsage",
    "Fault",
    "LatencyProfile",
    "Reply",
    "last_user_text",
    "sequence",
    "to_messages",
]


# -- the server -----------------------------------------------------------------------------


@dataclass
class Fault:
    kind: str  # "429" | another status code ("500", "400", ...) | "slow" | "drop"
    retry_after: float | None = None
    slow_s: float | None = None
    rate_limit: bool = False
    """A 429 of the server's rate limit: ``Retry-After`` in whole seconds plus an exact
    ``retry-after-ms``."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256
    owner: FakeLLMServer


class _RequestHandler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # silence the default logging
        pass

    # plumbing
    def _json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True

    def _sse_start(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _sse(self, data: Any, event: str | None = None) -> None:
        text = data if isinstance(data, str) else json.dumps(data)
        frame = (f"event: {event}\n" if event else "") + f"data: {text}\n\n"
        self.wfile.write(frame.encode())
        self.wfile.flush()

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_raw": raw.decode(errors="replace")}
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/chat/completions"):
            api = "openai"
        elif path.endswith("/messages"):
            api = "anthropic"
        else:
            owner._count(path, body, None, dict(self.headers.items()), raw)
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        fault = owner._count(path, body, api, dict(self.headers.items()), raw)
        try:
            if fault is not None and self._fault(fault, api):
                return
            try:
                reply = coerce(owner.handler(body))
            except Exception as exc:  # a broken handler is a test bug: answer 500 loudly
                owner.errors.append(f"{type(exc).__name__}: {exc}")
                self._json(500, self._error_body(api, "api_error", f"handler failed: {exc}"))
                return
            usage = owner._usage(body, reply)
            if api == "openai":
                self._openai(body, reply, usage)
            else:
                self._anthropic(body, reply, usage)
            owner._served()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout) or dropped the stream

    @staticmethod
    def _error_body(api: str, kind: str, message: str) -> dict[str, Any]:
        if api == "anthropic":
            return {"type": "error", "error": {"type": kind, "message": message}}
        return {"error": {"message": message, "type": kind, "code": None}}

    def _fault(self, fault: Fault, api: str) -> bool:
        """Apply ``fault``; True when the request is answered (or dropped) by it."""
        owner = self.server.owner
        if fault.kind == "429":
            headers = {}
            if fault.rate_limit and fault.retry_after is not None:
                headers["Retry-After"] = str(max(1, math.ceil(fault.retry_after)))
                headers["retry-after-ms"] = str(max(1, math.ceil(fault.retry_after * 1000)))
            elif fault.retry_after is not None:
                headers["Retry-After"] = f"{fault.retry_after:g}"
            kind = "rate_limit_error" if api == "anthropic" else "rate_limit_exceeded"
            self._json(429, self._error_body(api, kind, "rate limited (fake)"), headers)
        elif fault.kind.isdigit():
            status = int(fault.kind)
            kind = "api_error" if status >= 500 else "invalid_request_error"
            message = f"error {status} (fake)"
            if status == 401:  # as real endpoints do: quote the key back, masked
                key = (self.headers.get("authorization") or "").removeprefix("Bearer ")
                key = key or self.headers.get("x-api-key") or ""
                message = f"Incorrect API key provided: {key[:8]}{'*' * 20}{key[-4:]}"
            self._json(status, self._error_body(api, kind, message))
        elif fault.kind == "drop":
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(2)
        elif fault.kind == "slow":
            owner._stop.wait(fault.slow_s if fault.slow_s is not None else owner.slow_s)
            return False
        else:
            raise ValueError(f"unknown fault kind {fault.kind!r}")
        return True

    def _pause(self, seconds: float) -> None:
        if seconds > 0:
            self.server.owner._stop.wait(seconds)

    def _pacer(self, reply: Reply) -> Pacer:
        owner = self.server.owner
        first = reply.first_token_delay_s + owner._ttft()
        return Pacer(self._pause, first, reply.chunk_delay_s, owner.tokens_per_s)

    def _text_pieces(self, reply: Reply) -> list[str]:
        if self.server.owner.tokens_per_s is not None:
            return word_tokens(reply.text)
        return pieces(reply.text, reply.chunks)

    # OpenAI
    def _openai(self, req: dict[str, Any], reply: Reply, usage: FakeUsage | None) -> None:
        owner = self.server.owner
        cid = owner._next_id("chatcmpl")
        model = reply.model or req.get("model", "fake")
        calls = [(c, c.id or owner._next_id("call")) for c in reply.tool_calls]
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        pace = self._pacer(reply)
        style = owner.stream_usage
        if not req.get("stream"):
            pace.first()
            for _ in self._text_pieces(reply)[1:] if owner.tokens_per_s else ():
                pace.next()  # a token rate also paces a non-streamed answer
            message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
            if calls:
                message["tool_calls"] = [
                    {
                        "id": i,
                        "type": "function",
                        "function": {"name": c.name, "arguments": args_text(c)},
                    }
                    for c, i in calls
                ]
            body: dict[str, Any] = {
                "id": cid,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            }
            if usage is not None and style != "never":
                body["usage"] = openai_usage(usage)
            self._json(200, body)
            return

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }

        def call_delta(index: int, fields: dict[str, Any]) -> dict[str, Any]:
            return {"index": index, **fields} if owner.tool_call_index else fields

        self._sse_start()
        self._sse(chunk({"role": "assistant", "content": ""}))
        pace.first()
        first = True
        for piece in self._text_pieces(reply):
            if not first:
                pace.next()
            first = False
            self._sse(chunk({"content": piece}))
        for index, (c, call_id) in enumerate(calls):
            if not first:
                pace.next()
            first = False
            head = {"id": call_id, "type": "function", "function": {"name": c.name, "arguments": ""}}
            if owner.tool_call_style == "whole":
                head["function"]["arguments"] = args_text(c)
                self._sse(chunk({"tool_calls": [call_delta(index, head)]}))
                continue
            self._sse(chunk({"tool_calls": [call_delta(index, head)]}))
            for piece in pieces(args_text(c), reply.chunks):
                pace.next()
                delta = call_delta(index, {"function": {"arguments": piece}})
                self._sse(chunk({"tool_calls": [delta]}))
        last = chunk({}, finish)
        if usage is not None and style == "finish_chunk":
            last["usage"] = openai_usage(usage)
        self._sse(last)
        asked = (req.get("stream_options") or {}).get("include_usage")
        if usage is not None and (style == "last_chunk" or (style == "requested" and asked)):
            final = chunk({})
            final["choices"] = []
            final["usage"] = openai_usage(usage)
            self._sse(final)
        self._sse("[DONE]")

    # Anthropic
    def _anthropic(self, req: dict[str, Any], reply: Reply, usage: FakeUsage | None) -> None:
        owner = self.server.owner
        mid = owner._next_id("msg")
        model = reply.model or req.get("model", "fake")
        calls = [(c, c.id or owner._next_id("toolu")) for c in reply.tool_calls]
        stop = reply.finish_reason or ("tool_use" if calls else "end_turn")
        content: list[dict[str, Any]] = []
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for c, call_id in calls:
            if isinstance(c.arguments, str):
                try:
                    parsed: Any = json.loads(c.arguments)
                except json.JSONDecodeError:
                    parsed = c.arguments  # non-streaming cannot carry invalid JSON: send the string
            else:
                parsed = c.arguments
            content.append({"type": "tool_use", "id": call_id, "name": c.name, "input": parsed})
        if owner.stream_usage == "never":
            usage = None
        wire_usage = anthropic_usage(usage) if usage is not None else None
        pace = self._pacer(reply)
        if not req.get("stream"):
            pace.first()
            for _ in self._text_pieces(reply)[1:] if owner.tokens_per_s else ():
                pace.next()
            body: dict[str, Any] = {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
            }
            if wire_usage is not None:
                body["usage"] = wire_usage
            self._json(200, body)
            return
        self._sse_start()
        start_msg: dict[str, Any] = {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
        }
        if wire_usage is not None:
            start_msg["usage"] = {**wire_usage, "output_tokens": 1}
        self._sse({"type": "message_start", "message": start_msg}, "message_start")
        pace.first()
        index = 0
        if reply.text:
            self._sse(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
                "content_block_start",
            )
            for n, piece in enumerate(self._text_pieces(reply)):
                if n:
                    pace.next()
                self._sse(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                    "content_block_delta",
                )
            self._sse({"type": "content_block_stop", "index": index}, "content_block_stop")
            index += 1
        for c, call_id in calls:
            block = {"type": "tool_use", "id": call_id, "name": c.name, "input": {}}
            self._sse(
                {"type": "content_block_start", "index": index, "content_block": block},
                "content_block_start",
            )
            for piece in pieces(args_text(c), reply.chunks):
                pace.next()
                self._sse(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                    "content_block_delta",
                )
            self._sse({"type": "content_block_stop", "index": index}, "content_block_stop")
            index += 1
        delta_event: dict[str, Any] = {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
        }
        if usage is not None:
            delta_event["usage"] = {"output_tokens": usage.output_tokens}
        self._sse(delta_event, "message_delta")
        self._sse({"type": "message_stop"}, "message_stop")


class FakeLLMServer:
    """The fake endpoint; start with ``with`` or :meth:`start` / :meth:`stop`."""

    def __init__(
        self,
        handler: Handler | None = None,
        *,
        fault_rate: float = 0.0,
        fault_seed: int = 0,
        fault_kinds: Iterable[str | Fault] = ("429", "500", "slow"),
        slow_s: float = 2.0,
        retry_after: float | None = 0.01,
        latency: LatencyProfile | None = None,
        tokens_per_s: float | None = None,
        rate_limit_rpm: float | None = None,
        rate_limit_window_s: float = 60.0,
        stream_usage: str = "requested",
        tool_call_style: str = "split",
        tool_call_index: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        if stream_usage not in ("requested", "last_chunk", "finish_chunk", "never"):
            raise ValueError(f"stream_usage {stream_usage!r}: requested, last_chunk, finish_chunk or never")
        if tool_call_style not in ("split", "whole"):
            raise ValueError(f"tool_call_style {tool_call_style!r}: split or whole")
        if tokens_per_s is not None and tokens_per_s <= 0:
            raise ValueError("tokens_per_s must be positive")
        self.latency = latency
        self._latency_rng = random.Random(latency.seed if latency else 0)
        self.tokens_per_s = tokens_per_s
        self.stream_usage = stream_usage
        self.tool_call_style = tool_call_style
        self.tool_call_index = tool_call_index
        self.rate_limit_window_s = rate_limit_window_s
        self.rate_limit_rpm = rate_limit_rpm
        self._window_limit = 0
        if rate_limit_rpm is not None:
            self._window_limit = max(1, math.floor(rate_limit_rpm * rate_limit_window_s / 60.0 + 1e-9))
        self._window: deque[float] = deque()
        self.admitted_at: list[float] = []
        """``time.monotonic()`` of every request the rate limit let through."""
        self.rate_limited = 0
        self.ttfts: list[float] = []
        """The sampled times to first token, in the order they were drawn."""
        self.handler: Handler = handler or echo
        self.fault_rate = fault_rate
        self.fault_kinds = [k if isinstance(k, Fault) else Fault(k) for k in fault_kinds]
        self.slow_s = slow_s
        self.retry_after = retry_after
        self.down = False
        self._rng = random.Random(fault_seed)
        self._schedule: deque[Fault | None] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ids: dict[str, int] = {}
        self.request_count = 0
        self.served = 0
        self.faults: list[str] = []
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.bodies: list[bytes] = []
        """The raw bytes of each request body, as the client sent them."""
        self.headers: list[dict[str, str]] = []
        self.errors: list[str] = []
        self._httpd = _Server((host, port), _RequestHandler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    # lifecycle
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (the Anthropic SDK's base URL)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (the OpenAI SDK's base URL, ``OPENAI_BASE_URL``)."""
        return f"{self.base_url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    def start(self) -> FakeLLMServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # faults
    def schedule(self, *faults: str | Fault | None) -> None:
        """Queue one fault per coming request (None = serve that request normally)."""
        with self._lock:
            for f in faults:
                self._schedule.append(Fault(f) if isinstance(f, str) else f)

    def reset_counters(self) -> None:
        with self._lock:
            self.request_count = 0
            self.served = 0
            self.faults.clear()
            self.requests.clear()
            self.bodies.clear()
            self.headers.clear()
            self.admitted_at.clear()
            self.rate_limited = 0
            self.ttfts.clear()

    # called by the request handler
    def _count(
        self, path: str, body: dict[str, Any], api: str | None, headers: dict[str, str], raw: bytes = b""
    ) -> Fault | None:
        with self._lock:
            self.request_count += 1
            self.requests.append((path, body))
            self.bodies.append(raw)
            self.headers.append({k.lower(): v for k, v in headers.items()})
            if api is None:
                return None
            fault: Fault | None = None
            if self.down:
                fault = Fault("503")
            elif self._schedule:
                fault = self._schedule.popleft()
            elif self.fault_rate and self._rng.random() < self.fault_rate:
                fault = self._rng.choice(self.fault_kinds)
            if fault is None and self._window_limit:
                fault = self._admit(time.monotonic())
            if fault is not None:
                if fault.kind == "429" and fault.retry_after is None:
                    fault = Fault("429", self.retry_after, fault.slow_s)
                self.faults.append(fault.kind)
            return fault

    def _admit(self, now: float) -> Fault | None:
        """The sliding-window rate limit (called under the lock): None, or the 429."""
        window = self._window
        while window and window[0] <= now - self.rate_limit_window_s:
            window.popleft()
        if len(window) >= self._window_limit:
            self.rate_limited += 1
            return Fault("429", window[0] + self.rate_limit_window_s - now, rate_limit=True)
        window.append(now)
        self.admitted_at.append(now)
        return None

    def _ttft(self) -> float:
        """The time to first token of the next answer (0 without a latency profile)."""
        if self.latency is None:
            return 0.0
        with self._lock:
            lat = self.latency
            value = max(0.0, self._latency_rng.uniform(lat.ttft_s - lat.jitter_s, lat.ttft_s + lat.jitter_s))
            self.ttfts.append(value)
        return value

    def _usage(self, request: dict[str, Any], reply: Reply) -> FakeUsage | None:
        usage = usage_of(request, reply)
        if usage is not None and self.tokens_per_s is not None and reply.usage == "auto":
            streamed = len(word_tokens(reply.text)) + sum(
                len(pieces(args_text(c), reply.chunks)) for c in reply.tool_calls
            )
            usage = FakeUsage(usage.input_tokens, max(1, streamed))
        return usage

    def _served(self) -> None:
        with self._lock:
            self.served += 1

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            n = self._ids[prefix] = self._ids.get(prefix, 0) + 1
        return f"{prefix}_{n:04d}"


def main() -> None:  # pragma: no cover - manual use
    import argparse

    parser = argparse.ArgumentParser(description="Run the fake LLM server (echo handler).")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with FakeLLMServer(port=args.port) as server:
        print(f"OPENAI_BASE_URL={server.openai_base_url}", flush=True)
        print(f"ANTHROPIC_BASE_URL={server.anthropic_base_url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":  # pragma: no cover
    main()
