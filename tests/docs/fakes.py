"""Loopback stand-ins for what the docs' commands talk to: a model endpoint (the tests' fake
LLM server with a brain that also answers judge prompts) and an OTLP/HTTP trace collector."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from assay.graders import judge_prompt, pairwise
from tests.support.fake_llm_replies import Reply, to_messages
from tests.support.scripted_brain import brain

_DIMENSION = re.compile(r'^\s*"(?P<name>[^"]+)": \{"score": (?P<allowed>.+?) \| "unknown"', re.M)
_RESPONSE = re.compile(r"<<<(UNTRUSTED-[0-9A-F]+) response (?P<n>[12])>>>\n(?P<text>.*?)\n<<<END \1>>>", re.S)


def judge_reply(system: str) -> str:
    """A rubric judge that gives every dimension its first (best) level and passes."""
    dims = {}
    for m in _DIMENSION.finditer(system):
        best = json.loads(m.group("allowed").split(" | ")[0])
        dims[m.group("name")] = {"score": best, "reason": "supported by the evidence"}
    return json.dumps({"dimensions": dims, "verdict": "pass", "reason": "meets the rubric"})


def pairwise_reply(text: str) -> str:
    """A pairwise judge that prefers the longer response, whatever its position."""
    found = {m.group("n"): m.group("text") for m in _RESPONSE.finditer(text)}
    one, two = len(found.get("1", "")), len(found.get("2", ""))
    winner = "1" if one > two else "2" if two > one else "tie"
    return json.dumps({"winner": winner, "reason": "more complete"})


def docs_brain(request: dict[str, Any]) -> Reply | str:
    """Judges (rubric and pairwise) answered here; agents and users by the scripted brain."""
    messages = to_messages(request)
    system = messages[0].content if messages and messages[0].role == "system" else ""
    if system.startswith(judge_prompt.SYSTEM.split("\n", 1)[0]):
        return judge_reply(system)
    if system.startswith(pairwise.SYSTEM.split("\n", 1)[0]):
        return pairwise_reply(messages[-1].content)
    return brain(request)


class TraceSink:
    """An OTLP/HTTP collector on 127.0.0.1 that accepts every POST and counts them."""

    def __init__(self) -> None:
        sink = self
        self.posts: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                sink.posts.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> TraceSink:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
