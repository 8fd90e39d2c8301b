"""What keeps the viewer a local tool: it answers only the host names it serves under
(no DNS rebinding: a page of another site that resolves its own name to 127.0.0.1 gets
400), and it refuses state-changing requests from other origins (no CSRF: 403).

- **Trusted hosts.** The ``Host`` header must name ``127.0.0.1``, ``localhost`` or
  ``::1``, or the address given with ``--host`` (binding every interface, ``0.0.0.0``
  or ``::``, also trusts this machine's own names and addresses).
- **Same origin.** A ``POST`` (any method but GET, HEAD, OPTIONS) whose ``Origin``
  (else ``Referer``) is another origin is refused; one with neither header must carry
  the app's token in ``X-CSRF-Token``. Forms also carry the token (``csrf_token``), which
  their handlers check with :func:`check_token`.
"""

from __future__ import annotations

import contextlib
import hmac
import secrets
import socket
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from fastapi import HTTPException, Request

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
TOKEN_HEADER = "x-csrf-token"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def host_name(host: str) -> str:
    """The name part of a ``Host`` header: ``[::1]:8000`` -> ``::1``, ``A:80`` -> ``a``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    if host.count(":") == 1:
        return host.split(":", 1)[0]
    return host


def trusted_hosts(bind: str | None = None, extra: Iterable[str] = ()) -> frozenset[str]:
    """The host names the viewer answers to when it listens on ``bind``."""
    names = {*LOCAL_HOSTS, *(host_name(h) for h in extra)}
    if bind:
        names.add(bind.strip().strip("[]").lower())
    if bind in ("0.0.0.0", "::", "[::]"):
        names |= _own_names()
    return frozenset(n for n in names if n)


def _own_names() -> set[str]:
    """This machine's host names and addresses (for a viewer on every interface)."""
    names: set[str] = set()
    for name in (socket.gethostname(), socket.getfqdn()):
        names.add(name.lower())
        with contextlib.suppress(OSError):
            names |= {str(info[4][0]).lower() for info in socket.getaddrinfo(name, None)}
    return names


def new_token() -> str:
    return secrets.token_urlsafe(32)


def check_token(request: Request, given: str | None) -> None:
    """Refuse (403) a form whose ``csrf_token`` is not this app's."""
    expected: str = request.app.state.csrf_token
    if not given or not hmac.compare_digest(given, expected):
        raise HTTPException(403, "the form's CSRF token is missing or wrong: reload the page and try again")


def _same_origin(source: str, host: str) -> bool:
    if source == "null":
        return False
    parts = urlsplit(source)
    return bool(parts.netloc) and parts.netloc.lower() == host.strip().lower()


class HostAndOriginGuard:
    """ASGI middleware: 400 for an untrusted ``Host``, 403 for a cross-origin write."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str], token: Callable[[], str]):
        self.app = app
        self.allowed = frozenset(h.lower() for h in allowed_hosts)
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan (the viewer serves no websockets)
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        if host_name(host) not in self.allowed:
            await _refuse(
                send, 400, f"invalid Host header {host!r}: the viewer answers only to its own address"
            )
            return
        if scope.get("method", "GET") not in SAFE_METHODS:
            problem = self._cross_origin(headers, host)
            if problem is not None:
                await _refuse(send, 403, problem)
                return
        await self.app(scope, receive, send)

    def _cross_origin(self, headers: dict[str, str], host: str) -> str | None:
        source = headers.get("origin") or headers.get("referer")
        if source is not None:
            if _same_origin(source, host):
                return None
            return f"cross-origin request refused (from {source!r})"
        given = headers.get(TOKEN_HEADER, "")
        if given and hmac.compare_digest(given, self.token()):
            return None
        return "request refused: no Origin or Referer header and no X-CSRF-Token"


async def _refuse(send: Send, status: int, text: str) -> None:
    body = text.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
